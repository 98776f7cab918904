#!/bin/sh
# tools/featcost.sh - what each compile-time feature costs: the full build
# of each arch against the same build with one feature left out (make
# FEATURE=0), in bytes of code and data. Prints a Markdown table; builds into
# build/cost-ARCH-FEATURE (reused by the next run when nothing changed).
# usage: tools/featcost.sh [ARCH...]     (default: x86_64 armv7)
set -eu
MAKE=${MAKE:-make}
FEATS="SERVE_TLS ORCH HOOKS MCP EVAL PERSIST JOBS CREW FLEET"
[ $# -gt 0 ] || set -- x86_64 armv7
# Code and data (text + data of size(1)), not the file's bytes: a file's
# segments are page-aligned, so its size moves in 4 KiB steps.
bytes() {
	cross=$(sed -n 's/^CROSS_COMPILE[ \t]*=[ \t]*//p' "board/$a/board.mak")
	"${cross}size" -B "$1" | awk 'NR == 2 { print $1 + $2 }'
}
# The vendored libraries do not depend on the features: copied, not rebuilt.
one() {	# ARCH DIR MAKE-ARGS...
	a=$1 d=$2; shift 2
	[ -d $d/vendor ] || { mkdir -p $d && cp -a build/$a/vendor $d/; }
	$MAKE -s --no-print-directory ARCH=$a B=$d "$@" $d/skillbox >&2
}
printf '| feature |'; for a in "$@"; do printf ' %s |' "$a"; done; echo
printf '|---|'; for a in "$@"; do printf -- '---:|'; done; echo
for a in "$@"; do
	$MAKE -s --no-print-directory ARCH=$a all >&2
done
for f in $FEATS; do
	printf '| `%s` |' "$f"
	for a in "$@"; do
		one $a build/cost-$a-$f $f=0
		printf ' %s |' $(($(bytes build/$a/skillbox) - $(bytes build/cost-$a-$f/skillbox)))
	done
	echo
done
printf '| all of them |'
for a in "$@"; do
	one $a build/cost-$a-none FEATURES=0
	printf ' %s |' $(($(bytes build/$a/skillbox) - $(bytes build/cost-$a-none/skillbox)))
done
echo
printf '| **full build**, code and data (file) |'
for a in "$@"; do
	printf ' %s (%s) |' "$(bytes build/$a/skillbox)" \
	    "$(wc -c <build/$a/skillbox | tr -d ' ')"
done
echo
