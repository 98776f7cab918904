#!/bin/sh
# write.sh FILE...: write to each file, then write-ok or write-denied
for f; do
	if (echo pwned >"$f") 2>&1; then echo "write-ok $f"; else echo "write-denied $f"; fi
done
