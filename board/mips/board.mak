# MIPS32r2 big-endian, soft-float, 24Kc-compatible: OpenWrt's mips_24kc
# (ath79: Atheros/QCA AR71xx-QCA956x routers). Built like board/mipsel, from
# the soft-float musl tools/setup builds into $(SKILLBOX_TOOLS).
ARCH		= mips
MUSL_CC		= $(SKILLBOX_TOOLS)/mips-sf-musl/bin/musl-gcc
CROSS_COMPILE	= mips-linux-gnu-
# MIPS16e, as on mipsel: the 24K and 74K cores of ath79 have it.
CPUFLAGS	= -mips16 -minterlink-mips16
RUNNER		= qemu-mips-static
# No FPU in the tests either (board/mipsel).
QEMU_CPU	?= 24Kc
export QEMU_CPU
SIZE_BUDGET	= 622592
# The ratchet (tools/sizes.sh): make size-check fails 4 KiB over it.
SIZE_BASE	= 611448
