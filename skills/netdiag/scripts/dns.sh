#!/bin/sh
# dns.sh - resolve a name the way this device does, and say which step
# answered: /etc/hosts, the system resolver (getent), or a DNS query.
#
# Input:  {"name": "example.org", "server": "9.9.9.9"}
#   name    host name to resolve (required; also taken from the first
#           argument)
#   server  optional DNS server to ask directly (skips /etc/hosts and getent)
# Output: {"name":..,"resolved":true,"addresses":[..],"via":"hosts"|
#   "getent"|"nslookup"|"none","server":"10.0.0.1"|null,"error":null|"..",
#   "nameservers":[..],"search":[..]}
# A name that does not resolve is a result (exit 0, "resolved": false).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
in_str name NAME "${1:-}"
in_str server SERVER ""
[ -n "$NAME" ] || die 2 "\"name\" is required, e.g. {\"name\":\"example.org\"}"
valid_host "$NAME" || die 2 "\"name\" must be a host name (letters, digits, . - _ :)"
if [ -n "$SERVER" ]; then
	valid_host "$SERVER" || die 2 "\"server\" must be an address or host name"
fi

resolve "$NAME" "$SERVER" 6
ok=false
[ -n "$RES_ADDRS" ] && ok=true
if [ -z "$RES_ADDRS" ] && [ "$RES_VIA" = none ]; then
	die 1 "$RES_ERR"
fi
server=null
[ -n "$RES_SERVER" ] && server=$(json_str "$RES_SERVER")
[ -n "$SERVER" ] && [ -z "$RES_SERVER" ] && server=$(json_str "$SERVER")
err=null
[ -n "$RES_ERR" ] && err=$(json_str "$RES_ERR")
search=$(awk '$1 == "search" || $1 == "domain" { for (i = 2; i <= NF; i++) print $i }' \
	/etc/resolv.conf 2>/dev/null | json_lines)

emit "$(printf '{"name":%s,"resolved":%s,"addresses":%s,"via":%s,"server":%s,"error":%s,"nameservers":%s,"search":%s}' \
	"$(json_str "$NAME")" "$ok" "$(printf '%s\n' "$RES_ADDRS" | json_lines)" \
	"$(json_str "$RES_VIA")" "$server" "$err" "$(nameservers /etc/resolv.conf | json_lines)" \
	"$search")" '
END {
	if (v["resolved"] == "true") {
		for (i = 0; i < n("addresses"); i++) a = a (i ? ", " : "") v["addresses." i]
		printf "%s resolves to %s (answered by %s%s).\n", v["name"], a, v["via"], \
		    (v["server"] != "null" ? ", server " v["server"] : "")
	} else
		printf "%s does not resolve: %s%s.\n", v["name"], (v["error"] == "null" ? "no address" : v["error"]), \
		    (v["server"] != "null" ? " (asked " v["server"] ")" : "")
	for (i = 0; i < n("nameservers"); i++) s = s (i ? ", " : "") v["nameservers." i]
	printf "This device asks: %s\n", (s == "" ? "no DNS server (/etc/resolv.conf is empty)" : s)
}'
