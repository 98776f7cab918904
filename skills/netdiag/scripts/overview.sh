#!/bin/sh
# overview.sh - the network state at a glance: interfaces (link state,
# addresses, traffic and error counters), default routes, DNS servers, and
# plain-language warnings. No input; sends no packets.
#
# Output: {"hostname":..,"interfaces":[{"name":"eth0","state":"up",
#   "admin_up":true,"carrier":true,"mtu":1500,"mac":"..","ipv4":["a.b.c.d/24"],
#   "ipv6":["fe80::1/64"],"rx_bytes":N,"rx_packets":N,"rx_errors":N,
#   "rx_dropped":N,"tx_bytes":N,"tx_packets":N,"tx_errors":N,
#   "tx_dropped":N}],"default_ipv4":{route}|null,"default_ipv6":{route}|null,
#   "dns":{"nameservers":[..],"search":[..],"upstream":[{"file":..,
#   "nameservers":[..]}]},"sources":{"link":..,"ipv4":..},"warnings":[..]}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
[ -r /proc/net/dev ] || die 1 "/proc/net/dev is not readable: is /proc mounted?"

# Link state: /sys first, then `ip -o link`, then ifconfig.
link_src=none
links=
v() { # a /sys attribute of interface $d, or "-"
	x=$(cat "$d/$1" 2>/dev/null) && [ -n "$x" ] && printf '%s' "$x" || printf '%s' -
}
if [ -d /sys/class/net ]; then
	for d in /sys/class/net/*; do
		[ -e "$d/flags" ] || continue
		links="${links}S ${d##*/} $(v flags) $(v carrier) $(v mtu) $(v address) $(v operstate)
"
	done
	[ -n "$links" ] && link_src=sys
fi
ifc_out=
if tool ifconfig; then
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	ifc_out=$($TOOL -a 2>/dev/null)
fi
ip_tool=
if tool ip; then
	ip_tool=$TOOL
