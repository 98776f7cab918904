#!/bin/sh
# status.sh - the Wi-Fi radios of this device and who is connected: for
# each wireless interface its SSID, mode, channel and power, and each
# client (station) with its signal, bit rate and time connected; names and
# addresses from the DHCP leases when there are some. Uses iw, else
# iwinfo (OpenWrt). Read-only: no scan is started.
#
# Input:  {} (none)
# Output: {"tool":"iw"|"iwinfo","interfaces":[{"name":"wlan0","ssid":..,
#   "mode":"AP","channel":36,"freq_mhz":5180,"width":"80 MHz",
#   "txpower_dbm":20,"clients":[{"mac":..,"name":..|null,"ip":..|null,
#   "signal_dbm":-52,"tx_rate":"866.7 MBit/s","connected_s":N|null,
#   "inactive_ms":N|null}]}],"clients":N,"warnings":[..]}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
LEASES=${WIFI_LEASES:-/tmp/dhcp.leases}	# another file only in tests
# Lines: "I name", "K key value" for the interface, "C mac", "c key value"
# for its last client.
recs=
if tool iw; then
	t=iw
	iw=$TOOL
	# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
	dev=$(run_to 10 $iw dev 2>&1) || die 1 "iw dev failed: $(printf '%s\n' "$dev" | head -n 1)"
	for i in $(printf '%s\n' "$dev" | awk '$1 == "Interface" { print $2 }'); do
		recs="$recs$(printf '%s\n' "$dev" | awk -v want="$i" '
		$1 == "Interface" { on = ($2 == want); if (on) print "I\t" $2; next }
		!on { next }
		$1 == "ssid" { s = $0; sub(/^[ \t]*ssid /, "", s); print "K\tssid\t" s }
		$1 == "type" { print "K\tmode\t" $2 }
		$1 == "channel" { print "K\tchannel\t" $2; f = $3; gsub(/[^0-9]/, "", f); print "K\tfreq\t" f
			if (match($0, /width: [0-9]+ MHz/)) print "K\twidth\t" substr($0, RSTART + 7, RLENGTH - 7) }
		$1 == "txpower" { print "K\ttxpower\t" $2 + 0 }')
"
		# shellcheck disable=SC2086
		recs="$recs$(run_to 10 $iw dev "$i" station dump 2>/dev/null | awk '
		$1 == "Station" { print "C\t" tolower($2); next }
		/^[ \t]*signal:/ { print "c\tsignal\t" $2 + 0 }
		/^[ \t]*tx bitrate:/ { print "c\trate\t" $3 " " $4 }
		/^[ \t]*connected time:/ { print "c\tconnected\t" $3 + 0 }
		/^[ \t]*inactive time:/ { print "c\tinactive\t" $3 + 0 }')
"
	done
elif tool iwinfo; then
	t=iwinfo
	iwi=$TOOL
	# shellcheck disable=SC2086
	all=$(run_to 10 $iwi 2>&1) || die 1 "iwinfo failed: $(printf '%s\n' "$all" | head -n 1)"
	for i in $(printf '%s\n' "$all" | awk '/ESSID:/ { print $1 }'); do
		recs="$recs$(printf '%s\n' "$all" | awk -v want="$i" '
		/^[^ \t]/ { on = ($1 == want); if (on) { print "I\t" $1; s = $0; sub(/.*ESSID: "?/, "", s); sub(/"$/, "", s); if (s != "unknown") print "K\tssid\t" s } next }
		!on { next }
		/^[ \t]*Mode:/ { m = $0; sub(/^[ \t]*Mode: */, "", m); sub(/ .*/, "", m); print "K\tmode\t" (m == "Master" ? "AP" : m)
			c = $0; sub(/.*Channel: */, "", c); sub(/ .*/, "", c); print "K\tchannel\t" c
			if (match($0, /\([0-9.]+ GHz\)/)) print "K\tfreq\t" substr($0, RSTART + 1, RLENGTH - 6) * 1000
			if (match($0, /HT Mode: [A-Z]*[0-9]+/)) { w = substr($0, RSTART + 9, RLENGTH - 9); gsub(/[^0-9]/, "", w); print "K\twidth\t" w " MHz" } }
		/Tx-Power:/ { p = $0; sub(/.*Tx-Power: */, "", p); print "K\ttxpower\t" p + 0 }')
