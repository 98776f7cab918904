#!/bin/sh
# overview.sh - a one-shot health summary of the device: identity, uptime,
# load, CPU count, memory, filesystems, temperatures, top processes by
# memory, and plain-language warnings. Needs no input; reads /proc.
#
# Output: {"hostname":..,"os":..,"kernel":..,"arch":..,"model":..,
#   "uptime_s":N,"load":[1m,5m,15m],"cpus":N,"procs":{"running":N,"total":N},
#   "mem_kb":{"total","free","available","buffers","cached","swap_total",
#   "swap_free"},"mem_used_pct":N,"disk":[{"mount","fs","type","ro",
#   "size_kb","used_kb","avail_kb","use_pct"}],"temps_c":[{"zone","c"}],
#   "top_mem":[{"pid","name","user","rss_kb","mem_pct","cmd"}],
#   "warnings":["..."]}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
here=$(dirname "$0")
warn=

first() { # first line of a file, or nothing
	[ -r "$1" ] && head -n 1 "$1" 2>/dev/null
}

# Identity.
hostname=$(first /proc/sys/kernel/hostname)
[ -n "$hostname" ] || hostname=$(uname -n 2>/dev/null)
kernel=$(uname -r 2>/dev/null)
arch=$(uname -m 2>/dev/null)
os=
if [ -r /etc/openwrt_release ]; then
	os=$(sed -n "s/^DISTRIB_DESCRIPTION=['\"]\{0,1\}\([^'\"]*\).*/\1/p" /etc/openwrt_release)
fi
if [ -z "$os" ] && [ -r /etc/os-release ]; then
	os=$(sed -n "s/^PRETTY_NAME=['\"]\{0,1\}\([^'\"]*\).*/\1/p" /etc/os-release)
fi
model=
if [ -r /proc/device-tree/model ]; then
	model=$(tr -d '\0' </proc/device-tree/model 2>/dev/null)
elif [ -r /tmp/sysinfo/model ]; then
	model=$(first /tmp/sysinfo/model)
fi
if [ -z "$model" ] && [ -r /proc/cpuinfo ]; then
	model=$(awk -F ': *' '$1 ~ /^(model name|Hardware|machine|cpu model)[ \t]*$/ { print $2; exit }' /proc/cpuinfo)
fi

# Uptime, load, CPUs.
uptime_s=null
if [ -r /proc/uptime ]; then
	uptime_s=$(awk '{ printf "%d", $1 }' /proc/uptime)
fi
load=null procs=null
if [ -r /proc/loadavg ]; then
	load=$(awk '{ printf "[%s,%s,%s]", $1, $2, $3 }' /proc/loadavg)
	procs=$(awk '{ split($4, p, "/"); printf "{\"running\":%d,\"total\":%d}", p[1], p[2] }' /proc/loadavg)
fi
cpus=$(grep -c '^cpu[0-9]' /proc/stat 2>/dev/null)
if [ -z "$cpus" ] || [ "$cpus" = 0 ]; then
	cpus=$(nproc 2>/dev/null) || cpus=
fi
[ -n "$cpus" ] || cpus=null
if [ "$load" != null ] && [ "$cpus" != null ]; then
	w=$(awk -v n="$cpus" '$1 > 2 * n {
		printf "high load: %s over the last minute on %d CPU(s)", $1, n }' /proc/loadavg)
	[ -n "$w" ] && warn="$warn$w
"
fi

# Memory. MemAvailable exists since Linux 3.14; estimate it before that.
mem=null mem_pct=null
if [ -r /proc/meminfo ]; then
	m=$(awk '
	{ v[$1] = $2 }
	END {
		t = v["MemTotal:"] + 0
		a = ("MemAvailable:" in v) ? v["MemAvailable:"] : \
		    v["MemFree:"] + v["Buffers:"] + v["Cached:"] + v["SReclaimable:"]
		printf "{\"total\":%d,\"free\":%d,\"available\":%d,\"buffers\":%d,\"cached\":%d,\"swap_total\":%d,\"swap_free\":%d}\n", \
		    t, v["MemFree:"], a, v["Buffers:"], v["Cached:"], v["SwapTotal:"], v["SwapFree:"]
		printf "%s\n", (t > 0) ? sprintf("%.1f", (t - a) * 100 / t) : "null"
		if (t > 0 && a * 100 / t < 10)
			printf "W low memory: %d MB of %d MB available\n", a / 1024, t / 1024
		s = v["SwapTotal:"]
		if (s > 0 && (s - v["SwapFree:"]) * 100 / s > 50)
			printf "W swap is %d%% used\n", (s - v["SwapFree:"]) * 100 / s
	}' /proc/meminfo)
	mem=$(printf '%s\n' "$m" | sed -n 1p)
	mem_pct=$(printf '%s\n' "$m" | sed -n 2p)
	w=$(printf '%s\n' "$m" | sed -n 's/^W //p')
	[ -n "$w" ] && warn="$warn$w
"
fi

# Filesystems.
# shellcheck disable=SC2119 # no path: all filesystems
d=$(df_scan)
disk=$(printf '%s\n' "$d" | sed -n 's/^J //p')
w=$(printf '%s\n' "$d" | sed -n 's/^W //p')
[ -n "$w" ] && warn="$warn$w
"

# Temperatures (thermal zones report millidegrees Celsius).
temps=
for z in /sys/class/thermal/thermal_zone*; do
	[ -r "$z/temp" ] || continue
	t=$(first "$z/temp")
	case $t in '' | *[!0-9-]*) continue ;; esac
	ty=$(first "$z/type")
	temps="$temps${ty:-${z##*/}}	$t
