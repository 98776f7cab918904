#!/bin/sh
# routes.sh - the routing table (main table, IPv4 and IPv6) and the default
# routes. No input. Reads /proc/net/route and /proc/net/ipv6_route.
#
# Output: {"default_ipv4":{route}|null,"default_ipv6":{route}|null,
#   "ipv4":[{"dest":"192.168.1.0/24","gateway":null,"iface":"br-lan",
#            "metric":0,"flags":"U"}],"ipv6":[...],"warnings":[..]}
# flags: U up, G via a gateway, H host route, ! reject (unreachable).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
[ -r /proc/net/route ] || [ -r /proc/net/ipv6_route ] ||
	die 1 "no routing table: /proc/net/route is not readable"

r=$(routes_scan)
list() { # FAMILY: JSON array of that family's routes
	printf '%s\n' "$r" | awk -v f="$1" '
	$1 == f { j = j (n++ ? "," : "") substr($0, length(f) + 2) }
	END { printf "[%s]", j }'
}
d4=$(printf '%s\n' "$r" | default_route 4)
d6=$(printf '%s\n' "$r" | default_route 6)
warn=
if [ "$d4" = null ] && [ "$d6" = null ]; then
	warn="no default route: only directly connected networks are reachable"
fi
emit "$(printf '{"default_ipv4":%s,"default_ipv6":%s,"ipv4":%s,"ipv6":%s,"warnings":%s}' \
	"$d4" "$d6" "$(list 4)" "$(list 6)" "$(printf '%s\n' "$warn" | json_lines)")" '
function one(f, p) {
	printf "  %-22s %s%s%s\n", v[p ".dest"], (v[p ".gateway"] == "null" ? "" : "via " v[p ".gateway"] " "), \
	    "on " v[p ".iface"], (v[p ".metric"] + 0 ? ", metric " v[p ".metric"] : "")
}
END {
	for (k = 4; k <= 6; k += 2) {
		d = "default_ipv" k
		if (v[d ".iface"] == "") printf "IPv%d default route: none\n", k
		else printf "IPv%d default route: %s%s\n", k, (v[d ".gateway"] == "null" ? "" : "via " v[d ".gateway"] " "), "on " v[d ".iface"]
	}
	for (k = 4; k <= 6; k += 2) {
		printf "IPv%d routes (%d):\n", k, n("ipv" k)
		for (i = 0; i < n("ipv" k); i++) one(k, "ipv" k "." i)
	}
	warnings()
}'
