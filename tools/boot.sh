#!/bin/sh
# tools/boot.sh - boots skillbox in a real Linux kernel under qemu-system:
# Debian's kernel and BusyBox, and an initramfs in which BusyBox init
# starts `skillbox serve` from rcS with start-stop-daemon, as on a device.
# The guest's checks (tools/boot/boot-test.sh) print on the serial console.
#
# usage: tools/boot.sh ARCH [BIN]         boot; ARCH armv7, aarch64 or mipsel,
#                                         BIN by default build/ARCH/skillbox
#        tools/boot.sh --fetch [ARCH...]  download the kernel and BusyBox
#                                         into $SKILLBOX_TOOLS/boot (tools/setup)
#        tools/boot.sh --check [ARCH...]  exit 1 when a download is missing or
#                                         is not the version apt offers
#
# A boot prints the lines "BOOT-CHECK NAME ok|fail DETAIL" (the guest's, and
# boot-done and host-model from here), "BOOT-INFO ..." and "BOOT-TIME N s",
# and exits 0 when every check passed. The console and the rest are kept in
# build/boot/ARCH/. BOOT_TIMEOUT (seconds, default 240) bounds each qemu run.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOLS=${SKILLBOX_TOOLS:-/opt/skillbox}
ARCHES="armv7 aarch64 mipsel"

say() { printf 'boot: %s\n' "$*" >&2; }

# arch_set ARCH: the Debian architecture, the kernel's metapackage, the
# emulator and its machine, the console, and the network card with the
# modules its driver needs (Debian builds them as modules). The cards
# need no option ROM (virtio-mmio; pcnet with its ROM turned off).
arch_set() {
	case $1 in
	armv7)
		DEB=armhf KMETA=linux-image-armmp QEMU=qemu-system-arm
		MACHINE="-M virt -cpu cortex-a15" CONSOLE=ttyAMA0
		NIC=virtio-net-device NICMODS="virtio_mmio virtio_net"
		;;
	aarch64)
		DEB=arm64 KMETA=linux-image-arm64 QEMU=qemu-system-aarch64
		MACHINE="-M virt -cpu cortex-a53" CONSOLE=ttyAMA0
		NIC=virtio-net-device NICMODS="virtio_mmio virtio_net"
		;;
	mipsel)
		# The 24Kc has no FPU, like the routers' cores (Debian's
		# malta kernel would emulate one, though).
		DEB=mipsel KMETA=linux-image-4kc-malta QEMU=qemu-system-mipsel
		MACHINE="-M malta -cpu 24Kc -vga none" CONSOLE=ttyS0
		NIC=pcnet,romfile= NICMODS=pcnet32
		;;
	*)
		say "unknown arch '$1' (armv7, aarch64, mipsel)"
		exit 2
		;;
	esac
	KD=$TOOLS/boot/$1
}

# --- Downloads: Debian's packages, the versions apt offers -------------

# keys ARCH...: a line "ARCH KEY" for each arch for which apt offers
# both packages, KEY being "linux-image-X:DEB=V busybox-static:DEB=V".
# The kernel is the one the flavour's metapackage depends on. One
# apt-cache run for all: each takes seconds.
keys() {
	pk=
	for a; do
		arch_set "$a"
		pk="$pk $KMETA:$DEB busybox-static:$DEB"
	done
	# shellcheck disable=SC2086
	found=$(apt-cache show --no-all-versions $pk 2>/dev/null | awk '
	    function flush() {
		if (p == "busybox-static")
			print a, "busybox-static:" a "=" v
		else if (match(d, /linux-image-[^ ,]* \(= [^)]*\)/)) {
			split(substr(d, RSTART, RLENGTH), x, /[ ()=]+/)
			print a, x[1] ":" a "=" x[2]
		}
		p = a = v = d = ""
	    }
	    /^Package: / { p = $2 }
	    /^Architecture: / { a = $2 }
	    /^Version: / { v = $2 }
	    /^Depends: / { d = $0 }
	    /^$/ { flush() }
	    END { flush() }')
	for a; do
		arch_set "$a"
		k=$(printf '%s\n' "$found" | sed -n "s/^$DEB \(linux-image-.*\)/\1/p")
		b=$(printf '%s\n' "$found" | sed -n "s/^$DEB \(busybox-static:.*\)/\1/p")
		[ -n "$k" ] && [ -n "$b" ] && echo "$a $k $b"
	done
	return 0
}

