#!/bin/sh
# errors.sh - errors and warnings logged in the last minutes: from logread
# (OpenWrt), else journalctl (systemd), else the kernel log (dmesg). Counts
# per source, and the last lines. Read-only.
#
# Input:  {"minutes": 60, "lines": 10}
#   minutes  how far back to look, 1..1440 (default 60)
#   lines    how many of the last matching lines to show, 0..50 (default 10)
# Output: {"source":"logread"|"journalctl"|"dmesg","minutes":60,
#   "errors":N,"warnings":N,"by_source":[{"name":"dnsmasq","errors":N,
#   "warnings":N}],"last":[{"level":"error"|"warning","source":..,
#   "text":..}],"tried":["journalctl: ..."]}
# Errors are emerg, alert, crit and err; warnings are warning.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
in_int minutes MIN 60 1 1440
in_int lines LINES 10 0 50

tried=
src=
recs=
# logread prints ctime stamps in local time: "Sun Nov 26 06:59:01 2023
# daemon.err dnsmasq[1234]: text". The window is measured against date(1)
# with the same calendar arithmetic, so no mktime is needed.
if tool logread; then
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	out=$(run_to 10 $TOOL 2>&1)
	rc=$?
	if [ "$rc" = 0 ]; then
		src=logread
		recs=$(printf '%s\n' "$out" | awk -v now="$(date '+%Y %m %d %H %M %S')" \
		    -v min="$MIN" "$CAL_AWK"'
		BEGIN { split(now, t, " "); cut = stamp(t[1], t[2], t[3], t[4] ":" t[5] ":" t[6]) - min * 60 }
		NF >= 7 && $6 ~ /\./ {
			if (stamp($5, mon($2), $3, $4) < cut) next
			l = $6; sub(/.*\./, "", l)
			l = (l ~ /^(emerg|alert|crit|err)/) ? "e" : (l ~ /^warn/) ? "w" : ""
			if (l == "") next
			s = $7; sub(/:$/, "", s); sub(/\[.*/, "", s)
			m = $0; for (k = 0; k < 7; k++) sub(/^[^ ]+ +/, "", m)
			print l "\t" s "\t" m
		}')
	else
		tried="${tried}logread: $(printf '%s\n' "$out" | head -n 1)
"
	fi
fi
if [ -z "$src" ] && tool journalctl; then
	recs=
	for p in e:0..3 w:4..4; do
		out=$(run_to 15 journalctl -q --no-pager -o short -p "${p#*:}" \
		    --since "-${MIN}min" 2>&1)
		rc=$?
		if [ "$rc" != 0 ] || printf '%s\n' "$out" | grep -q '^No journal files\|insufficient permissions'; then
			tried="${tried}journalctl: $(printf '%s\n' "$out" | head -n 1)
"
			recs=
			break
		fi
		src=journalctl
		recs="$recs$(printf '%s\n' "$out" | awk -v l="${p%%:*}" '
		NF >= 5 && $1 !~ /^--/ {
			s = $5; sub(/:$/, "", s); sub(/\[.*/, "", s)
			m = $0; for (k = 0; k < 5; k++) sub(/^[^ ]+ +/, "", m)
			print l "\t" s "\t" m
		}')
"
	done
	[ -n "$tried" ] && case $tried in *journalctl:*) src= ;; esac
fi
if [ -z "$src" ] && tool dmesg; then
	# Raw records carry the priority: "<3>[ 1234.5678] text". Records
	# without a time (no CONFIG_PRINTK_TIME) are all kept.
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	out=$(run_to 10 $TOOL -r 2>&1)
	rc=$?
	case $out in
	"<"[0-9]*) ;;
	*) [ "$rc" = 0 ] && rc=1 ;;
	esac
	if [ "$rc" = 0 ]; then
		src=dmesg
		up=$(awk '{ printf "%d", $1 }' /proc/uptime 2>/dev/null)
		recs=$(printf '%s\n' "$out" | awk -v cut="$(( ${up:-0} - MIN * 60 ))" '
		/^<[0-9]+>/ {
			p = substr($0, 2, index($0, ">") - 2) % 8
			m = substr($0, index($0, ">") + 1)
			if (m ~ /^\[ *[0-9.]+\]/) {
				t = m; sub(/^\[ */, "", t); sub(/\].*/, "", t)
				if (t + 0 < cut) next
				sub(/^\[[^]]*\] */, "", m)
			}
			l = (p <= 3) ? "e" : (p == 4) ? "w" : ""
			if (l == "") next
			s = m; sub(/[: ].*/, "", s)
			if (s == "" || length(s) > 24) s = "kernel"
			print l "\t" s "\t" m
		}')
	else
		tried="${tried}dmesg: $(printf '%s\n' "$out" | head -n 1)