fi
if [ -z "$links" ] && [ -n "$ip_tool" ]; then
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	links=$($ip_tool -o link show 2>/dev/null | awk '
	{
		n = $2; sub(/:$/, "", n); sub(/@.*/, "", n)
		f = $3; up = (f ~ /[<,]UP[,>]/) ? 1 : 0; lo = (f ~ /LOWER_UP/) ? 1 : 0
		mtu = "-"; mac = "-"; st = "-"
		for (i = 4; i < NF; i++) {
			if ($i == "mtu") mtu = $(i + 1)
			if ($i == "state") st = tolower($(i + 1))
			if ($i ~ /^link\//) mac = $(i + 1)
		}
		print "L", n, up, lo, mtu, mac, st
	}')
	[ -n "$links" ] && link_src=ip
fi

# IPv4 addresses: ip, then ifconfig, then /proc/net/fib_trie.
v4_src=none
v4=
if [ -n "$ip_tool" ]; then
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	v4=$($ip_tool -o addr show 2>/dev/null | awk '
	$3 == "inet" { n = $2; sub(/:$/, "", n); sub(/@.*/, "", n); print "V", n, $4 }')
	[ -n "$v4" ] && v4_src=ip
fi
if [ -n "$ifc_out" ]; then
	# Old style (BusyBox, old net-tools): "inet addr:A ... Mask:M";
	# new net-tools: "inet A  netmask M". Flags UP and RUNNING.
	ifc=$(printf '%s\n' "$ifc_out" | awk '
	function bits(m,   a, i, n, v) {
		n = 0; split(m, a, ".")
		for (i = 1; i <= 4; i++) { v = a[i] + 0; while (v > 0) { n += v % 2; v = int(v / 2) } }
		return n
	}
	/^[^ \t]/ {
		name = $1; sub(/:$/, "", name); sub(/:[0-9]+$/, "", name)
		if (!(name in seen)) { seen[name] = 1; names[++nn] = name }
		mac[name] = "-"
		for (i = 1; i < NF; i++) if ($i == "HWaddr" || $i == "ether") mac[name] = tolower($(i + 1))
		if ($0 ~ /flags=/) { fl[name] = $0; mtu[name] = $NF }
	}
	/^[ \t]/ && $1 == "ether" { mac[name] = tolower($2) }
	/^[ \t]/ && $1 == "inet" {
		a = ""; m = ""
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^addr:/) { a = $i; sub(/^addr:/, "", a) }
			else if ($i ~ /^[Mm]ask:/) { m = $i; sub(/^[Mm]ask:/, "", m) }
			else if ($i == "netmask") m = $(i + 1)
			else if (i == 2 && $i ~ /^[0-9.]+$/) a = $i
		}
		if (a != "") print "V", name, a "/" (m == "" ? 32 : bits(m))
	}
	/^[ \t]/ && /MTU:/ { fl[name] = $0; for (i = 1; i <= NF; i++) if ($i ~ /^MTU:/) { mtu[name] = $i; sub(/^MTU:/, "", mtu[name]) } }
	END {
		for (i = 1; i <= nn; i++) {
			n = names[i]
			up = (fl[n] ~ /(^|[ <,])UP([ >,]|$)/) ? 1 : 0
			run = (fl[n] ~ /RUNNING/) ? 1 : 0
			print "L", n, up, run, (mtu[n] == "" ? "-" : mtu[n]), mac[n], "-"
		}
	}')
	if [ -z "$v4" ]; then
		v4=$(printf '%s\n' "$ifc" | grep '^V ')
		[ -n "$v4" ] && v4_src=ifconfig
	fi
	if [ -z "$links" ]; then
		links=$(printf '%s\n' "$ifc" | grep '^L ')
		[ -n "$links" ] && link_src=ifconfig
	fi
fi
routes=$(routes_scan)
if [ -z "$v4" ] && [ -r /proc/net/fib_trie ]; then
	# Local addresses are the "/32 host LOCAL" leaves; the interface and
	# prefix come from the connected route that holds the address.
	v4=$({
		cat /proc/net/fib_trie
		echo @routes
		printf '%s\n' "$routes" | grep '^4 '
	} | awk '
	function num(a,   p) { split(a, p, "."); return ((p[1] * 256 + p[2]) * 256 + p[3]) * 256 + p[4] }
	$1 == "@routes" { part = 1; next }
	!part && $1 == "|--" { last = $2; next }
	!part && $1 == "/32" && $2 == "host" && $3 == "LOCAL" { if (!(last in seen)) { seen[last] = 1; addrs[++na] = last } next }
	part && /"gateway":null/ {
		d = $0; sub(/.*"dest":"/, "", d); sub(/".*/, "", d)
		f = $0; sub(/.*"iface":"/, "", f); sub(/".*/, "", f)
		split(d, dp, "/"); nr++; rnet[nr] = num(dp[1]); rlen[nr] = dp[2]; rif[nr] = f
	}
	END {
		for (i = 1; i <= na; i++) {
			a = addrs[i]; best = -1
			for (r = 1; r <= nr; r++) {
				size = 2 ^ (32 - rlen[r])
				if (int(num(a) / size) == int(rnet[r] / size) && rlen[r] > best) { best = rlen[r]; bi = r }
			}
			if (best >= 0) print "V", rif[bi], a "/" best
			else if (a ~ /^127\./) print "V", "lo", a "/8"
			else print "V", "?", a "/32"
		}
	}')
	[ -n "$v4" ] && v4_src=fib_trie
fi

d4=$(printf '%s\n' "$routes" | default_route 4)
d6=$(printf '%s\n' "$routes" | default_route 6)

ifaces=$({
	printf '%s\n' "$links"
	printf '%s\n' "$v4"
	printf '@d4 %s\n' "$d4"
	printf '@d6 %s\n' "$d6"
	echo @dev
	cat /proc/net/dev
	echo @if6
	cat /proc/net/if_inet6 2>/dev/null
} | awk "$JSON_AWK$NET_AWK"'
function ifname(n) { if (!(n in known)) { known[n] = 1; order[++ni] = n } return n }
function addto(arr, n, v) { arr[n] = (arr[n] == "" ? "" : arr[n] ",") jstr(v) }
function opt(v) { return (v == "-" || v == "") ? "null" : v }
$1 == "S" {
	n = ifname($2); f = $3; sub(/^0x/, "", f); f = hexv(f)
	up[n] = bit(f, 1) ? "true" : "false"
	car[n] = ($4 == "1") ? "true" : ($4 == "0") ? "false" : "null"
	mtu[n] = opt($5); mac[n] = ($6 == "-") ? "null" : jstr($6)
	s = $7
	if (s == "unknown" && up[n] == "true" && car[n] == "true") s = "up"
	st[n] = (s == "-") ? "null" : jstr(s)
	next
}
$1 == "L" {
	n = ifname($2)
	up[n] = $3 ? "true" : "false"; car[n] = $4 ? "true" : "false"
	mtu[n] = opt($5); mac[n] = ($6 == "-") ? "null" : jstr($6)
	s = $7
	if (s == "-" || s == "unknown" && $3 && $4) s = !$3 ? "down" : $4 ? "up" : "no-carrier"
	st[n] = jstr(s)
	next
}
$1 == "V" { addto(ip4s, ifname($2), $3); next }
$1 == "@d4" || $1 == "@d6" {
	if ($2 != "null") { g = $0; sub(/.*"iface":"/, "", g); sub(/".*/, "", g); dif[g] = 1 }
	if ($2 != "null") hasdef = 1
	next
}
$1 == "@dev" { part = "dev"; next }
$1 == "@if6" { part = "if6"; next }
part == "dev" && /:/ {
	line = $0; sub(/:/, " ", line); split(line, c, " ")
	n = ifname(c[1])
	ctr[n] = sprintf("\"rx_bytes\":%s,\"rx_packets\":%s,\"rx_errors\":%s,\"rx_dropped\":%s,\"tx_bytes\":%s,\"tx_packets\":%s,\"tx_errors\":%s,\"tx_dropped\":%s", \
	    jnum(c[2]), jnum(c[3]), jnum(c[4]), jnum(c[5]), jnum(c[10]), jnum(c[11]), jnum(c[12]), jnum(c[13]))
	rxe[n] = c[4] + 0; txe[n] = c[12] + 0
	next
}
part == "if6" && NF >= 6 { addto(ip6s, ifname($6), ip6($1) "/" hexv($3)); next }
END {
	printf "["
	for (i = 1; i <= ni; i++) {
		n = order[i]
		printf "%s{\"name\":%s,\"state\":%s,\"admin_up\":%s,\"carrier\":%s,\"mtu\":%s,\"mac\":%s,\"ipv4\":[%s],\"ipv6\":[%s]%s}", \
		    (i > 1 ? "," : ""), jstr(n), (n in st) ? st[n] : "null", \
		    (n in up) ? up[n] : "null", (n in car) ? car[n] : "null", \
		    (n in mtu) ? mtu[n] : "null", (n in mac) ? mac[n] : "null", \
		    ip4s[n], ip6s[n], (n in ctr) ? "," ctr[n] : ""
	}
	printf "]\n"
	for (i = 1; i <= ni; i++) {
		n = order[i]
		if (n == "lo" || n == "?") continue
		if (up[n] == "true" && car[n] == "false")
			printf "W %s is enabled but has no link (cable unplugged, or radio not associated)\n", n
		if ((n in dif) && up[n] == "false")
			printf "W the default route goes through %s, which is down\n", n
		if (rxe[n] + txe[n] > 0)
			printf "W %s has %d receive and %d transmit errors since boot\n", n, rxe[n], txe[n]
	}
	if (!hasdef) print "W no default route: only directly connected networks are reachable"
}')
warn=$(printf '%s\n' "$ifaces" | sed -n 's/^W //p')
ifaces=$(printf '%s\n' "$ifaces" | sed -n 1p)

# DNS: resolv.conf, and the upstream servers of a local forwarder
# (dnsmasq on OpenWrt, systemd-resolved).
ns=$(nameservers /etc/resolv.conf)
[ -n "$ns" ] || warn="${warn:+$warn
}no DNS server in /etc/resolv.conf: names will not resolve"
search=$(awk '$1 == "search" || $1 == "domain" { for (i = 2; i <= NF; i++) print $i }' \
	/etc/resolv.conf 2>/dev/null | json_lines)
up=
for f in /tmp/resolv.conf.d/resolv.conf.auto /tmp/resolv.conf.auto \
    /tmp/resolv.conf.ppp /run/systemd/resolve/resolv.conf; do
	[ -r "$f" ] || continue
	up="${up:+$up,}{\"file\":$(json_str "$f"),\"nameservers\":$(nameservers "$f" | json_lines)}"
done
hostname=$(head -n 1 /proc/sys/kernel/hostname 2>/dev/null) || hostname=
[ -n "$hostname" ] || hostname=$(uname -n 2>/dev/null)

emit "$(printf '{"hostname":%s,"interfaces":%s,"default_ipv4":%s,"default_ipv6":%s,"dns":{"nameservers":%s,"search":%s,"upstream":[%s]},"sources":{"link":"%s","ipv4":"%s"},"warnings":%s}' \
	"$(json_str "$hostname")" "$ifaces" "$d4" "$d6" \
	"$(printf '%s\n' "$ns" | json_lines)" "$search" "$up" "$link_src" \
	"$v4_src" "$(printf '%s\n' "$warn" | json_lines)")" '
function route(p,   r) {
	if (v[p ".iface"] == "") return "none"
	r = v[p ".gateway"] != "null" ? "via " v[p ".gateway"] " on " v[p ".iface"] : "on " v[p ".iface"]
	return r
}
function list(p,   i, s) {
	s = ""
	for (i = 0; i < n(p); i++) s = s (i ? ", " : "") v[p "." i]
	return s
}
END {
	printf "%s: default route %s (IPv4), %s (IPv6)\n", v["hostname"], route("default_ipv4"), route("default_ipv6")
	print "Interfaces:"
	for (i = 0; i < n("interfaces"); i++) {
		f = "interfaces." i
		a = list(f ".ipv4"); b = list(f ".ipv6")
		a = a (a != "" && b != "" ? ", " : "") b
		e = v[f ".rx_errors"] + v[f ".tx_errors"]
		printf "  %-10s %-10s %s", v[f ".name"], v[f ".state"], (a == "" ? "no address" : a)
		if (v[f ".rx_bytes"] != "")
			printf "; in %s, out %s%s", kb(v[f ".rx_bytes"] / 1024), kb(v[f ".tx_bytes"] / 1024), (e > 0 ? ", " e " errors" : "")
		printf "\n"
	}
	d = list("dns.nameservers")
	printf "DNS servers: %s", (d == "" ? "none" : d)
	for (i = 0; i < n("dns.upstream"); i++) {
		u = list("dns.upstream." i ".nameservers")
		if (u != "") printf " (upstream: %s)", u
	}
	printf "\n"
	if (n("warnings") == 0) print "Nothing looks wrong."
	warnings()
}'
