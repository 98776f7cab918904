# MIPS32r2 little-endian, soft-float, 24Kc-compatible: OpenWrt's mipsel_24kc
# (ramips: MT7621, MT76x8; most MediaTek routers). Their cores have no FPU
# and OpenWrt's kernels emulate none, so Debian's hard-float mipsel musl
# does not do: tools/setup builds a soft-float musl into $(SKILLBOX_TOOLS).
# A soft-float binary runs on cores with an FPU too.
ARCH		= mipsel
MUSL_CC		= $(SKILLBOX_TOOLS)/mipsel-sf-musl/bin/musl-gcc
CROSS_COMPILE	= mipsel-linux-gnu-
# MIPS16e: 16-bit encodings cut the binary by a quarter (577 KB -> 442 KB).
# The 24K, 34K, 74K, 1004K and 4KEc cores of MIPS routers all have the
# ASE; for a core without it, build with CPUFLAGS= (see README).
CPUFLAGS	= -mips16 -minterlink-mips16
RUNNER		= qemu-mipsel-static
# qemu's default MIPS CPU has an FPU; the 24Kc, like the routers', has
# none, so an FPU instruction fails the tests. An environment variable,
# not -cpu in RUNNER: the BusyBox tests copy $(RUNNER) into their rootfs.
QEMU_CPU	?= 24Kc
export QEMU_CPU
SIZE_BUDGET	= 622592
# The ratchet (tools/sizes.sh): make size-check fails 4 KiB over it.
SIZE_BASE	= 609076
