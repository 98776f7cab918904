#!/bin/sh
# processes.sh - the processes using the most memory or CPU.
#
# Input:  {"top": 10, "sort": "rss"|"cpu", "sample": 1}
#   top     how many processes to list, 1..50 (default 10)
#   sort    "rss" (resident memory, default) or "cpu"
#   sample  seconds to measure CPU over, 0..3 (default 1; 0 = no cpu_pct)
# Output: {"count":N,"sort":"rss","sample_s":1,"mem_total_kb":N,
#          "processes":[{"pid":1,"ppid":0,"name":"init","user":"root",
#          "state":"S","rss_kb":N,"swap_kb":N,"mem_pct":0.1,"cpu_pct":0.0,
#          "cmd":"/sbin/init"}],"source":"proc"|"ps"}
# cpu_pct is the share of the whole machine (all cores = 100) during the
# sample. Reads /proc/[pid]/stat and status; falls back to `ps`.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
in_int top TOP 10 1 50
in_str sort SORT rss
in_int sample SAMPLE 1 0 3
case $SORT in
rss | mem | memory) SORT=rss ;;
cpu) ;;
*) die 2 "\"sort\" must be \"rss\" or \"cpu\"" ;;
esac
if [ "$SORT" = cpu ] && [ "$SAMPLE" = 0 ]; then
	SAMPLE=1
fi

tab=$(printf '\t')
memtotal=$(awk '$1 == "MemTotal:" { print $2; exit }' /proc/meminfo 2>/dev/null)

# One table row per process: "KEY<tab>PID<tab>{json}", KEY sorts.
rows_proc() {
	c0='' s0=''
	if [ "$SAMPLE" -gt 0 ]; then
		c0=$(head -n 1 /proc/stat 2>/dev/null)
		s0=$(cat /proc/[0-9]*/stat 2>/dev/null)
		sleep "$SAMPLE"
	fi
	{
		printf '@c0 %s\n' "$c0"
		[ -n "$s0" ] && printf '%s\n' "$s0" | sed 's/^/@s0 /'
		printf '@c1 %s\n' "$(head -n 1 /proc/stat 2>/dev/null)"
		cat /proc/[0-9]*/stat 2>/dev/null | sed 's/^/@s1 /'
		echo @status
		cat /proc/[0-9]*/status 2>/dev/null
		echo @passwd
		cat /etc/passwd 2>/dev/null
	} | awk -v sort="$SORT" -v sample="$SAMPLE" -v memtotal="$memtotal" -v self="$$" \
	    "$JSON_AWK"'
	function cpusum(line,   f, n, i, t) {
		n = split(line, f, " "); t = 0
		for (i = 3; i <= n; i++) t += f[i]
		return t
	}
	function ticks(line,   i, rest, f) {
		# fields after "(comm)": the name may hold spaces and parentheses
		for (i = length(line); i > 0; i--) if (substr(line, i, 1) == ")") break
		rest = substr(line, i + 2)
		split(rest, f, " ")
		st[$2] = f[1]
		return f[12] + f[13]
	}
	$1 == "@c0" { t0 = cpusum($0); next }
	$1 == "@c1" { t1 = cpusum($0); next }
	$1 == "@s0" { u0[$2] = ticks($0); next }
	$1 == "@s1" { u1[$2] = ticks($0); next }
	$1 == "@status" { part = "status"; next }
	$1 == "@passwd" { part = "passwd"; FS = ":"; next }
	part == "passwd" { uname[$3] = $1; next }
	part == "status" && $1 == "Name:" {
		name = $0; sub(/^Name:[ \t]*/, "", name); next
	}
	part == "status" && $1 == "State:" { state = $2; next }
	part == "status" && $1 == "Pid:" {
		pid = $2; pids[pid] = 1; pname[pid] = name; pstate[pid] = state
		next
	}
	part == "status" && $1 == "PPid:" { ppid[pid] = $2; next }
	part == "status" && $1 == "Uid:" { puid[pid] = $2; next }
	part == "status" && $1 == "VmRSS:" { rss[pid] = $2; next }
	part == "status" && $1 == "VmSwap:" { swap[pid] = $2; next }
	# this script and the tools it runs are no answer
	function mine(p,   i) {
		for (i = 0; i < 32 && p != "" && p > 0; i++) {
			if (p == self) return 1
			p = ppid[p]
		}
		return 0
	}
	END {
		dt = t1 - t0
		for (p in pids) {
			r = (p in rss) ? rss[p] + 0 : 0
			cpu = "null"; key2 = 0
			if (mine(p)) continue
			if (sample > 0 && dt > 0) {
				# born during the sample: all its ticks fall in it;
				# born after it: none did
				c = (p in u1) ? (u1[p] - ((p in u0) ? u0[p] : 0)) * 100 / dt : 0
				if (c < 0) c = 0
				cpu = sprintf("%.1f", c); key2 = int(c * 100)
			}
			mp = (memtotal > 0) ? sprintf("%.1f", r * 100 / memtotal) : "null"
			u = (puid[p] in uname) ? uname[puid[p]] : ""
			if (u == "") u = puid[p]
			j = "{\"pid\":" jnum(p) ",\"ppid\":" jnum(ppid[p]) \
			    ",\"name\":" jstr(pname[p]) ",\"user\":" jstr(u) \
			    ",\"state\":" jstr(pstate[p]) ",\"rss_kb\":" r \
			    ",\"swap_kb\":" ((p in swap) ? jnum(swap[p]) : "null") \
			    ",\"mem_pct\":" mp ",\"cpu_pct\":" cpu "}"
			key = (sort == "cpu") ? key2 : r
			printf "%d\t%s\t%s\n", key, p, j
		}
	}'
}