"
	fi
fi
if [ -z "$src" ]; then
	[ -n "$tried" ] || die 1 "no log to read: none of logread, journalctl or dmesg is installed"
	die 1 "cannot read any log: $(printf '%s' "$tried" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
fi

json=$(printf '%s\n' "$recs" | awk -F '	' -v src="$src" -v min="$MIN" \
    -v lines="$LINES" -v tried="$tried" "$JSON_AWK"'
NF >= 3 {
	if (!($2 in cnt)) names[++nn] = $2
	cnt[$2]++
	if ($1 == "e") { ne++; e[$2]++ } else { nw++; w[$2]++ }
	r[++nr] = $0
}
END {
	# sources by number of records, most first (a small insertion sort)
	for (i = 2; i <= nn; i++)
		for (j = i; j > 1 && cnt[names[j]] > cnt[names[j - 1]]; j--) {
			x = names[j]; names[j] = names[j - 1]; names[j - 1] = x
		}
	printf "{\"source\":%s,\"minutes\":%d,\"errors\":%d,\"warnings\":%d,\"by_source\":[", jstr(src), min, ne, nw
	for (i = 1; i <= nn && i <= 20; i++)
		printf "%s{\"name\":%s,\"errors\":%d,\"warnings\":%d}", (i > 1 ? "," : ""), jstr(names[i]), e[names[i]], w[names[i]]
	printf "],\"last\":["
	for (i = (nr > lines ? nr - lines + 1 : 1); i <= nr && lines > 0; i++) {
		split(r[i], f, "\t"); m = substr(r[i], length(f[1] f[2]) + 3)
		printf "%s{\"level\":%s,\"source\":%s,\"text\":%s}", (k++ ? "," : ""), \
		    jstr(f[1] == "e" ? "error" : "warning"), jstr(f[2]), jstr(substr(m, 1, 300))
	}
	printf "],\"tried\":["
	n = split(tried, tl, "\n")
	for (i = 1; i <= n; i++) if (tl[i] != "") printf "%s%s", (q++ ? "," : ""), jstr(tl[i])
	printf "]}"
}')
emit "$json" '
END {
	if (v["errors"] + v["warnings"] == 0) {
		printf "No errors or warnings in the last %d minutes (%s).\n", v["minutes"], v["source"]
		exit
	}
	printf "In the last %d minutes (%s): %d error%s, %d warning%s.\n", v["minutes"], v["source"], \
	    v["errors"], (v["errors"] == 1 ? "" : "s"), v["warnings"], (v["warnings"] == 1 ? "" : "s")
	printf "By source:"
	for (i = 0; i < n("by_source"); i++) {
		p = "by_source." i
		e = v[p ".errors"] + 0; w = v[p ".warnings"] + 0
		printf "%s %s (%s%s%s)", (i ? "," : ""), v[p ".name"], (e ? e " err" : ""), \
		    (e && w ? ", " : ""), (w ? w " warn" : "")
	}
	printf "\n"
	if (n("last")) print "Last lines:"
	for (i = 0; i < n("last"); i++)
		printf "  %-4s %s: %s\n", (v["last." i ".level"] == "error" ? "ERR" : "WARN"), v["last." i ".source"], v["last." i ".text"]
}'