# mod_file DIR NAME: the file of module NAME in an unpacked kernel package
# (the name's _ may be - in the file's).
mod_file() {
	find "$1/lib/modules" \( -name "$2.ko" -o \
	    -name "$(printf %s "$2" | tr _ -).ko" \) | head -n 1
}
# mod_add DIR NAME OUT: NAME after the modules it depends on (its
# depends= field; Debian ships no modules.dep) into OUT/modules, and its
# file name onto OUT/modules.order.
mod_add() {
	grep -qx "$2.ko" "$3/modules.order" 2>/dev/null && return 0
	f=$(mod_file "$1" "$2")
	[ -n "$f" ] || { say "$2: no such module in the kernel package"; return 1; }
	for dep in $(tr '\0' '\n' <"$f" | sed -n 's/^depends=//p' | tr , ' '); do
		mod_add "$1" "$dep" "$3" || return 1
	done
	cp "$(mod_file "$1" "$2")" "$3/modules/$2.ko"
	echo "$2.ko" >>"$3/modules.order"
}

# fetch ARCH KEY: the kernel (vmlinuz, its config, the NIC's modules)
# and a static BusyBox into $TOOLS/boot/ARCH; the stamp, written last,
# is the key.
fetch() {
	arch_set "$1"
	k=$2
	if [ -z "$k" ]; then
		say "$1: apt offers no $KMETA:$DEB or busybox-static:$DEB" \
		    "(tools/setup adds the architecture)"
		return 1
	fi
	[ "$(cat "$KD/.skillbox-ok" 2>/dev/null)" = "$k" ] && return 0
	say "$1: downloading $k"
	w=$(mktemp -d)
	mkdir -p "$TOOLS/boot"
	rm -rf "$KD.tmp"
	mkdir -p "$KD.tmp/modules"
	# shellcheck disable=SC2086
	(cd "$w" && apt-get -qq -o APT::Sandbox::User=root download $k) &&
	    dpkg-deb -x "$w"/linux-image-*.deb "$w/k" &&
	    dpkg-deb -x "$w"/busybox-static_*.deb "$w/b" &&
	    cp "$w"/k/boot/vmlinuz-* "$KD.tmp/vmlinuz" &&
	    cp "$w"/k/boot/config-* "$KD.tmp/config" &&
	    cp "$w/b/bin/busybox" "$KD.tmp/busybox" || { rm -rf "$w"; return 1; }
	for m in $NICMODS; do
		mod_add "$w/k" "$m" "$KD.tmp" || { rm -rf "$w"; return 1; }
	done
	rm -rf "$w"
	echo "$k" >"$KD.tmp/.skillbox-ok"
	rm -rf "$KD"
	mv "$KD.tmp" "$KD"
}

# --- One boot ---------------------------------------------------------

