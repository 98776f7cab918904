#!/bin/sh
# read.sh FILE...: print each file, then read-ok or read-denied
for f; do
	if cat -- "$f" 2>&1; then echo "read-ok $f"; else echo "read-denied $f"; fi
done
