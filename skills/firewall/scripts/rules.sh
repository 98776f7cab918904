#!/bin/sh
# rules.sh - a read-only summary of the live firewall: default policies of
# the base chains, how many tables, chains and rules, and which ports the
# input rules accept. Reads `nft list ruleset` (OpenWrt fw4, nftables), else
# `iptables -S` (fw3, iptables). Changes nothing.
#
# Input:  {} (none)
# Output: {"tool":"nft"|"iptables","tables":N,"chains":N,"rules":N,
#   "policies":[{"chain":"inet fw4 input","policy":"drop"}],
#   "open_ports":[{"proto":"tcp","port":"22","chain":"input_wan"}],
#   "warnings":[..]}
# Reading the rules needs root (CAP_NET_ADMIN): without it the script says
# so and exits 1.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
fail() { # TOOL OUTPUT
	case $2 in
	*[Pp]ermission* | *"not permitted"* | *"you must be root"*)
		die 1 "reading the firewall needs root: $1 says \"$(printf '%s\n' "$2" | head -n 1)\"" ;;
	esac
	die 1 "$1 failed: $(printf '%s\n' "$2" | head -n 1)"
}

if tool nft; then
	t=nft
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	out=$(run_to 10 $TOOL list ruleset 2>&1) || fail nft "$out"
	recs=$(printf '%s\n' "$out" | awk '
	$1 == "table" { tbl = $2 " " $3; print "T"; next }
	$1 == "chain" { ch = $2; print "C"; inch = 1; next }
	($1 == "set" || $1 == "map" || $1 == "flowtable") && /\{$/ { inset = 1; next }
	inset { if ($1 == "}") inset = 0; next }
	$1 == "}" { inch = 0; next }
	!inch || NF == 0 { next }
	$1 == "type" && / hook / {
		h = $0; sub(/.* hook /, "", h); sub(/ .*/, "", h); hook[ch] = h
		if (match($0, /policy [a-z]+/)) print "P\t" tbl " " ch "\t" substr($0, RSTART + 7, RLENGTH - 7)
		next
	}
	{ print "R" }
	(ch ~ /^input/ || hook[ch] == "input") && / dport / && / accept/ {
		p = $0; sub(/.* dport /, "", p)
		if (p ~ /^\{/) { sub(/^\{ */, "", p); sub(/ *\}.*/, "", p) } else sub(/ .*/, "", p)
		pr = ($0 ~ /udp dport/) ? "udp" : ($0 ~ /tcp dport/) ? "tcp" : "tcp/udp"
		n = split(p, ps, / *, */)
		for (i = 1; i <= n; i++) print "O\t" pr "\t" ps[i] "\t" ch
	}')
elif tool iptables; then
	t=iptables
	# shellcheck disable=SC2086
	out=$(run_to 10 $TOOL -S 2>&1) || fail iptables "$out"
	recs=$(printf '%s\n' "$out" | awk '
	BEGIN { print "T" }
	$1 == "-P" { print "C"; print "P\tfilter " $2 "\t" tolower($3) }
	$1 == "-N" { print "C" }
	$1 == "-A" {
		print "R"
		if (($2 == "INPUT" || $2 ~ /^input/) && / -j ACCEPT/ && / --dports? /) {
			pr = "tcp"; p = ""
			for (i = 3; i < NF; i++) { if ($i == "-p") pr = $(i + 1); if ($i == "--dport" || $i == "--dports") p = $(i + 1) }
			n = split(p, ps, ",")
			for (i = 1; i <= n; i++) print "O\t" pr "\t" ps[i] "\t" $2
		}
	}')
else
	die 1 "no firewall tool: neither nft nor iptables is installed"
fi

json=$(printf '%s\n' "$recs" | awk -F '	' -v tool="$t" "$JSON_AWK"'
$1 == "T" { nt++ } $1 == "C" { nc++ } $1 == "R" { nr++ }
$1 == "P" { p = p (np++ ? "," : "") "{\"chain\":" jstr($2) ",\"policy\":" jstr($3) "}"
	if ($2 ~ /[ ](input|INPUT)$/ && $3 == "accept") w[++nw] = "the " $2 " chain accepts by default: anything not blocked is let in" }
$1 == "O" && !(($2 "/" $3) in seen) { seen[$2 "/" $3] = 1; o = o (no++ ? "," : "") "{\"proto\":" jstr($2) ",\"port\":" jstr($3) ",\"chain\":" jstr($4) "}" }
END {
	if (nr == 0) w[++nw] = "there are no firewall rules at all"
	printf "{\"tool\":%s,\"tables\":%d,\"chains\":%d,\"rules\":%d,\"policies\":[%s],\"open_ports\":[%s],\"warnings\":[", \
	    jstr(tool), nt, nc, nr, p, o
	for (i = 1; i <= nw; i++) printf "%s%s", (i > 1 ? "," : ""), jstr(w[i])
	printf "]}"
}')
emit "$json" '
END {
	printf "Firewall (%s): %d rules in %d chains, %d table%s.\n", v["tool"], v["rules"], v["chains"], \
	    v["tables"], (v["tables"] == 1 ? "" : "s")
	for (i = 0; i < n("policies"); i++) p = p (i ? ", " : "") v["policies." i ".chain"] " " v["policies." i ".policy"]
	if (p != "") printf "Default policies: %s\n", p
	for (i = 0; i < n("open_ports"); i++)
		o = o (i ? ", " : "") v["open_ports." i ".port"] "/" v["open_ports." i ".proto"] " (" v["open_ports." i ".chain"] ")"
	printf "Ports open to incoming traffic: %s\n", (o == "" ? "none found in the input rules" : o)
	warnings()
}'