# mkroot DIR: the guest's root file system: BusyBox, the binary at
# /usr/bin, the bundled skills, the shipped configuration and init script
# (rootfs/), and the test's inittab, rcS and checks.
mkroot() {
	r=$1
	rm -rf "$r"
	mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/etc/init.d" \
	    "$r/etc/skillbox" "$r/usr/share/skillbox/skills" "$r/lib/modules" \
	    "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/root"
	cp "$KD/busybox" "$r/bin/busybox"
	ln -s busybox "$r/bin/sh"
	ln -s bin/busybox "$r/init"
	# As on OpenWrt: /var is the RAM disk.
	ln -s tmp "$r/var"
	cp "$KD"/modules/*.ko "$r/lib/modules/"
	cp "$KD/modules.order" "$r/etc/modules"
	cp "$BIN" "$r/usr/bin/skillbox"
	cp -R "$ROOT/skills/." "$r/usr/share/skillbox/skills/"
	chmod -R a+rX "$r/usr/share/skillbox"
	cp "$ROOT/rootfs/etc/skillbox/skillbox.yaml" "$r/etc/skillbox/"
	cp "$ROOT/rootfs/etc/init.d/S95skillbox" "$r/etc/init.d/"
	cp "$ROOT/tools/boot/inittab" "$r/etc/inittab"
	cp "$ROOT/tools/boot/rcS" "$r/etc/init.d/rcS"
	cp "$ROOT/tools/boot/boot-test.sh" "$r/etc/boot-test.sh"
	chmod 755 "$r/etc/init.d/rcS" "$r/etc/init.d/S95skillbox" \
	    "$r/etc/boot-test.sh"
	# skillbox: the user S95skillbox runs the server as, made as an
	# image build makes it (the package's postinst)
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\nskillbox:x:480:480:skillbox:/var/lib/skillbox:/bin/false\n' \
	    >"$r/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\nskillbox:x:480:\n' >"$r/etc/group"
	printf '127.0.0.1 localhost\n10.0.2.2 llmhost\n' >"$r/etc/hosts"
	printf 'PRETTY_NAME="skillbox boot test (BusyBox, Debian kernel %s)"\n' \
	    "$(sed -n 's/^linux-image-\([^:]*\).*/\1/p' "$KD/.skillbox-ok")" \
	    >"$r/etc/os-release"
	[ -n "$SM_CA" ] && cp "$SM_CA" "$r/etc/skillbox/llm-ca.pem"
	printf 'BOOT_EPOCH=%s\nLLM_URL=%s\n' "$(date +%s)" "$SM_URL" \
	    >"$r/etc/boot.env"
}

# sm_start DIR: the scripted model (tools/scriptllm.js) on the host's
# 127.0.0.1, which the guest reaches as 10.0.2.2 ("llmhost"), over TLS
# with a throw-away certificate when openssl can make one. Sets SM_PID,
# SM_URL and SM_CA (the certificate, or empty).
sm_start() {
	rm -rf "$1"
	mkdir -p "$1"
	SM_CA='' proto=http
	if command -v openssl >/dev/null && openssl req -x509 -newkey ec \
	    -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=llmhost \
	    -addext subjectAltName=DNS:llmhost -keyout "$1/key.pem" \
	    -out "$1/cert.pem" >/dev/null 2>&1; then
		SM_CA=$1/cert.pem proto=https
	fi
	# A handoff to sysinfo, its overview script, back, and an answer.
	printf '%s' '[{"calls":[["handoff_to_sysinfo",{"task":"how is this device?"}]]},
	    {"calls":[["run_skill_script",{"skill":"sysinfo","script":"scripts/overview.sh"}]]},
	    {"calls":[["hand_back",{"result":"overview done"}]]},
	    {"text":"BOOT-MODEL-ANSWER: the device is fine"}]' >"$1/script.json"
	node "$ROOT/tools/scriptllm.js" "$1" >"$1/log" 2>&1 &
	SM_PID=$!
	i=0
	while [ ! -s "$1/port" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -s "$1/port" ] || return 1
	SM_URL=$proto://llmhost:$(cat "$1/port")
}

