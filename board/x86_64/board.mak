# x86_64 PC, VM or appliance: the host build.
ARCH		= x86_64
MUSL_CC		= musl-gcc
CROSS_COMPILE	=
CPUFLAGS	=
RUNNER		=
SIZE_BUDGET	= 458752
# These features do not fit the size budget here with the rest (README,
# "Features and their cost"): make SERVE_TLS=1 ORCH=1 MCP=1 EVAL=1 PERSIST=1
# JOBS=1 builds them in; CI tests such a build too.
SERVE_TLS	= 0
ORCH		= 0
MCP		= 0
EVAL		= 0
PERSIST		= 0
JOBS		= 0
