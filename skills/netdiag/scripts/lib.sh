# shellcheck shell=sh
# lib.sh - helpers shared by the scripts of this skill (sourced, never run).
#
# Skills must be self-contained, so every bundled skill has its own copy:
# the part above the "end of the common part" line is the same in all of
# them (tests/e2e/bundled.test checks it); helpers for one skill go below.
# POSIX sh + awk only: runs under BusyBox ash, dash and bash, with BusyBox
# awk, mawk or gawk.
#
#   read_input               reads the input object (SKILL_INPUT, else stdin)
#   in_str KEY VAR DEFAULT   string field -> $VAR (numbers are accepted too)
#   in_int KEY VAR DEFAULT MIN MAX   integer field, bounded -> $VAR
#   die CODE MESSAGE         prints {"error":MESSAGE} and exits CODE
#   json_str TEXT            prints TEXT as a JSON string
#   json_lines               stdin lines -> JSON array of strings
#   tool NAME                finds NAME, or the BusyBox applet: sets $TOOL
#   run_to SECS CMD...       runs CMD, killed after SECS seconds (rc 143)
#   emit JSON RENDER         prints JSON, or with --text the answer for a
#                            person that the awk program RENDER writes
#
# Exit statuses: 0 ok (a failed probe is a result, not an error),
# 1 the system cannot answer (missing /proc, no tool), 2 bad input.

LC_ALL=C
export LC_ALL
# Routers keep ifconfig, route and friends in sbin; sandboxes often drop it.
for _d in /usr/sbin /sbin /usr/bin /bin; do
	case ":$PATH:" in
	*":$_d:"*) ;;
	*) PATH=${PATH:+$PATH:}$_d ;;
	esac
done
export PATH

# awk functions for writing JSON. Use as: awk "$JSON_AWK"'BEGIN{...}'.
# jesc escapes one string (byte by byte: LC_ALL=C); jstr quotes it;
# jnum passes a decimal through (no float formatting of big counters) or
# gives null.
JSON_AWK='
function jinit(   i) {
	for (i = 1; i < 32; i++) _jc[sprintf("%c", i)] = sprintf("\\u%04x", i)
	_jc["\n"] = "\\n"; _jc["\t"] = "\\t"; _jc["\r"] = "\\r"
	_jc["\\"] = "\\\\"; _jc["\""] = "\\\""; _jc[sprintf("%c", 127)] = "\\u007f"
	_jinit = 1
}
function jesc(s,   i, n, c, o) {
	if (!_jinit) jinit()
	o = ""; n = length(s)
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (c in _jc) o = o _jc[c]; else o = o c
	}
	return o
}
function jstr(s) { return "\"" jesc(s) "\"" }
function jnum(v) {
	if (v ~ /^-?[0-9]+(\.[0-9]+)?$/) {
		sub(/^-?0+/, (v ~ /^-/) ? "-" : "", v)
		if (v ~ /^-?(\.|$)/) sub(/^-?/, "&0", v)
		if (v == "-0") v = "0"
		return v
	}
	return "null"
}
'

json_str() {
	printf '%s' "$1" | awk "$JSON_AWK"'
	{ s = (NR > 1) ? s "\n" $0 : $0 }
	END { printf "%s", jstr(s) }'
}

json_lines() {
	awk "$JSON_AWK"'
	BEGIN { printf "[" }
	$0 != "" { printf "%s%s", (n++ ? "," : ""), jstr($0) }
	END { printf "]" }'
}

die() {
	if [ "$FORMAT" = text ]; then
		printf '%s\n' "$2"
	else
		printf '{"error":%s}\n' "$(json_str "$2")"
	fi
	exit "$1"
}

have() { command -v "$1" >/dev/null 2>&1; }

# tool NAME: TOOL becomes the path of NAME found on PATH, or "busybox NAME";
# returns 1 when neither exists. The path, not the bare name: a BusyBox
# shell that prefers its applets would otherwise run the applet instead of
# the installed tool (OpenWrt's logread is not BusyBox's). Use $TOOL
# unquoted so "busybox NAME" splits.
tool() {
	TOOL=
	_ifs=$IFS
	IFS=:
	for _d in $PATH; do
		if [ -n "$_d" ] && [ -f "$_d/$1" ] && [ -x "$_d/$1" ]; then
			TOOL=$_d/$1
			break
		fi
	done
	IFS=$_ifs
	if [ -n "$TOOL" ]; then
		return 0
	elif have busybox && busybox --list 2>/dev/null | grep -qx "$1"; then
		TOOL="busybox $1"
	else
		return 1
	fi
}

