#!/bin/sh
# status.sh - the state of the services under this device's init system:
# systemd (systemctl), procd (OpenWrt: ubus and /etc/init.d), or BusyBox /
# SysV init (/etc/init.d scripts, judged by their running processes).
# Failed services first. Read-only: no init script is run except OpenWrt's
# "enabled" query, which only tests a symlink.
#
# Input:  {} (none)
# Output: {"init":"systemd"|"procd"|"sysv","failed":[{"name":..,
#   "detail":..}],"services":[{"name":..,"enabled":true|false|null,
#   "running":true|false|null}],"running":N,"total":N,"notes":[..]}
# "failed" holds units systemd marks failed, or services enabled at boot
# that are not running (procd, sysv).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
INITD=${SERVICES_INITD:-/etc/init.d}	# another folder only in tests
notes=
init=
rows=	# lines "S name enabled running" and "F name detail"

# The names of running programs, from /proc (BusyBox has no pgrep -x
# everywhere).
running_names() {
	for _p in /proc/[0-9]*; do
		[ -r "$_p/comm" ] && cat "$_p/comm" 2>/dev/null
	done | sort -u
}

is_systemd() {
	[ -d /run/systemd/system ] && return 0
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	run_to 5 $TOOL is-system-running 2>/dev/null |
		grep -qE '^(running|degraded|starting|initializing|maintenance|stopping)'
}
ub=
if tool ubus; then
	# shellcheck disable=SC2086
	ub=$(run_to 10 $TOOL call service list 2>/dev/null)
fi
if tool systemctl && is_systemd; then
	init=systemd
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	f=$(run_to 10 $TOOL list-units --failed --no-legend --plain --no-pager 2>&1) ||
		notes="systemctl: $(printf '%s\n' "$f" | head -n 1)"
	# shellcheck disable=SC2086
	a=$(run_to 10 $TOOL list-units --type=service --all --no-legend --plain --no-pager 2>/dev/null)
	rows=$({
		printf '%s\n' "$f" | awk '$1 ~ /\./ && $3 == "failed" { d = ""; for (i = 5; i <= NF; i++) d = d (i > 5 ? " " : "") $i; print "F\t" $1 "\t" d }'
		printf '%s\n' "$a" | awk '$1 ~ /\.service$/ { print "S\t" $1 "\t-\t" ($4 == "running" ? "1" : "0") }'
	})
elif [ -x /sbin/procd ] || [ -f /etc/rc.common ] || [ -n "$ub" ]; then
	init=procd
	# ubus tells which instances run (root only); else look at /proc.
	ub=$(printf '%s\n' "$ub" | awk "$_FLAT_AWK" |
		awk -F '	' '$1 ~ /\.running$/ { split($1, p, "."); if ($2 == "true") r[p[1]] = 1; else if (!(p[1] in r)) r[p[1]] = 0; s[p[1]] = 1 }
		END { for (k in s) print k, r[k] }')
	[ -n "$ub" ] || notes="ubus call service list gave nothing (it needs root): running state guessed from process names"
	procs=$(running_names)
	for f in "$INITD"/*; do
		if [ ! -f "$f" ] || [ ! -x "$f" ]; then continue; fi
		n=${f##*/}
		en=0
		"$f" enabled >/dev/null 2>&1 && en=1
		r=$(printf '%s\n' "$ub" | awk -v n="$n" '$1 == n { print $2; f = 1 } END { if (!f) print "-" }')
		if [ "$r" = - ]; then
			r=0
			printf '%s\n' "$procs" | grep -qx "$n" && r=1
			# oneshot scripts (boot, done, sysctl...) never run: unknown
			grep -q 'procd_open_instance\|start-stop-daemon\|service_start' "$f" 2>/dev/null || r=-
		fi
		rows="${rows}S	$n	$en	$r
"
		[ "$en" = 1 ] && [ "$r" = 0 ] && rows="${rows}F	$n	enabled at boot but not running
"
	done
elif [ -d "$INITD" ]; then
	init=sysv
	procs=$(running_names)
	for f in "$INITD"/*; do
		if [ ! -f "$f" ] || [ ! -x "$f" ]; then continue; fi
		n=${f##*/}
		b=$(printf '%s\n' "$n" | sed 's/^[SK][0-9][0-9]//')
		case $b in rcS | rcK | README | functions | skeleton) continue ;; esac
		r=0
		printf '%s\n' "$procs" | grep -qx "$b" && r=1
		[ "$r" = 0 ] && [ -r "/var/run/$b.pid" ] && kill -0 "$(cat "/var/run/$b.pid")" 2>/dev/null && r=1
		en=-
		case $n in S[0-9][0-9]*) en=1 ;; esac
		rows="${rows}S	$b	$en	$r
"
		[ "$en" = 1 ] && [ "$r" = 0 ] && rows="${rows}F	$b	started at boot (${n}) but no process named $b runs
"
	done
	notes="BusyBox/SysV init: a service counts as running when a process of the same name runs"
else
	die 1 "no init system found: no systemd, no procd and no /etc/init.d"
fi

json=$(printf '%s\n' "$rows" | awk -F '	' -v init="$init" -v notes="$notes" "$JSON_AWK"'
function b(x) { return x == "1" ? "true" : x == "0" ? "false" : "null" }
$1 == "F" { f = f (nf++ ? "," : "") "{\"name\":" jstr($2) ",\"detail\":" jstr($3) "}" }
$1 == "S" { s = s (ns++ ? "," : "") "{\"name\":" jstr($2) ",\"enabled\":" b($3) ",\"running\":" b($4) "}"; if ($4 == "1") nr++ }
END {
	printf "{\"init\":%s,\"failed\":[%s],\"services\":[%s],\"running\":%d,\"total\":%d,\"notes\":[%s]}", \
	    jstr(init), f, s, nr, ns, (notes == "" ? "" : jstr(notes))
}')
emit "$json" '
END {
	nf = n("failed")
	if (nf == 0) printf "No failed services (%s): %d of %d running.\n", v["init"], v["running"], v["total"]
	else {
		printf "%d failed service%s (%s):\n", nf, (nf == 1 ? "" : "s"), v["init"]
		for (i = 0; i < nf; i++) printf "  %s: %s\n", v["failed." i ".name"], v["failed." i ".detail"]
		printf "%d of %d services running.\n", v["running"], v["total"]
	}
	for (i = 0; i < n("services"); i++)
		if (v["services." i ".running"] == "true") r = r (r == "" ? "" : ", ") v["services." i ".name"]
	if (r != "") printf "Running: %s\n", r
	for (i = 0; i < n("notes"); i++) printf "Note: %s\n", v["notes." i]
}'