"
done
tj=$(printf '%s' "$temps" | awk -F '	' "$JSON_AWK"'
	NF == 2 {
		c = $2 / 1000
		j = j (n++ ? "," : "") sprintf("{\"zone\":%s,\"c\":%.1f}", jstr($1), c)
		if (c >= 85) w = w sprintf("W %s is at %.0f C\n", $1, c)
	}
	END { print "[" j "]"; printf "%s", w }')
temps_json=$(printf '%s\n' "$tj" | sed -n 1p)
w=$(printf '%s\n' "$tj" | sed -n 's/^W //p')
[ -n "$w" ] && warn="$warn$w
"

# Top processes by memory, from the sibling script (no CPU sample: fast).
top=$(SKILL_INPUT='{"top":5,"sample":0}' sh "$here/processes.sh" </dev/null 2>/dev/null |
	sed -n 's/.*"processes":\(\[.*\]\)}$/\1/p')
[ -n "$top" ] || top=null

emit "$(printf '{"hostname":%s,"os":%s,"kernel":%s,"arch":%s,"model":%s,"uptime_s":%s,"load":%s,"cpus":%s,"procs":%s,"mem_kb":%s,"mem_used_pct":%s,"disk":%s,"temps_c":%s,"top_mem":%s,"warnings":%s}' \
	"$(json_str "$hostname")" "$(json_str "$os")" "$(json_str "$kernel")" \
	"$(json_str "$arch")" "$(json_str "$model")" "$uptime_s" "$load" \
	"$cpus" "$procs" "$mem" "$mem_pct" "$disk" "$temps_json" "$top" \
	"$(printf '%s' "$warn" | json_lines)")" '
END {
	printf "%s: %s%s (%s), kernel %s; up %s\n", v["hostname"], v["os"], \
	    v["model"] != "" ? " on " v["model"] : "", v["arch"], v["kernel"], secs(v["uptime_s"])
	c = v["cpus"] + 0
	l = v["load.0"] + 0
	printf "Load: %s %s %s (1, 5, 15 min) on %d CPU%s: %s\n", v["load.0"], v["load.1"], \
	    v["load.2"], c, (c == 1 ? "" : "s"), (l > 2 * c ? "overloaded" : l > c ? "busy" : "fine")
	t = v["mem_kb.total"]; a = v["mem_kb.available"]; st = v["mem_kb.swap_total"]
	printf "Memory: %s of %s available (%s%% used)", kb(a), kb(t), v["mem_used_pct"]
	if (st > 0) printf "; swap %s of %s used", kb(st - v["mem_kb.swap_free"]), kb(st)
	printf "\n"
	for (i = 0; i < n("disk"); i++) {
		if (v["disk." i ".ro"] == "true") continue
		d = d (d == "" ? "" : ", ") sprintf("%s %s%% used (%s free)", v["disk." i ".mount"], \
		    v["disk." i ".use_pct"], kb(v["disk." i ".avail_kb"]))
	}
	if (d != "") printf "Disk: %s\n", d
	for (i = 0; i < n("temps_c"); i++)
		tc = tc (i ? ", " : "") sprintf("%s %.0f C", v["temps_c." i ".zone"], v["temps_c." i ".c"])
	if (tc != "") printf "Temperature: %s\n", tc
	for (i = 0; i < n("top_mem"); i++)
		tm = tm (i ? ", " : "") v["top_mem." i ".name"] " " kb(v["top_mem." i ".rss_kb"])
	if (tm != "") printf "Most memory: %s\n", tm
	if (n("warnings") == 0) print "Nothing looks wrong."
	warnings()
}'