# run_to SECS CMD ARGS...: like `timeout` (whose syntax differs between
# BusyBox versions). The watchdog never holds our stdout open.
run_to() {
	_rt_t=$1
	shift
	"$@" &
	_rt_p=$!
	(
		trap 'kill "$_rt_s" 2>/dev/null; exit 0' TERM
		sleep "$_rt_t" &
		_rt_s=$!
		wait "$_rt_s"
		kill -TERM "$_rt_p" 2>/dev/null
	) >/dev/null 2>&1 </dev/null &
	_rt_w=$!
	wait "$_rt_p" 2>/dev/null
	_rt_rc=$?
	kill -TERM "$_rt_w" 2>/dev/null
	wait "$_rt_w" 2>/dev/null
	return "$_rt_rc"
}

# The walker behind read_input and in_*: a small scanner for one JSON object
# that looks only at its top-level keys. With want="" it checks the shape;
# else it prints s:STRING, n:SCALAR or c: (object/array) for that key, or
# nothing when the key is absent.
# shellcheck disable=SC2016 # awk program
_JGET_AWK='
function hexval(h,   i, v, d) {
	v = 0
	for (i = 1; i <= length(h); i++) {
		d = index("0123456789abcdef", tolower(substr(h, i, 1)))
		if (d == 0) return -1
		v = v * 16 + d - 1
	}
	return v
}
function bad(m) { print "x:" m; exit 0 }
{ s = (NR > 1) ? s "\n" $0 : $0 }
END {
	n = length(s); i = 1; depth = 0; expkey = 0; grab = 0; curkey = ""
	while (i <= n && index(" \t\r\n", substr(s, i, 1))) i++
	if (i > n) { if (want == "") print "ok"; exit 0 }
	if (substr(s, i, 1) != "{") bad("input must be a JSON object")
	while (i <= n) {
		c = substr(s, i, 1)
		if (c == "\"") {
			str = ""; i++; closed = 0
			while (i <= n) {
				c = substr(s, i, 1)
				if (c == "\\") {
					e = substr(s, i + 1, 1); i += 2
					if (e == "n") str = str "\n"
					else if (e == "t") str = str "\t"
					else if (e == "r") str = str "\r"
					else if (e == "b" || e == "f") str = str " "
					else if (e == "u") {
						v = hexval(substr(s, i, 4))
						if (v >= 32 && v < 127) str = str sprintf("%c", v)
						else str = str "\\u" substr(s, i, 4)
						i += 4
					} else str = str e
					continue
				}
				if (c == "\"") { closed = 1; break }
				str = str c; i++
			}
			if (!closed) bad("unterminated string in input")
			i++
			if (grab) { print "s:" str; exit 0 }
			if (depth == 1 && expkey) { curkey = str; expkey = 0 }
			continue
		}
		if (c == "{" || c == "[") {
			if (grab) { print "c:"; exit 0 }
			depth++
			if (depth == 1) expkey = 1
		} else if (c == "}" || c == "]") {
			depth--
			if (depth == 0) { ended = 1; i++; break }
			if (depth < 0) bad("unbalanced input")
		} else if (c == ":") {
			if (depth == 1 && want != "" && curkey == want) grab = 1
		} else if (c == ",") {
			if (depth == 1) { expkey = 1; curkey = "" }
		} else if (!index(" \t\r\n", c)) {
			tok = ""
			while (i <= n && !index(" \t\r\n,:{}[]\"", c = substr(s, i, 1))) { tok = tok c; i++ }
			if (tok !~ /^(-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|true|false|null)$/)
				bad("malformed JSON in input")
			if (grab) { print "n:" tok; exit 0 }
			continue
		}
		i++
	}
	if (!ended) bad("unbalanced input")
	while (i <= n && index(" \t\r\n", substr(s, i, 1))) i++
	if (i <= n) bad("trailing text after the input object")
	if (want == "") print "ok"
}'

