#!/bin/sh
# tools/featcost.sh - what each compile-time feature costs: the stripped
# full build of each arch against the same build with one feature left
# out (make FEATURE=0), in bytes. Prints a Markdown table; builds into
# build/cost-ARCH-FEATURE (reused by the next run when nothing changed).
# usage: tools/featcost.sh [ARCH...]     (default: x86_64 armv7)
set -eu
MAKE=${MAKE:-make}
FEATS="SERVE_TLS ORCH HOOKS MCP EVAL PERSIST JOBS CREW"
[ $# -gt 0 ] || set -- x86_64 armv7
size() { wc -c <"$1" | tr -d ' '; }
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
		printf ' %s |' $(($(size build/$a/skillbox) - $(size build/cost-$a-$f/skillbox)))
	done
	echo
done
printf '| all of them |'
for a in "$@"; do
	one $a build/cost-$a-none FEATURES=0
	printf ' %s |' $(($(size build/$a/skillbox) - $(size build/cost-$a-none/skillbox)))
done
echo
printf '| **full build** |'
for a in "$@"; do printf ' %s |' "$(size build/$a/skillbox)"; done
echo
