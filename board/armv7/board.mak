# ARMv7-A, hard-float VFP, Thumb-2 (Debian armhf ABI; Raspberry Pi 2/3 in
# 32-bit mode, Cortex-A7/A9/A53 boards).
ARCH		= armv7
MUSL_CC		= arm-linux-musleabihf-gcc
CROSS_COMPILE	= arm-linux-gnueabihf-
# No inlining of small functions at their calls: a few hundred bytes less.
CPUFLAGS	= -march=armv7-a -mthumb -mfpu=vfpv3-d16 -mfloat-abi=hard \
		  -fno-inline-small-functions
RUNNER		= qemu-arm-static
SIZE_BUDGET	= 475136
# The ratchet (tools/sizes.sh): make size-check fails 4 KiB over it.
SIZE_BASE	= 473116
