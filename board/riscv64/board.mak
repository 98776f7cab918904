# RISC-V 64 (RV64GC, lp64d). Debian 12 has no musl for riscv64: tools/setup
# builds Debian's musl source package into $(SKILLBOX_TOOLS).
ARCH		= riscv64
MUSL_CC		= $(SKILLBOX_TOOLS)/riscv64-musl/bin/musl-gcc
CROSS_COMPILE	= riscv64-linux-gnu-
CPUFLAGS	=
RUNNER		= qemu-riscv64-static
SIZE_BUDGET	= 458752
# evals and the response cache (musl's regex alone is about 40 KB) do not
# fit the size budget (README, "Features and their cost"): make EVAL=1
EVAL		= 0
# Nor, with the MCP client, the job board (and its HTTP API) and crews in,
# orchestration (the MIPS boards build and test it) and persistence to
# flash (RISC-V boards boot from SD cards and eMMC with a writable root,
# where state_dir can simply be on disk): make ORCH=1 PERSIST=1
ORCH		= 0
PERSIST		= 0
