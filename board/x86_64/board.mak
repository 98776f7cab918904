# x86_64 PC, VM or appliance: the host build.
ARCH		= x86_64
MUSL_CC		= musl-gcc
CROSS_COMPILE	=
CPUFLAGS	=
RUNNER		=
SIZE_BUDGET	= 458752
# HTTPS in serve and orchestration skills do not fit the size budget here
# with the rest (README, "Features and their cost"): make SERVE_TLS=1 ORCH=1
# builds them in; CI tests such a build too.
SERVE_TLS	= 0
ORCH		= 0
# Nor does the MCP client (make MCP=1).
MCP		= 0
# evals and the response cache do not fit the size budget either: make EVAL=1
EVAL		= 0
# The job board (skillbox jobs) does not fit: make JOBS=1.
JOBS		= 0
