#!/bin/sh
# tools/sizes.sh - stripped size of each arch's binary against its budget,
# and what each part adds (code + read-only data + data, from the linker
# map). LTO merges our code with libfyaml and BearSSL, so the parts come
# from the same sources built without LTO in build/ARCH-nolto (`make size`
# builds both; an arch without it gets dashes).
# usage: tools/sizes.sh [--check | --baseline] ARCH...
#   --check     exit 1 when a binary exceeds SIZE_BUDGET of board/ARCH/board.mak,
#               or grows more than SLACK bytes over its SIZE_BASE there (the
#               ratchet: a build that grows says so in the commit that raises
#               SIZE_BASE, with the reason)
#   --baseline  write each binary's size into its board.mak as SIZE_BASE
set -eu
SLACK=4096
check=0
case ${1:-} in
--check) check=1; shift ;;
--baseline) shift
	for a in "$@"; do
		size=$(wc -c <"build/$a/skillbox" | tr -d ' ')
		sed -i "s/^SIZE_BASE[ \t]*=.*/SIZE_BASE\t= $size/" "board/$a/board.mak"
		echo "sizes: board/$a/board.mak: SIZE_BASE = $size"
	done
	exit 0 ;;
esac
fail=0
check_one() {
	[ "$check" = 1 ] || return 0
	if [ -n "$budget" ] && [ "$size" -gt "$budget" ]; then
		echo "size-check: $bin is $size bytes, over its budget of $budget" >&2
		fail=1
	fi
	base=$(sed -n 's/^SIZE_BASE[ \t]*=[ \t]*//p' "board/$a/board.mak")
	if [ -z "$base" ]; then
		echo "size-check: board/$a/board.mak has no SIZE_BASE" >&2
		fail=1
	elif [ "$size" -gt $((base + SLACK)) ]; then
		echo "size-check: $bin is $size bytes, $((size - base)) over its" \
		    "baseline of $base (more than $SLACK): make it smaller, or" \
		    "raise SIZE_BASE (make size-baseline) and say why in the commit" >&2
		fail=1
	elif [ "$size" -lt $((base - SLACK)) ]; then
		echo "size-check: $bin is $((base - size)) bytes under its" \
		    "baseline: lower it (make size-baseline)" >&2
	fi
}
printf '| arch | stripped bytes | budget | headroom | without LTO | skillbox | musl | libfyaml | BearSSL | libgcc |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for a in "$@"; do
	bin=build/$a/skillbox
	map=build/$a-nolto/skillbox.map
	[ -f "$bin" ] || { echo "sizes: $bin missing (make ARCH=$a)" >&2; exit 1; }
	size=$(wc -c <"$bin" | tr -d ' ')
	budget=$(sed -n 's/^SIZE_BUDGET[ \t]*=[ \t]*//p' "board/$a/board.mak")
	if ! [ -f "$map" ]; then	# no parts without the build without LTO
		printf '| %s | %s | %s | %s | — | — | — | — | — | — |\n' "$a" \
		    "$size" "$budget" "$((budget - size))"
		check_one
		continue
	fi
	nolto=$(wc -c <"build/$a-nolto/skillbox" | tr -d ' ')
	parts=$(awk '
	/^Linker script and memory map/ { on = 1; next }
	!on { next }
	# an input section: " .text.x  0xADDR  0xSIZE  file" (maybe wrapped)
	/^ \.(text|rodata|data|sdata|init_array|fini_array|got|tdata)/ {
		if (NF >= 4) { sz = $3; f = $4 } else { pend = 1; next }
		add(sz, f); next
	}
	pend && /^ +0x/ { pend = 0; if (NF >= 3) add($2, $3); next }
	{ pend = 0 }
	function hex(s,   i, n, c) {
		n = 0
		for (i = 3; i <= length(s); i++) {
			c = index("0123456789abcdef", tolower(substr(s, i, 1)))
			n = n * 16 + c - 1
		}
		return n
	}
	function add(sz, f,   n, k) {
		if (sz !~ /^0x/) return
		n = hex(sz)
		if (f ~ /libfyaml\.a/) k = "fy"
		else if (f ~ /libbearssl\.a/) k = "bear"
		else if (f ~ /libc\.a|crt1\.o|crti\.o|crtn\.o/) k = "musl"
		else if (f ~ /libgcc/) k = "gcc"
		else if (f ~ /\/obj\//) k = "own"
		else k = "other"
		t[k] += n
	}
	END { printf "%d %d %d %d %d\n", t["own"], t["musl"], t["fy"], t["bear"], t["gcc"] }
	' "$map")
	own=$(echo "$parts" | cut -d' ' -f1); musl=$(echo "$parts" | cut -d' ' -f2)
	fy=$(echo "$parts" | cut -d' ' -f3); bear=$(echo "$parts" | cut -d' ' -f4)
	gcc=$(echo "$parts" | cut -d' ' -f5)
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$a" \
	    "$size" "$budget" "$((budget - size))" "$nolto" "$own" "$musl" \
	    "$fy" "$bear" "$gcc"
	check_one
done
exit $fail
