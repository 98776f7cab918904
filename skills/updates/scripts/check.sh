#!/bin/sh
# check.sh - the packages that have a newer version, as the package
# manager's cached lists say: opkg (OpenWrt up to 24.10), apk (OpenWrt 25,
# Alpine) or apt (Debian, Ubuntu). Read-only: the lists are not refreshed
# (that is `opkg update`, `apk update` or `apt update`, which write).
#
# Input:  {} (none)
# Output: {"manager":"opkg"|"apk"|"apt","count":N,"upgradable":[{"name":..,
#   "from":..,"to":..,"security":true|false}],"security":N|null,
#   "warnings":[..]}
# "security" counts apt updates from a -security suite (null elsewhere).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
warn=
if tool opkg; then
	m=opkg
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	out=$(run_to 60 $TOOL list-upgradable 2>&1) || die 1 "opkg list-upgradable failed: $(printf '%s\n' "$out" | head -n 1)"
	# "name - old - new"
	recs=$(printf '%s\n' "$out" | awk '$2 == "-" && $4 == "-" { print $1 "\t" $3 "\t" $5 "\t0" }')
	ls /var/opkg-lists/* >/dev/null 2>&1 || [ -n "$recs" ] ||
		warn="no package lists downloaded (they live in RAM and go at reboot): run opkg update, then ask again"
elif tool apk; then
	m=apk
	# shellcheck disable=SC2086
	out=$(run_to 60 $TOOL list --upgradable 2>&1) ||
		out=$(run_to 60 $TOOL version -l '<' 2>&1) ||
		die 1 "apk list --upgradable failed: $(printf '%s\n' "$out" | head -n 1)"
	# apk 3: "name-1.2-r1 arch {origin} (license) [upgradable from: name-1.1-r0]"
	# apk 2 version -l '<': "name-1.1-r0 < 1.2-r1"
	recs=$(printf '%s\n' "$out" | awk '
	function split_nv(s, r) { r[1] = s; sub(/-[0-9][^-]*(-r[0-9]+)?$/, "", r[1]); r[2] = substr(s, length(r[1]) + 2) }
	/upgradable from: / { split_nv($1, a); f = $0; sub(/.*upgradable from: /, "", f); sub(/\].*/, "", f); split_nv(f, b); print a[1] "\t" b[2] "\t" a[2] "\t0"; next }
	$2 == "<" { split_nv($1, a); print a[1] "\t" a[2] "\t" $3 "\t0" }')
elif tool apt; then
	m=apt
	# shellcheck disable=SC2086
	out=$(run_to 60 $TOOL list --upgradable 2>/dev/null) || die 1 "apt list --upgradable failed"
	# "name/suite,suite2 new arch [upgradable from: old]"
	recs=$(printf '%s\n' "$out" | awk '
	/\[upgradable from: / { n = $1; s = n; sub(/\/.*/, "", n); f = $0; sub(/.*upgradable from: /, "", f); sub(/\].*/, "", f)
		print n "\t" f "\t" $2 "\t" (s ~ /-security/ ? 1 : 0) }')
	set -- /var/lib/apt/lists/*_Packages*
	[ -e "$1" ] || [ -n "$recs" ] ||
		warn="no package lists downloaded: run apt update, then ask again"
else
	die 1 "no package manager found: none of opkg, apk or apt is installed"
fi

json=$(printf '%s\n' "$recs" | awk -F '	' -v m="$m" -v warn="$warn" "$JSON_AWK"'
NF >= 4 { u = u (n++ ? "," : "") "{\"name\":" jstr($1) ",\"from\":" jstr($2) ",\"to\":" jstr($3) ",\"security\":" ($4 ? "true" : "false") "}"; s += $4 }
END {
	printf "{\"manager\":%s,\"count\":%d,\"upgradable\":[%s],\"security\":%s,\"warnings\":[%s]}", \
	    jstr(m), n, u, (m == "apt" ? s + 0 : "null"), (warn == "" ? "" : jstr(warn))
}')
emit "$json" '
END {
	c = v["count"] + 0
	if (c == 0) printf "No updates available (%s).\n", v["manager"]
	else {
		printf "%d package%s can be upgraded (%s)%s:\n", c, (c == 1 ? "" : "s"), v["manager"], \
		    (v["security"] + 0 > 0 ? ", " v["security"] " of them security updates" : "")
		for (i = 0; i < c && i < 30; i++)
			printf "  %s %s -> %s%s\n", v["upgradable." i ".name"], v["upgradable." i ".from"], \
			    v["upgradable." i ".to"], (v["upgradable." i ".security"] == "true" ? " (security)" : "")
		if (c > 30) printf "  ... and %d more\n", c - 30
		printf "To install: %s\n", (v["manager"] == "apt" ? "apt upgrade" : v["manager"] == "apk" ? "apk upgrade" : \
		    "opkg upgrade NAME... (one by one; upgrading everything at once is not advised on OpenWrt)")
	}
	warnings()
}'
