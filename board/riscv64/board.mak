# RISC-V 64 (RV64GC, lp64d). Debian 12 has no musl for riscv64: tools/setup
# builds Debian's musl source package into $(SKILLBOX_TOOLS).
ARCH		= riscv64
MUSL_CC		= $(SKILLBOX_TOOLS)/riscv64-musl/bin/musl-gcc
CROSS_COMPILE	= riscv64-linux-gnu-
CPUFLAGS	=
RUNNER		= qemu-riscv64-static
SIZE_BUDGET	= 573440
# The ratchet (tools/sizes.sh): make size-check fails 4 KiB over it.
SIZE_BASE	= 553304