"
		# shellcheck disable=SC2086
		recs="$recs$(run_to 10 $iwi "$i" assoclist 2>/dev/null | awk '
		/^[0-9A-Fa-f][0-9A-Fa-f](:[0-9A-Fa-f][0-9A-Fa-f])+ / { print "C\t" tolower($1); print "c\tsignal\t" $2 + 0
			if (match($0, /[0-9]+ ms ago/)) print "c\tinactive\t" substr($0, RSTART, RLENGTH) + 0; next }
		$1 == "TX:" { r = $2 " " $3; sub(/,$/, "", r); print "c\trate\t" r }')
"
	done
else
	die 1 "no Wi-Fi tool: neither iw nor iwinfo is installed"
fi
[ -n "$(printf '%s' "$recs" | tr -d '\n')" ] || die 1 "no wireless interface found ($t lists none)"

json=$({
	sed 's/^/L /' "$LEASES" 2>/dev/null
	printf '%s\n' "$recs"
} | awk -F '	' "$JSON_AWK"'
function s(x) { return x == "" ? "null" : jstr(x) }
function num(x) { return jnum(x) }
function endc() {
	if (cm == "") return
	nm = (cm in name) ? name[cm] : ""
	cl = cl (nc++ ? "," : "") "{\"mac\":" jstr(cm) ",\"name\":" s(nm) ",\"ip\":" s(ip[cm]) \
	    ",\"signal_dbm\":" num(c["signal"]) ",\"tx_rate\":" s(c["rate"]) \
	    ",\"connected_s\":" num(c["connected"]) ",\"inactive_ms\":" num(c["inactive"]) "}"
	if (c["signal"] != "" && c["signal"] < -75)
		w[++nw] = sprintf("%s on %s has a weak signal (%d dBm)", (nm != "" ? nm : cm), ifn, c["signal"])
	total++; cm = ""; delete c
}
function endi() {
	endc()
	if (ifn == "") return
	out = out (ni++ ? "," : "") "{\"name\":" jstr(ifn) ",\"ssid\":" s(k["ssid"]) ",\"mode\":" s(k["mode"]) \
	    ",\"channel\":" num(k["channel"]) ",\"freq_mhz\":" num(k["freq"]) ",\"width\":" s(k["width"]) \
	    ",\"txpower_dbm\":" num(k["txpower"]) ",\"clients\":[" cl "]}"
	ifn = ""; cl = ""; nc = 0; delete k
}
/^L / { split(substr($0, 3), f, " "); m = tolower(f[2]); ip[m] = f[3]; if (f[4] != "*") name[m] = f[4]; next }
$1 == "I" { endi(); ifn = $2; next }
$1 == "K" { k[$2] = $3; next }
$1 == "C" { endc(); cm = $2; next }
$1 == "c" { c[$2] = $3; next }
END {
	endi()
	printf "{\"tool\":%s,\"interfaces\":[%s],\"clients\":%d,\"warnings\":[", jstr(tool), out, total
	for (i = 1; i <= nw; i++) printf "%s%s", (i > 1 ? "," : ""), jstr(w[i])
	printf "]}"
}' tool="$t")
emit "$json" '
END {
	printf "%d client%s on %d Wi-Fi interface%s (%s).\n", v["clients"], (v["clients"] == 1 ? "" : "s"), \
	    n("interfaces"), (n("interfaces") == 1 ? "" : "s"), v["tool"]
	for (i = 0; i < n("interfaces"); i++) {
		f = "interfaces." i
		printf "%s: %s", v[f ".name"], (v[f ".ssid"] != "null" ? "\"" v[f ".ssid"] "\"" : "no network")
		if (v[f ".mode"] != "null") printf ", %s", v[f ".mode"]
		if (v[f ".channel"] != "null") printf ", channel %s", v[f ".channel"]
		if (v[f ".freq_mhz"] != "null") printf " (%s MHz%s)", v[f ".freq_mhz"], (v[f ".width"] != "null" ? ", " v[f ".width"] " wide" : "")
		if (v[f ".txpower_dbm"] != "null") printf ", %s dBm", v[f ".txpower_dbm"]
		printf "\n"
		for (j = 0; j < n(f ".clients"); j++) {
			c = f ".clients." j
			who = v[c ".name"] != "null" ? v[c ".name"] " (" v[c ".mac"] ")" : v[c ".mac"]
			if (v[c ".ip"] != "null") who = who " " v[c ".ip"]
			printf "  %s: signal %s dBm", who, v[c ".signal_dbm"]
			if (v[c ".tx_rate"] != "null") printf ", %s", v[c ".tx_rate"]
			if (v[c ".connected_s"] != "null") printf ", connected %s", secs(v[c ".connected_s"])
			printf "\n"
		}
	}
	warnings()
}'
