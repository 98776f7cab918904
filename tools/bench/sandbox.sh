#!/bin/sh
# tools/bench/sandbox.sh - what confinement costs: the median wall time of
# N runs (default 1000) of /bin/true through plain fork/exec/wait, through
# the sandbox with every layer, and with each layer off in turn, measured
# in-process by `skillbox sandbox bench` (clock_gettime, CLOCK_MONOTONIC).
# Prints a Markdown table. Run it as root to include the uid drop, and
# natively: under qemu-user the numbers measure the emulator.
# usage: tools/bench/sandbox.sh [N] [BIN]
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
N=${1:-1000}
BIN=${2:-$TOP/build/x86_64/skillbox}
echo "$(uname -sr), $(nproc) CPUs, $(id -un); $("$BIN" version | head -n 1)"
echo
"$BIN" -q sandbox bench "$N"
