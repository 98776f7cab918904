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

# Skill-specific helpers: sysinfo.

# df_scan [PATH]: one line "J [filesystems...]" then "W warning" lines.
# Sizes come from df -kP; type and ro from /proc/mounts. Pseudo and
# per-session mounts (/proc, /sys, /dev, /run/...) are left out, and a
# block device mounted twice (bind mounts) is listed once.
df_scan() {
	_df=
	if tool df; then
		# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
		_df=$($TOOL -kP "$@" 2>/dev/null) || _df=$($TOOL -k "$@" 2>/dev/null)
	fi
	{
		echo @mounts
		cat /proc/mounts 2>/dev/null
		echo @df
		[ -n "$_df" ] && printf '%s\n' "$_df"
	} | awk -v one="$#" -v havedf="${_df:+1}" "$JSON_AWK"'
	function unoct(s) { gsub(/\\040/, " ", s); gsub(/\\011/, "\t", s); return s }
	$1 == "@mounts" { part = 1; next }
	$1 == "@df" { part = 2; next }
	part == 1 {
		m = unoct($2); mtype[m] = $3
		mro[m] = ("," $4 ",") ~ /,ro,/ ? "true" : "false"
		next
	}
	part == 2 && /^Filesystem/ { next }
	part == 2 && NF == 1 { held = $1; next }
	part == 2 {
		if (held != "") { $0 = held " " $0; held = "" }
		if ($2 !~ /^[0-9]+$/ || NF < 6) next
		mp = $6
		for (i = 7; i <= NF; i++) mp = mp " " $i
		if (!one) {
			if ($2 == 0) next
			if (mp ~ /^\/(proc|sys|dev)(\/|$)/ || mp ~ /^\/run\//) next
			if ($1 ~ /^\//) {
				k = $1 " " $2 " " $3
				if (k in seen) next
				seen[k] = 1
			}
		}
		pct = $5; sub(/%$/, "", pct)
		t = (mp in mtype) ? jstr(mtype[mp]) : "null"
		ro = (mp in mro) ? mro[mp] : "null"
		j = j (n++ ? "," : "") "{\"mount\":" jstr(mp) ",\"fs\":" jstr($1) \
		    ",\"type\":" t ",\"ro\":" ro ",\"size_kb\":" jnum($2) \
		    ",\"used_kb\":" jnum($3) ",\"avail_kb\":" jnum($4) \
		    ",\"use_pct\":" jnum(pct) "}"
		if (ro != "true" && pct + 0 >= 90)
			w[++nw] = sprintf("filesystem %s is %d%% full (%d MB free)", mp, pct, $4 / 1024)
		else if (ro != "true" && $2 > 0 && $4 + 0 < 1024)
			w[++nw] = sprintf("filesystem %s has less than 1 MB free", mp)
	}
	END {
		print "J [" j "]"
		if (!havedf) print "W df is not available: no filesystem sizes"
		for (i = 1; i <= nw; i++) print "W " w[i]
	}'
}
