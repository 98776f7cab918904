# Generic ARMv8-A 64-bit (Raspberry Pi 3/4/5 in 64-bit mode, most SBCs).
ARCH		= aarch64
MUSL_CC		= aarch64-linux-musl-gcc
CROSS_COMPILE	= aarch64-linux-gnu-
CPUFLAGS	=
RUNNER		= qemu-aarch64-static
SIZE_BUDGET	= 458752