# boot ARCH BIN
boot() {
	arch_set "$1"
	BIN=$2
	B=$ROOT/build/boot/$1
	if ! [ -f "$KD/.skillbox-ok" ]; then
		say "$1: no kernel in $KD: run tools/setup"
		return 2
	fi
	command -v "$QEMU" >/dev/null || { say "no $QEMU: run tools/setup"; return 2; }
	[ -f "$BIN" ] || { say "no $BIN: make ARCH=$1"; return 2; }
	mkdir -p "$B"
	echo "BOOT-INFO packages: $(cat "$KD/.skillbox-ok")"
	SM_PID=
	# The model goes with us, also when we are interrupted.
	trap '[ -n "$SM_PID" ] && kill "$SM_PID" 2>/dev/null' EXIT
	trap 'exit 130' INT TERM
	sm_start "$B/sm" || say "the scripted model did not start"
	mkroot "$B/root"
	(cd "$B/root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
	    gzip -9n >"$B/initramfs.cpio.gz"
	t0=$(date +%s)
	rc=0
	# shellcheck disable=SC2086
	timeout -k 5 "${BOOT_TIMEOUT:-240}" "$QEMU" $MACHINE -m 256 \
	    -kernel "$KD/vmlinuz" -initrd "$B/initramfs.cpio.gz" \
	    -append "console=$CONSOLE rdinit=/init panic=-1 quiet" \
	    -netdev user,id=n -device "$NIC,netdev=n" \
	    -display none -monitor none -serial stdio -no-reboot \
	    </dev/null >"$B/console.raw" 2>"$B/qemu.err" || rc=$?
	t1=$(date +%s)
	[ -n "$SM_PID" ] && kill "$SM_PID" 2>/dev/null
	tr -d '\r' <"$B/console.raw" >"$B/console.log"
	grep '^BOOT-' "$B/console.log" | grep -v '^BOOT-DONE'
	if grep -q '^BOOT-DONE' "$B/console.log"; then
		echo "BOOT-CHECK boot-done ok powered off after the checks"
	else
		echo "BOOT-CHECK boot-done fail qemu exit $rc" \
		    "(124: timeout ${BOOT_TIMEOUT:-240} s); console's end:"
		tail -n 25 "$B/console.log" | sed 's/^/BOOT-INFO console: /'
		sed 's/^/BOOT-INFO qemu: /' "$B/qemu.err"
	fi
	# The model got the overview script's output, made in the guest's
	# kernel: its release is in the tool result sent to the host.
	krel=$(sed -n 's/^BOOT-INFO kernel: \([^ ]*\).*/\1/p' "$B/console.log")
	kj="\\\"kernel\\\":\\\"$krel\\\""
	if [ -n "$krel" ] && grep -qF "$kj" "$B/sm/journal" 2>/dev/null; then
		echo "BOOT-CHECK host-model ok $(wc -l <"$B/sm/journal") requests, the guest's kernel $krel in a tool result"
	else
		echo "BOOT-CHECK host-model fail the scripted model did not get the guest's tool output ($(wc -l <"$B/sm/journal" 2>/dev/null || echo 0) requests)"
	fi
	echo "BOOT-TIME $((t1 - t0)) s"
	! grep -q '^BOOT-CHECK [^ ]* fail' "$B/console.log" &&
	    grep -q '^BOOT-DONE' "$B/console.log" &&
	    grep -qF "$kj" "$B/sm/journal" 2>/dev/null
}

# key ARCH: its key in $KEYS, or nothing
key() { printf '%s\n' "$KEYS" | sed -n "s/^$1 //p"; }

case ${1:-} in
--fetch)
	shift
	# shellcheck disable=SC2086
	[ $# -gt 0 ] || set -- $ARCHES
	KEYS=$(keys "$@")
	for a; do fetch "$a" "$(key "$a")" || exit 1; done
	;;
--check)
	shift
	# shellcheck disable=SC2086
	[ $# -gt 0 ] || set -- $ARCHES
	KEYS=$(keys "$@")
	st=0
	for a; do
		arch_set "$a"
		k=$(key "$a")
		if [ -z "$k" ] || [ "$(cat "$KD/.skillbox-ok" 2>/dev/null)" != "$k" ]
		then
			say "$a: no kernel in $KD, or not the one apt offers"
			st=1
		fi
	done
	exit $st
	;;
''|-*)
	sed -n '7,12s/^# \{0,1\}//p' "$0" >&2
	exit 2
	;;
*)
	boot "$1" "${2:-$ROOT/build/$1/skillbox}"
	;;
esac
