#!/bin/sh
# tools/package.sh - skillbox as an OpenWrt .ipk (opkg, up to 24.10), an
# OpenWrt/Alpine .apk (apk-tools, v2 format) and a Debian .deb.
# usage: tools/package.sh ARCH BIN OUTDIR     (make package ARCH=...)
#
# Each holds /usr/bin/skillbox, /etc/skillbox/skillbox.yaml, the bundled
# skills in /usr/share/skillbox/skills and the init files of its system:
# the procd script and UCI file for OpenWrt, the systemd units for Debian.
# Only tar, gzip and dpkg-deb are used: no opkg-build or apk-tools.
# Reproducible: every mtime is the last commit's (or $SOURCE_DATE_EPOCH),
# files are sorted, owners are 0:0.
set -eu

[ $# = 3 ] || { echo "usage: $0 ARCH BIN OUTDIR" >&2; exit 2; }
ARCH=$1 BIN=$2 OUT=$3
TOP=$(cd "$(dirname "$0")/.." && pwd)
VERSION=${VERSION:-$(sed -n 's/^VERSION[[:space:]]*=[[:space:]]*//p' \
    "$TOP/Makefile")}
REL=1
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$TOP" log -1 --format=%ct 2>/dev/null ||
    date +%s)}
export SOURCE_DATE_EPOCH=$EPOCH
DESC="LLM agents with sandboxed skill scripts, in one static binary"

# OpenWrt's package architectures (CPU_TYPE of the usual targets) and
# Debian's.
case $ARCH in
x86_64)	OWRT=x86_64 DEB=amd64 ;;
aarch64) OWRT=aarch64_generic DEB=arm64 ;;
armv7)	OWRT=arm_cortex-a7_neon-vfpv4 DEB=armhf ;;
mips)	OWRT=mips_24kc DEB=mips ;;
mipsel)	OWRT=mipsel_24kc DEB=mipsel ;;
riscv64) OWRT=riscv64_riscv64 DEB=riscv64 ;;
*)	echo "package: no package architecture for ARCH=$ARCH" >&2; exit 2 ;;
esac
[ -f "$BIN" ] || { echo "package: no binary $BIN" >&2; exit 1; }

# OpenWrt's MIPS routers have no FPU and their kernels emulate none.
case $ARCH in mips*)
	if command -v readelf >/dev/null &&
	    readelf -A "$BIN" 2>/dev/null | grep -q 'Hard float'; then
		echo "package: warning: $BIN is hard-float; on a MIPS core" \
		    "without an FPU ($OWRT routers) it dies with SIGILL" >&2
	fi
esac