# read_input: loads the input into $INPUT and checks it is one JSON object
# (empty counts as {}). Exits 2 otherwise.
read_input() {
	INPUT=${SKILL_INPUT:-}
	if [ -z "$INPUT" ] && [ ! -t 0 ]; then
		INPUT=$(cat)
	fi
	_ri=$(printf '%s' "$INPUT" | awk -v want= "$_JGET_AWK")
	case $_ri in
	ok) ;;
	x:*) die 2 "${_ri#x:}" ;;
	*) die 2 "cannot parse the input" ;;
	esac
}

_jget() { printf '%s' "$INPUT" | awk -v want="$1" "$_JGET_AWK"; }

# in_str KEY VAR DEFAULT: null or absent gives DEFAULT.
in_str() {
	_v=$(_jget "$1")
	case $_v in
	"" | n:null) _v=$3 ;;
	s:*) _v=${_v#s:} ;;
	n:true | n:false) die 2 "\"$1\" must be a string" ;;
	n:*) _v=${_v#n:} ;;
	x:*) die 2 "${_v#x:}" ;;
	*) die 2 "\"$1\" must be a string" ;;
	esac
	eval "$2=\$_v"
}

# in_int KEY VAR DEFAULT MIN MAX: a whole number, as number or string.
in_int() {
	in_str "$1" _iv "$3"
	case $_iv in
	"" | *[!0-9]*) die 2 "\"$1\" must be a whole number from $4 to $5" ;;
	esac
	if [ "${#_iv}" -gt 9 ] || [ "$_iv" -lt "$4" ] || [ "$_iv" -gt "$5" ]; then
		die 2 "\"$1\" must be a whole number from $4 to $5"
	fi
	while :; do
		case $_iv in
		0?*) _iv=${_iv#0} ;;
		*) break ;;
		esac
	done
	eval "$2=\$_iv"
}
# Output: JSON for a model by default; --text (first arguments) gives the
# same answer written for a person. Flags are taken off "$@".
FORMAT=json
while [ $# -gt 0 ]; do
	case $1 in
	--text) FORMAT=text ;;
	--json) FORMAT=json ;;
	*) break ;;
	esac
	shift
done

# _FLAT_AWK turns one JSON value into "path<TAB>value" lines: object keys
# and array indexes joined by "." (disk.0.mount), strings unescaped onto
# one line, and "path#<TAB>N" for the length of each array.
# shellcheck disable=SC2016 # awk program
_FLAT_AWK='
function path(k,   p, l) {
	p = ""
	for (l = 1; l <= k; l++) p = p (l > 1 ? "." : "") (typ[l] == "{" ? key[l] : idx[l])
	return p
}
{ s = (NR > 1) ? s "\n" $0 : $0 }
END {
	n = length(s); d = 0; i = 1
	while (i <= n) {
		c = substr(s, i, 1)
		if (c == "{" || c == "[") {
			had[d] = 1; d++; typ[d] = c; idx[d] = 0; wk[d] = (c == "{"); had[d] = 0
		} else if (c == "}" || c == "]") {
			if (c == "]") print path(d - 1) "#\t" (had[d] ? idx[d] + 1 : 0)
			d--
		} else if (c == ",") {
			if (typ[d] == "[") idx[d]++; else wk[d] = 1
		} else if (c == "\"") {
			str = ""; i++
			while (i <= n && (c = substr(s, i, 1)) != "\"") {
				if (c == "\\") {
					c = substr(s, ++i, 1)
					if (c == "u") {
						c = substr(s, i + 1, 4); i += 4
						c = (c ~ /^00[2-7]/) ? sprintf("%c", index("0123456789abcdef", tolower(substr(c, 3, 1))) * 16 + index("0123456789abcdef", tolower(substr(c, 4, 1))) - 17) : " "
					} else if (c ~ /[ntrbf]/) c = " "
				}
				str = str c; i++
			}
			if (typ[d] == "{" && wk[d]) { key[d] = str; wk[d] = 0 }
			else { had[d] = 1; print path(d) "\t" str }
		} else if (!index(" \t\r\n:", c)) {
			tok = ""
			while (i <= n && !index(" \t\r\n,:{}[]", c = substr(s, i, 1))) { tok = tok c; i++ }
			had[d] = 1; print path(d) "\t" tok
			continue
		}
		i++
	}
}'

