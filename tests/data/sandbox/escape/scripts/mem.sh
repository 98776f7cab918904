#!/bin/sh
# mem.sh MIB: build a string of MIB MiB; prints "allocated N" if it could
exec awk -v mb="${1:-512}" 'BEGIN {
	s = "x"; while (length(s) < mb * 1048576) s = s s
	print "allocated", length(s)
}'