# Fallback without a readable /proc/[pid]: BusyBox or procps ps.
rows_ps() {
	tool ps || return 0
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	$TOOL -o pid,ppid,user,stat,rss,comm 2>/dev/null | awk -v memtotal="$memtotal" \
	    "$JSON_AWK"'
	function kb(v,   m) {
		m = 1
		if (v ~ /[kK]$/) m = 1; else if (v ~ /[mM]$/) m = 1024
		else if (v ~ /[gG]$/) m = 1048576
		sub(/[kKmMgG]$/, "", v)
		return int(v * m)
	}
	NR == 1 || $1 !~ /^[0-9]+$/ { next }
	{
		r = kb($5); name = $0
		for (i = 1; i <= 5; i++) sub(/^[ \t]*[^ \t]+[ \t]+/, "", name)
		mp = (memtotal > 0) ? sprintf("%.1f", r * 100 / memtotal) : "null"
		printf "%d\t%s\t{\"pid\":%s,\"ppid\":%s,\"name\":%s,\"user\":%s,\"state\":%s,\"rss_kb\":%d,\"swap_kb\":null,\"mem_pct\":%s,\"cpu_pct\":null}\n", \
		    r, $1, jnum($1), jnum($2), jstr(name), jstr($3), jstr(substr($4, 1, 1)), r, mp
	}'
}

src=proc
rows=$(rows_proc)
if [ -z "$rows" ]; then
	src='ps'
	rows=$(rows_ps)
	[ "$SORT" = cpu ] && SORT=rss
fi
[ -n "$rows" ] || die 1 "cannot read the process table (no /proc and no ps)"
count=$(printf '%s\n' "$rows" | wc -l)
top=$(printf '%s\n' "$rows" | sort -rn | head -n "$TOP")

# Add the command line of the listed processes, then print.
json=$({
	printf '%s\n' "$top" | sed 's/^/@r	/'
	printf '%s\n' "$top" | while IFS="$tab" read -r _k pid _j; do
		printf '@c\t%s\t' "$pid"
		if [ -r "/proc/$pid/cmdline" ]; then
			tr '\0\n\t' '   ' <"/proc/$pid/cmdline" 2>/dev/null | head -c 240
		fi
		echo
	done
} | awk -F "$tab" -v count="$count" -v sort="$SORT" -v sample="$SAMPLE" \
    -v source="$src" -v memtotal="$memtotal" "$JSON_AWK"'
$1 == "@r" { n++; pid[n] = $3; row[n] = $4; next }
$1 == "@c" { c = $3; sub(/ +$/, "", c); cmd[$2] = c; next }
END {
	printf "{\"count\":%d,\"sort\":%s,\"sample_s\":%d,\"mem_total_kb\":%s,\"source\":%s,\"processes\":[", \
	    count, jstr(sort), (sort == "cpu" || source == "proc") ? sample : 0, jnum(memtotal), jstr(source)
	for (i = 1; i <= n; i++) {
		r = row[i]
		if (cmd[pid[i]] != "") r = substr(r, 1, length(r) - 1) ",\"cmd\":" jstr(cmd[pid[i]]) "}"
		printf "%s%s", (i > 1 ? "," : ""), r
	}
	printf "]}\n"
}')
emit "$json" '
END {
	printf "%d processes; the top %d by %s:\n", v["count"], n("processes"), \
	    v["sort"] == "cpu" ? "CPU over " v["sample_s"] " s" : "memory"
	printf "  %6s %6s %5s %5s  %s\n", "PID", "RSS", "MEM%", "CPU%", "COMMAND"
	for (i = 0; i < n("processes"); i++) {
		p = "processes." i
		c = v[p ".cmd"] != "" ? v[p ".cmd"] : v[p ".name"]
		printf "  %6s %6s %5s %5s  %s\n", v[p ".pid"], kb(v[p ".rss_kb"]), v[p ".mem_pct"], \
		    v[p ".cpu_pct"] == "null" ? "-" : v[p ".cpu_pct"], substr(c, 1, 60)
	}
}'