# Helpers for the text renderers: v[path] holds the flattened JSON;
# kb() and secs() write sizes and durations the way df -h and uptime do.
# shellcheck disable=SC2016 # awk program
TEXT_AWK='
{ t = index($0, "\t"); v[substr($0, 1, t - 1)] = substr($0, t + 1) }
function kb(k) {
	if (k == "" || k == "null") return "?"
	k += 0
	if (k >= 1048576) return sprintf("%.1fG", k / 1048576)
	if (k >= 10240) return sprintf("%.0fM", k / 1024)
	if (k >= 1024) return sprintf("%.1fM", k / 1024)
	return sprintf("%dK", k)
}
function secs(s) {
	if (s == "" || s == "null") return "?"
	s += 0
	if (s >= 86400) return sprintf("%dd %dh", s / 86400, s % 86400 / 3600)
	if (s >= 3600) return sprintf("%dh %dm", s / 3600, s % 3600 / 60)
	if (s >= 60) return sprintf("%dm", s / 60)
	return sprintf("%ds", s)
}
function n(p) { return (p "#") in v ? v[p "#"] + 0 : 0 }
function warnings(   i) {
	for (i = 0; i < n("warnings"); i++) printf "! %s\n", v["warnings." i]
}
'

# emit JSON RENDER: prints JSON, or for --text the answer RENDER (awk,
# run after TEXT_AWK over the flattened JSON; usually an END block) writes.
emit() {
	if [ "$FORMAT" = text ]; then
		printf '%s\n' "$1" | awk "$_FLAT_AWK" | awk "$TEXT_AWK$2"
	else
		printf '%s\n' "$1"
	fi
}

# ---- end of the common part (identical in every bundled skill) ----

# Skill-specific helpers: netdiag.

# awk functions for the /proc/net tables. Use as "$JSON_AWK$NET_AWK"'...'.
NET_AWK='
function hexv(h,   i, v, d) {
	v = 0
	for (i = 1; i <= length(h); i++) {
		d = index("0123456789abcdef", tolower(substr(h, i, 1)))
		if (d == 0) return 0
		v = v * 16 + d - 1
	}
	return v
}
# test bit b (a power of two) of v, without bitwise operators
function bit(v, b) { return int(v / b) % 2 }
# 8 hex digits of an IPv4 address as /proc/net/route stores it (host byte
# order): be = 1 on big-endian machines
function ip4(h, be) {
	if (be) return hexv(substr(h, 1, 2)) "." hexv(substr(h, 3, 2)) "." \
	    hexv(substr(h, 5, 2)) "." hexv(substr(h, 7, 2))
	return hexv(substr(h, 7, 2)) "." hexv(substr(h, 5, 2)) "." \
	    hexv(substr(h, 3, 2)) "." hexv(substr(h, 1, 2))
}
# number of one bits in a hex netmask (byte order does not matter)
function maskbits(h,   i, v, n) {
	n = 0; v = hexv(h)
	for (i = 0; i < 32; i++) { n += v % 2; v = int(v / 2) }
	return n
}
# 32 hex digits -> IPv6 text with the longest zero run as "::" (RFC 5952)
function ip6(h,   i, g, a, best, bl, cs, cl, s) {
	h = tolower(h)
	for (i = 0; i < 8; i++) {
		g = substr(h, i * 4 + 1, 4); sub(/^0+/, "", g)
		a[i] = (g == "") ? "0" : g
	}
	best = -1; bl = 0; cs = -1; cl = 0
	for (i = 0; i < 8; i++) {
		if (a[i] == "0") {
			if (cs < 0) { cs = i; cl = 0 }
			cl++
			if (cl > bl) { bl = cl; best = cs }
		} else cs = -1
	}
	if (bl < 2) best = -1
	s = ""
	for (i = 0; i < 8; i++) {
		if (i == best) { s = s "::"; i += bl - 1; continue }
		if (s != "" && s !~ /::$/) s = s ":"
		s = s a[i]
	}
	return s
}
'

# byte_order: "be" or "le" (for /proc/net/route), empty when unknown.
byte_order() {
	tool od || return 0
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	case $(printf 'AB' | $TOOL -x 2>/dev/null | awk 'NR == 1 { print $2 }') in
	4241) echo le ;;
	4142) echo be ;;
	esac
}

