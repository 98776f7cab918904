# Generic ARMv8-A 64-bit (Raspberry Pi 3/4/5 in 64-bit mode, most SBCs).
ARCH		= aarch64
MUSL_CC		= aarch64-linux-musl-gcc
CROSS_COMPILE	= aarch64-linux-gnu-
# The tiny code model: one adr instead of adrp+add for each address (the
# binary is far below its 1 MiB reach): 16 KB less, same code otherwise.
CPUFLAGS	= -mcmodel=tiny
RUNNER		= qemu-aarch64-static
SIZE_BUDGET	= 655360
# The ratchet (tools/sizes.sh): make size-check fails 4 KiB over it.
SIZE_BASE	= 628576