W=$(mktemp -d "${TMPDIR:-/tmp}/skillbox-pkg.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
mkdir -p "$OUT"

TAR="tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@$EPOCH"

# stage DIR: the files every package has. Modes do not depend on the
# umask: folders and scripts 0755, other files 0644.
stage() {
	install -d -m 755 "$1/usr/bin" "$1/etc/skillbox" \
	    "$1/usr/share/skillbox/skills"
	install -m 755 "$BIN" "$1/usr/bin/skillbox"
	install -m 644 "$TOP/rootfs/etc/skillbox/skillbox.yaml" \
	    "$1/etc/skillbox/skillbox.yaml"
	cp -R "$TOP/skills/." "$1/usr/share/skillbox/skills/"
}

# fix DIR: modes and times as described above.
fix() {
	find "$1" -type d -exec chmod 755 {} +
	find "$1" -type f -perm -u+x -exec chmod 755 {} +
	find "$1" -type f ! -perm -u+x -exec chmod 644 {} +
	find "$1" -exec touch -h -d "@$EPOCH" {} +
}

# The .deb's copyright file (Debian's machine-readable format): our
# licence and those of the libraries linked into the binary.
deb_copyright() {
	cat <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: skillbox

Files: *
Copyright: 2026 the skillbox authors
License: MIT

Files: usr/bin/skillbox
Copyright: 2026 the skillbox authors
 2016 Thomas Pornin (BearSSL)
 2019 Pantelis Antoniou (libfyaml)
 2010 Serge Zaitsev (jsmn)
 2005-2020 Rich Felker, et al. (musl)
License: MIT
Comment: The binary is linked statically with BearSSL, libfyaml, jsmn and
 musl, each under the MIT licence.

License: MIT
EOF
	sed -n '5,$p' "$TOP/LICENSE" | sed 's/^$/./; s/^/ /'
}

# owrt_root DIR: the files of both OpenWrt packages.
owrt_root() {
	stage "$1"
	install -d -m 755 "$1/etc/init.d" "$1/etc/config"
	install -m 755 "$TOP/rootfs/etc/init.d/skillbox" "$1/etc/init.d/skillbox"
	install -m 644 "$TOP/rootfs/etc/config/skillbox" "$1/etc/config/skillbox"
	fix "$1"
}

# The maintainer scripts of both OpenWrt packages, by the rules of
# OpenWrt's default_postinst: inside an image build (IPKG_INSTROOT set)
# postinst adds the user skillbox and enables the service in the image;
# on a device an upgrade (opkg sets PKG_UPGRADE=1) neither enables nor
# disables it, so a service the user disabled stays disabled. `enabled`
# in /etc/config/skillbox is the other switch that survives upgrades.
owrt_scripts() {
	cat >"$1/postinst" <<'EOF'
#!/bin/sh
# The server's own user and group, skillbox (the init script runs it as
# that, not as root), in an image build too: the first free id from 480
# for both, no password, no shell.
R=${IPKG_INSTROOT:-}
free() {
	local id=480
	while cut -d: -f3 "$R/etc/passwd" "$R/etc/group" 2>/dev/null |
	    grep -qx "$id"; do
		id=$((id + 1))
	done
	echo "$id"
}
if ! grep -qs '^skillbox:' "$R/etc/group"; then
	echo "skillbox:x:$(free):" >>"$R/etc/group"
fi
if ! grep -qs '^skillbox:' "$R/etc/passwd"; then
	gid=$(grep '^skillbox:' "$R/etc/group" | cut -d: -f3)
	echo "skillbox:x:$(free):$gid:skillbox:/var/lib/skillbox:/bin/false" \
	    >>"$R/etc/passwd"
	grep -qs '^skillbox:' "$R/etc/shadow" ||
	    echo 'skillbox:*:0:0:99999:7:::' >>"$R/etc/shadow"
fi
# An image build: enabled in the image, as OpenWrt's own packages are
# (the image's rc.common makes the boot link under IPKG_INSTROOT).
if [ -n "$R" ]; then
	[ -f "$R/etc/rc.common" ] || exit 0
	IPKG_INSTROOT=$R sh "$R/etc/rc.common" "$R/etc/init.d/skillbox" enable
	exit 0
fi
# A new install starts at boot. An upgrade (PKG_UPGRADE=1) keeps what the
# user chose: it enables nothing, and restarts the service only when it
# is enabled.
[ "${PKG_UPGRADE:-0}" = 1 ] || /etc/init.d/skillbox enable
/etc/init.d/skillbox enabled && /etc/init.d/skillbox restart
exit 0
EOF
	cat >"$1/prerm" <<'EOF'
#!/bin/sh
# Stop it; removing (not upgrading) also removes the boot link.
[ -n "${IPKG_INSTROOT:-}" ] && exit 0
/etc/init.d/skillbox stop
[ "${PKG_UPGRADE:-0}" = 1 ] || /etc/init.d/skillbox disable
exit 0
EOF
	chmod 755 "$1/postinst" "$1/prerm"
}

# --- .ipk: a gzip'd tar (not ar) of debian-binary, data.tar.gz and
# control.tar.gz, which is what OpenWrt's opkg reads.
ipk() {
	local d=$W/ipk r=$W/ipk/root c=$W/ipk/control size
	mkdir -p "$r" "$c"
	owrt_root "$r"
	(cd "$r" && $TAR --format=gnu -cf "$d/data.tar" .)
	size=$(wc -c <"$d/data.tar")
	gzip -9n <"$d/data.tar" >"$d/data.tar.gz"
	cat >"$c/control" <<EOF
Package: skillbox
Version: $VERSION-r$REL
Source: skillbox
SourceName: skillbox
License: MIT
Section: utils
SourceDateEpoch: $EPOCH
Architecture: $OWRT
Installed-Size: $size
Description:  $DESC.
EOF
	printf '/etc/config/skillbox\n/etc/skillbox/skillbox.yaml\n' \
	    >"$c/conffiles"
	owrt_scripts "$c"
	fix "$c"
	(cd "$c" && $TAR --format=gnu -cf - .) | gzip -9n >"$d/control.tar.gz"
	echo 2.0 >"$d/debian-binary"
	touch -d "@$EPOCH" "$d/debian-binary" "$d/data.tar.gz" \
	    "$d/control.tar.gz"
	(cd "$d" && $TAR --format=gnu -cf - ./debian-binary ./data.tar.gz \
	    ./control.tar.gz) | gzip -9n \
	    >"$OUT/skillbox_$VERSION-r${REL}_$OWRT.ipk"
}

# --- .apk, v2: gzip streams of tar segments, control (.PKGINFO and the
# scripts) then data. apk-tools refuses a file entry without the pax
# record APK-TOOLS.checksum.SHA1 (the SHA-1 of its content), so each
# entry is its own one-member pax tar, with the end-of-archive blocks
# cut off; the data segment gets them back at its end.
#
# apk_entries ROOT OUT: ROOT's entries, sorted, without end blocks.
apk_entries() {
	local root=$1 out=$2 p sum n
	: >"$out"
	(cd "$root" && find . -mindepth 1 | LC_ALL=C sort) | while read -r p; do
		p=${p#./}
		set -- --format=pax \
		    --pax-option=exthdr.name=%d/PaxHeaders/%f \
		    --pax-option=delete=ctime,atime:=0
		if [ -f "$root/$p" ] && ! [ -L "$root/$p" ]; then
			sum=$(sha1sum <"$root/$p" | cut -d' ' -f1)
			set -- "$@" --pax-option="APK-TOOLS.checksum.SHA1:=$sum"
		fi
		# Records of one block: the archive is the member and exactly
		# two zero blocks, which are dropped (a count of zero blocks
		# from the end would also eat a file's own trailing zeros).
		(cd "$root" && $TAR "$@" --no-recursion -b 1 -cf "$W/one.tar" "$p")
		n=$(($(wc -c <"$W/one.tar") - 1024))
		head -c "$n" "$W/one.tar" >>"$out"
	done
}

apk() {
	local d=$W/apk r=$W/apk/root c=$W/apk/control size datahash
	mkdir -p "$r" "$c"
	owrt_root "$r"
	apk_entries "$r" "$d/data.tar"
	head -c 1024 /dev/zero >>"$d/data.tar"
	gzip -9n <"$d/data.tar" >"$d/data.tar.gz"
	datahash=$(sha256sum <"$d/data.tar.gz" | cut -d' ' -f1)
	size=$(find "$r" -type f -exec cat {} + | wc -c)
	cat >"$c/.PKGINFO" <<EOF
# Generated by tools/package.sh
pkgname = skillbox
pkgver = $VERSION-r$REL
pkgdesc = $DESC
builddate = $EPOCH
size = $size
arch = $OWRT
origin = skillbox
license = MIT
datahash = $datahash
EOF
	owrt_scripts "$c"
	mv "$c/postinst" "$c/.post-install"
	# apk runs .post-upgrade instead on an upgrade (and no .pre-deinstall)
	sed '1a PKG_UPGRADE=1' "$c/.post-install" >"$c/.post-upgrade"
	chmod 755 "$c/.post-upgrade"
	mv "$c/prerm" "$c/.pre-deinstall"
	fix "$c"
	apk_entries "$c" "$d/control.tar"
	gzip -9n <"$d/control.tar" >"$d/control.tar.gz"
	cat "$d/control.tar.gz" "$d/data.tar.gz" \
	    >"$OUT/skillbox-$VERSION-r$REL.$OWRT.apk"
}

# --- .deb, with dpkg-deb. The units run skillbox as a DynamicUser, so the
# scripts create no user; they do nothing when dpkg installs into another
# root ($DPKG_ROOT) or when systemd is not running.
deb() {
	local r=$W/deb
	stage "$r"
	install -d -m 755 "$r/lib/systemd/system" "$r/DEBIAN"
	for u in skillbox.service skillbox.socket skillbox@.service; do
		install -m 644 "$TOP/rootfs/lib/systemd/system/$u" \
		    "$r/lib/systemd/system/$u"
	done
	cat >"$r/DEBIAN/control" <<EOF
Package: skillbox
Version: $VERSION-$REL
Architecture: $DEB
Maintainer: the skillbox authors <skillbox@invalid>
Installed-Size: $(du -sk --apparent-size "$r" | cut -f1)
Section: utils
Priority: optional
Description: $DESC
 One static binary (musl) that runs agents built from skills, with each
 skill script confined (Landlock, seccomp, namespaces). skillbox.service
 runs "skillbox serve" (HTTP on 127.0.0.1:8080 by default);
 skillbox.socket offers a "skillbox chat" per connection.
EOF
	echo /etc/skillbox/skillbox.yaml >"$r/DEBIAN/conffiles"
	install -d -m 755 "$r/usr/share/doc/skillbox"
	deb_copyright >"$r/usr/share/doc/skillbox/copyright"
	cat >"$r/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ] && [ -z "${DPKG_ROOT:-}" ] &&
    [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
	systemctl enable skillbox.service || true
	systemctl restart skillbox.service || true
fi
exit 0
EOF
	cat >"$r/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] && [ -z "${DPKG_ROOT:-}" ] &&
    [ -d /run/systemd/system ]; then
	systemctl disable --now skillbox.service skillbox.socket || true
fi
exit 0
EOF
	cat >"$r/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
# Purge: the sessions and workspace (DynamicUser keeps them in private/).
if [ "$1" = purge ]; then
	rm -rf "${DPKG_ROOT:-}/var/lib/private/skillbox" \
	    "${DPKG_ROOT:-}/var/lib/skillbox"
fi
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
exit 0
EOF
	chmod 755 "$r/DEBIAN/postinst" "$r/DEBIAN/prerm" "$r/DEBIAN/postrm"
	fix "$r"
	dpkg-deb --root-owner-group -Zgzip --build "$r" \
	    "$OUT/skillbox_$VERSION-${REL}_$DEB.deb" >/dev/null
}

ipk
apk
deb
ls "$OUT"/skillbox[-_]"$VERSION"-*