# valid_host TEXT: a host name or address we are willing to pass to ping,
# nc or nslookup: 1-253 of [A-Za-z0-9._:-], not starting with - or .
valid_host() {
	case $1 in
	"" | -* | .* | *[!A-Za-z0-9._:-]*) return 1 ;;
	esac
	[ "${#1}" -le 253 ]
}

is_ip() {
	case $1 in
	*:*) case $1 in *[!0-9A-Fa-f:.]*) return 1 ;; esac ;;
	*.*.*.*) case $1 in *[!0-9.]*) return 1 ;; esac ;;
	*) return 1 ;;
	esac
}

# nameservers [FILE]: the nameserver lines of a resolv.conf, one a line.
nameservers() {
	awk '$1 == "nameserver" && NF >= 2 { print $2 }' "${1:-/etc/resolv.conf}" 2>/dev/null
}

# hosts_lookup NAME: addresses for NAME in /etc/hosts, one a line.
hosts_lookup() {
	awk -v n="$1" '
	BEGIN { n = tolower(n) }
	{ sub(/#.*/, "") }
	NF >= 2 {
		for (i = 2; i <= NF; i++)
			if (tolower($i) == n && !($1 in seen)) { seen[$1] = 1; print $1 }
	}' /etc/hosts 2>/dev/null
}

# Reads nslookup output (BusyBox old and new, bind): prints "S server",
# "A address" for each answer, "E reason" when the lookup failed.
# shellcheck disable=SC2016 # awk program
NSLOOKUP_AWK='
function addr(s) { return (s ~ /^[0-9A-Fa-f:.]+$/ && s ~ /[.:]/) }
/^Name:/ { answers = 1; next }
/^Server:/ { next }
/^Address( [0-9]+)?:/ {
	v = $0; sub(/^Address( [0-9]+)?:[ \t]*/, "", v); sub(/[ \t].*/, "", v)
	if (!answers) {
		sub(/#[0-9]+$/, "", v)
		if (v ~ /^\[/) { sub(/^\[/, "", v); sub(/\].*/, "", v) }
		else if (v ~ /\./) sub(/:[0-9]+$/, "", v)
		if (!srv) { srv = 1; print "S " v }
	} else if (addr(v) && !(v in seen)) { seen[v] = 1; print "A " v }
	next
}
function fail(p, m) { if (p > prio) { prio = p; err = m } }
/can.t find|NXDOMAIN/ { e = $0; sub(/.*: */, "", e); fail(4, e == "" ? $0 : e); next }
/can.t resolve|not found/ { fail(4, "not found"); next }
/refused/ { fail(3, "connection refused"); next }
/unreachable/ { fail(3, "network unreachable"); next }
/timed out|no servers could be reached/ { fail(2, "timeout"); next }
/^nslookup:|^;;/ { e = $0; sub(/^(nslookup: *|;; *)/, "", e); fail(1, e); next }
END { if (err != "") print "E " err }
'

# resolve NAME [SERVER] [SECS]: fills RES_ADDRS (one a line), RES_VIA
# (literal, hosts, getent, nslookup, none), RES_SERVER and RES_ERR.
# Without SERVER it answers like the system does: /etc/hosts first, then
# getent (NSS), then a DNS query with nslookup (which tells NXDOMAIN from
# a timeout). Each tool gets SECS (default 5) seconds.
# shellcheck disable=SC2034 # RES_* are results for the caller
resolve() {
	RES_ADDRS='' RES_VIA=none RES_SERVER='' RES_ERR=''
	_to=${3:-5}
	if is_ip "$1"; then
		RES_ADDRS=$1 RES_VIA=literal
		return 0
	fi
	if [ -z "$2" ]; then
		RES_ADDRS=$(hosts_lookup "$1")
		if [ -n "$RES_ADDRS" ]; then
			RES_VIA=hosts
			return 0
		fi
		if have getent; then
			_o=$(run_to "$_to" getent ahosts "$1" 2>/dev/null)
			_rc=$?
			RES_ADDRS=$(printf '%s\n' "$_o" | awk 'NF && !($1 in s) { s[$1] = 1; print $1 }')
			RES_VIA=getent
			[ -n "$RES_ADDRS" ] && return 0
			RES_ERR="not found"
			if [ "$_rc" -ge 128 ]; then
				# The DNS query itself hangs: do not wait twice.
				RES_ERR=timeout
				return 1
			fi
		fi
	fi
	if tool nslookup; then
		# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
		_o=$(run_to "$_to" $TOOL "$1" ${2:+"$2"} 2>&1)
		[ $? -ge 128 ] && _o="$_o
;; connection timed out"
		_p=$(printf '%s\n' "$_o" | awk "$NSLOOKUP_AWK")
		RES_VIA=nslookup
		RES_SERVER=$(printf '%s\n' "$_p" | sed -n 's/^S //p')
		RES_ADDRS=$(printf '%s\n' "$_p" | sed -n 's/^A //p')
		RES_ERR=$(printf '%s\n' "$_p" | sed -n 's/^E //p')
		if [ -n "$RES_ADDRS" ]; then
			RES_ERR=
		elif [ -z "$RES_ERR" ]; then
			RES_ERR="no address in the answer"
		fi
	elif [ "$RES_VIA" = none ]; then
		RES_ERR="no resolver tool (nslookup or getent)"
	fi
	[ -n "$RES_ADDRS" ]
}

# routes_scan: the main routing tables from /proc/net/route and
# /proc/net/ipv6_route, one route a line: "4 {json}" or "6 {json}".
# Local, multicast, cache and kernel "unreachable" entries are left out.
routes_scan() {
	{
		echo @r4
		cat /proc/net/route 2>/dev/null
		echo @r6
		cat /proc/net/ipv6_route 2>/dev/null
	} | awk -v order="$(byte_order)" "$JSON_AWK$NET_AWK"'
	function flagstr(f, gw,   s) {
		s = bit(f, 1) ? "U" : ""
		if (gw) s = s "G"
		if (bit(f, 4)) s = s "H"
		if (bit(f, 512)) s = s "!"
		return s
	}
	$1 == "@r4" { part = 4; next }
	$1 == "@r6" { part = 6; next }
	part == 4 && $1 != "Iface" && NF >= 8 {
		n4++; ifc[n4] = $1; dst[n4] = $2; gw[n4] = $3; fl[n4] = hexv($4)
		met[n4] = $7; msk[n4] = $8
		if (order == "" && $8 != "00000000" && toupper($8) != "FFFFFFFF") {
			if (substr($8, 1, 2) == "00") guess = "le"
			else if (substr($8, 7, 2) == "00") guess = "be"
		}
		next
	}
	part == 6 && NF >= 10 {
		f = hexv($9)
		if (bit(f, 2147483648) || bit(f, 16777216)) next
		if (substr($1, 1, 2) == "ff") next
		if ($10 == "lo" && bit(f, 512)) next
		g = ($5 ~ /^0+$/) ? "null" : jstr(ip6($5))
		printf "6 {\"dest\":%s,\"gateway\":%s,\"iface\":%s,\"metric\":%.0f,\"flags\":%s}\n", \
		    jstr(ip6($1) "/" hexv($2)), g, jstr($10), hexv($6), jstr(flagstr(f, g != "null"))
	}
	END {
		if (order == "") order = (guess != "") ? guess : "le"
		be = (order == "be")
		for (i = 1; i <= n4; i++) {
			g = (gw[i] ~ /^0+$/) ? "null" : jstr(ip4(gw[i], be))
			printf "4 {\"dest\":%s,\"gateway\":%s,\"iface\":%s,\"metric\":%d,\"flags\":%s}\n", \
			    jstr(ip4(dst[i], be) "/" maskbits(msk[i])), g, jstr(ifc[i]), met[i], \
			    jstr(flagstr(fl[i], g != "null"))
		}
	}'
}

# default_route FAMILY: reads routes_scan lines, prints the default route
# of that family with the lowest metric, or null.
default_route() {
	awk -v f="$1" '
	$1 == f && /"dest":"(0\.0\.0\.0|::)\/0"/ && /"flags":"U/ && !/"flags":"[^"]*!/ {
		m = $0; sub(/.*"metric":/, "", m); sub(/,.*/, "", m)
		if (best == "" || m + 0 < bm) { best = substr($0, length(f) + 2); bm = m + 0 }
	}
	END { print (best == "" ? "null" : best) }'
}
