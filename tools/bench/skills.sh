#!/bin/sh
# tools/bench/skills.sh - memory and scan cost of many installed skills.
# usage: tools/bench/skills.sh [BIN [N...]]   (default build/x86_64/skillbox,
#        1000 10000 50000)
# For each N: N generated skills (200-byte descriptions, as
# tests/e2e/scale.test makes them) plus the bundled ones; an offline
# `run` with --stats in the default 2 MiB budget (4 MiB from 20,000
# skills): its exit status, budget peak and bytes in use at the end, and
# bytes per skill over the run with no generated skill; then the
# instructions of the scan (`skills show`, which builds the registry and
# reads one skill) under callgrind, when valgrind is installed.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$TOP/build/x86_64/skillbox}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 1000 10000 50000
D=$(mktemp -d "${TMPDIR:-/tmp}/skillbox-skills.XXXXXX")
trap 'rm -rf "$D"' EXIT

gen() {
	mkdir -p "$1"
	[ "$2" -gt 0 ] || return 0
	seq -f "$1/gen-skill-%05g" 0 $(($2 - 1)) | xargs mkdir -p
	seq -f "gen-skill-%05g" 0 $(($2 - 1)) | awk -v d="$1" '{
		f = d "/" $0 "/SKILL.md"
		printf "---\nname: %s\ndescription: Generated skill %s for " \
		    "the scale test. It reports nothing useful and exists so " \
		    "that the catalog holds many entries, each with a " \
		    "description as long as real ones are.\n---\nBody of %s.\n",
		    $0, $0, $0 > f
		close(f)
	}'
}

# stats N MEM: "rc peak in_use" of an offline turn over N skills
stats() {
	rm -rf "$D/s"
	gen "$D/s" "$1"
	printf 'provider: offline\nskills: [%s, %s]\nstate_dir: %s\n' \
	    "$D/s" "$TOP/skills" "$D/state" >"$D/c.yaml"
	rc=0
	"$BIN" --stats --memory "$2" -c "$D/c.yaml" run --no-log \
	    'how much memory is free?' >/dev/null 2>"$D/err" || rc=$?
	sed -n "s/.* peak \([0-9]*\) bytes, in use \([0-9]*\) bytes.*/$rc \1 \2/p" \
	    "$D/err"
}

set -- $(stats 0 2m) "$@"
base=$3
shift 3
printf '%7s %7s %4s %10s %10s %6s %15s\n' skills budget exit peak in_use B/skill scan_instr
for n in "$@"; do
	mem=2m
	[ "$n" -lt 20000 ] || mem=4m
	set -- $(stats "$n" $mem)
	ir=-
	if command -v valgrind >/dev/null; then
		ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		    "$BIN" --memory $mem -q skills show -d "$D/s" gen-skill-00000 \
		    2>&1 >/dev/null | sed -n 's/^==[0-9]*== Collected : //p')
	fi
	printf '%7s %7s %4s %10s %10s %6s %15s\n' "$n" $mem "$1" "$2" "$3" \
	    $((($3 - base) / n)) "$ir"
done
