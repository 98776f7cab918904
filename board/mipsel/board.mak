# MIPS32r2 little-endian, hard-float (Debian mipsel ABI). OpenWrt's mipsel
# targets are soft-float and need a soft-float musl toolchain: see README.
ARCH		= mipsel
MUSL_CC		= mipsel-linux-musl-gcc
CROSS_COMPILE	= mipsel-linux-gnu-
# MIPS16e: 16-bit encodings cut the binary by a fifth (566 KB -> 455 KB).
# The 24K, 34K, 74K, 1004K and 4KEc cores of MIPS routers all have the
# ASE; for a core without it, build with CPUFLAGS= (see README).
CPUFLAGS	= -mips16 -minterlink-mips16
RUNNER		= qemu-mipsel-static
SIZE_BUDGET	= 491520
