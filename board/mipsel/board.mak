# MIPS32r2 little-endian, hard-float (Debian mipsel ABI). OpenWrt's mipsel
# targets are soft-float and need a soft-float musl toolchain: see README.
ARCH		= mipsel
MUSL_CC		= mipsel-linux-musl-gcc
CROSS_COMPILE	= mipsel-linux-gnu-
CPUFLAGS	=
RUNNER		= qemu-mipsel-static
SIZE_BUDGET	= 491520
