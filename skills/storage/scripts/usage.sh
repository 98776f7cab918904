#!/bin/sh
# usage.sh - filesystem usage, and the largest directories directly under a
# path (what to clean up when space runs out).
#
# Input:  {"path": "/", "top": 10}
#   path  absolute directory to break down (default "/"); the scan stays on
#         the filesystem of that path (du -x) and is cut at 15 seconds
#   top   how many directories to list, 0..50 (default 10; 0 = no scan)
# Output: {"filesystems":[{"mount","fs","type","ro","size_kb","used_kb",
#   "avail_kb","use_pct"}],"path":"/","path_mount":{...same fields...},
#   "largest":[{"path":"/usr","size_kb":N}],"scanned_kb":N,
#   "complete":true,"warnings":["..."]}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
in_str path DIR /
in_int top TOP 10 0 50

case $DIR in
/*) ;;
*) die 2 "\"path\" must be an absolute path" ;;
esac
nl='
'
case $DIR in
*"$nl"*) die 2 "\"path\" must be one line" ;;
esac
[ "${#DIR}" -le 1024 ] || die 2 "\"path\" is too long"
# Drop trailing slashes (but keep "/").
while :; do
	case $DIR in
	?*/) DIR=${DIR%/} ;;
	*) break ;;
	esac
done
[ -d "$DIR" ] || die 2 "\"path\" is not a directory: $DIR"

all=$(df_scan)
fs=$(printf '%s\n' "$all" | sed -n 's/^J //p')
warn=$(printf '%s\n' "$all" | sed -n 's/^W //p')
pm=$(df_scan "$DIR" | sed -n 's/^J \[\(.*\)\]$/\1/p')
[ -n "$pm" ] || pm=null

largest='[]' scanned=null complete=true
if [ "$TOP" -gt 0 ]; then
	tool du || die 1 "du is not available"
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	out=$(run_to 15 $TOOL -xk -d 1 "$DIR" 2>/dev/null)
	rc=$?
	[ "$rc" -ge 128 ] && complete=false
	r=$(printf '%s\n' "$out" | awk -F '	' -v dir="$DIR" '
	NF >= 2 && $1 ~ /^[0-9]+$/ {
		p = substr($0, length($1) + 2)
		gsub(/\/\/+/, "/", p)
		if (p == dir) { print "T " $1; next }
		print $1 "\t" p
	}')
	scanned=$(printf '%s\n' "$r" | sed -n 's/^T //p')
	[ -n "$scanned" ] || scanned=null
	largest=$(printf '%s\n' "$r" | grep -v '^T ' | sort -rn | head -n "$TOP" |
		awk -F '	' "$JSON_AWK"'
		NF >= 2 { j = j (n++ ? "," : "") "{\"path\":" jstr(substr($0, length($1) + 2)) ",\"size_kb\":" jnum($1) "}" }
		END { print "[" j "]" }')
	[ "$complete" = false ] && warn="${warn:+$warn$nl}the scan of $DIR took too long and was cut: sizes are partial"
	[ "$largest" = "[]" ] && warn="${warn:+$warn$nl}no folder under $DIR could be measured: no permission to read it (or the sandbox does not allow it)"
fi

emit "$(printf '{"filesystems":%s,"path":%s,"path_mount":%s,"largest":%s,"scanned_kb":%s,"complete":%s,"warnings":%s}' \
	"$fs" "$(json_str "$DIR")" "$pm" "$largest" "$scanned" "$complete" \
	"$(printf '%s\n' "$warn" | json_lines)")" '
END {
	print "Filesystems:"
	for (i = 0; i < n("filesystems"); i++) {
		f = "filesystems." i
		printf "  %-16s %4s%% used, %6s free of %6s%s\n", v[f ".mount"], v[f ".use_pct"], \
		    kb(v[f ".avail_kb"]), kb(v[f ".size_kb"]), v[f ".ro"] == "true" ? " (read-only)" : ""
	}
	if (n("largest") > 0) {
		printf "Largest under %s (%s in all%s):\n", v["path"], kb(v["scanned_kb"]), \
		    v["complete"] == "true" ? "" : ", scan cut short"
		for (i = 0; i < n("largest"); i++)
			printf "  %7s  %s\n", kb(v["largest." i ".size_kb"]), v["largest." i ".path"]
	}
	warnings()
}'
