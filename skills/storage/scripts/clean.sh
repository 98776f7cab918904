#!/bin/sh
# clean.sh - what could be deleted to free space, and how much each would
# give back: temporary files, rotated logs, the systemd journal, package
# caches, core dumps and user caches. Read-only: it only measures, and
# names the command that would clean each one; it deletes nothing.
#
# Input:  {} (none)
# Output: {"candidates":[{"what":"rotated logs","path":"/var/log",
#   "size_kb":N,"how":"..."}],"total_kb":N,"filesystems":[...],
#   "warnings":[..]}
# Candidates under 64 KiB are left out. filesystems is as in usage.sh.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
R=${STORAGE_ROOT:-}	# another root only in tests
tool du || die 1 "du is not available"
du=$TOOL
nl='
'

# size_of PATH...: KiB used by the existing paths, 0 when none (10 s cap).
# One du for all of them: a du (and a timer) per path would run out of
# the sandbox's processes in a /tmp of hundreds of entries.
size_of() {
	_n=$#
	while [ "$_n" -gt 0 ]; do
		[ -e "$1" ] && set -- "$@" "$1"
		shift
		_n=$((_n - 1))
	done
	[ $# -gt 0 ] || { echo 0; return; }
	# shellcheck disable=SC2086 # $du may be "busybox du"
	run_to 10 $du -sk "$@" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { s += $1 } END { print s + 0 }'
}
recs=
add() { # WHAT PATH HOW SIZE_KB
	[ "$4" -ge 64 ] && recs="$recs$1	$2	$3	$4$nl"
}

add "temporary files" "/tmp" "delete what you know is not in use in /tmp; on OpenWrt /tmp is RAM" \
	"$(size_of "$R"/tmp/* "$R"/var/tmp/*)"
rot=$(find "$R/var/log" -xdev -type f \( -name '*.gz' -o -name '*.[0-9]' -o -name '*.old' -o -name '*.xz' \) 2>/dev/null | head -n 2000)
# shellcheck disable=SC2086 # word splitting of the list is wanted
[ -n "$rot" ] && add "rotated logs" "/var/log" "rm /var/log/*.gz /var/log/*.[0-9] /var/log/*.old" \
	"$(IFS=$nl; size_of $rot)"
add "systemd journal" "/var/log/journal" "journalctl --vacuum-size=50M" "$(size_of "$R/var/log/journal")"
add "apt package cache" "/var/cache/apt/archives" "apt-get clean" "$(size_of "$R"/var/cache/apt/archives/*.deb)"
add "apk package cache" "/var/cache/apk" "apk cache clean" "$(size_of "$R/var/cache/apk")"
add "opkg package lists" "/var/opkg-lists" "rm -r /var/opkg-lists (opkg update fetches them again)" "$(size_of "$R/var/opkg-lists")"
add "core dumps" "/var/lib/systemd/coredump" "rm /var/lib/systemd/coredump/*" \
	"$(size_of "$R"/var/lib/systemd/coredump/* "$R"/core "$R"/core.[0-9]*)"
for h in "$R"/root "$R"/home/*; do
	[ -d "$h/.cache" ] || continue
	add "user cache" "${h#"$R"}/.cache" "rm -r ${h#"$R"}/.cache/* (programs rebuild it)" "$(size_of "$h/.cache")"
done

# shellcheck disable=SC2119 # no path: all filesystems
all=$(df_scan)
fs=$(printf '%s\n' "$all" | sed -n 's/^J //p')
warn=$(printf '%s\n' "$all" | sed -n 's/^W //p')
json=$(printf '%s' "$recs" | sort -t '	' -k4,4nr | awk -F '	' -v fs="$fs" -v warn="$warn" "$JSON_AWK"'
NF == 4 { c = c (n++ ? "," : "") "{\"what\":" jstr($1) ",\"path\":" jstr($2) ",\"size_kb\":" jnum($4) ",\"how\":" jstr($3) "}"; t += $4 }
END {
	printf "{\"candidates\":[%s],\"total_kb\":%d,\"filesystems\":%s,\"warnings\":[", c, t, fs
	k = split(warn, w, "\n")
	for (i = 1; i <= k; i++) if (w[i] != "") printf "%s%s", (q++ ? "," : ""), jstr(w[i])
	printf "]}"
}')
emit "$json" '
END {
	if (n("candidates") == 0) print "Nothing much to clean: no temporary files, old logs or caches of note."
	else {
		printf "About %s could be freed:\n", kb(v["total_kb"])
		for (i = 0; i < n("candidates"); i++) {
			c = "candidates." i
			printf "  %7s  %s (%s): %s\n", kb(v[c ".size_kb"]), v[c ".what"], v[c ".path"], v[c ".how"]
		}
		print "Nothing was deleted; check before you remove anything."
	}
	for (i = 0; i < n("filesystems"); i++) {
		f = "filesystems." i
		if (v[f ".ro"] != "true" && v[f ".use_pct"] + 0 >= 80)
			printf "%s is %s%% full (%s free).\n", v[f ".mount"], v[f ".use_pct"], kb(v[f ".avail_kb"])
	}
	warnings()
}'
