#!/bin/sh
# exit.sh N: exit with status N, a line on each stream first
echo out
echo err >&2
exit "$1"
