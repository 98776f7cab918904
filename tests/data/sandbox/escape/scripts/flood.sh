#!/bin/sh
# flood.sh BYTES: write BYTES bytes of x to stdout
head -c "${1:-100000000}" /dev/zero | tr '\0' x
