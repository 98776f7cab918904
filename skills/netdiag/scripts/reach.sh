#!/bin/sh
# reach.sh - can this device reach a host? Resolves it, pings it, and
# optionally tries a TCP connection to one port.
#
# Input:  {"host": "example.org", "port": 443, "count": 3}
#   host   name or address (required; also taken from the first argument)
#   port   optional TCP port, 1..65535: try to connect (2 s timeout)
#   count  echo requests to send, 1..10 (default 3; 2 s wait for replies)
# Output: {"host":..,"address":"93.184.215.14","resolved_via":"literal"|
#   "hosts"|"getent"|"nslookup","resolve_error":null,
#   "ping":{"tool":"ping","sent":3,"received":3,"loss_pct":0,
#           "rtt_ms":{"min":..,"avg":..,"max":..},"error":null},
#   "tcp":{"port":443,"open":true,"result":"connected"|"refused"|
#          "timeout"|"unreachable"|"error","detail":..}|null,
#   "reachable":true|false|null}
# An unreachable host is a result (exit 0, "reachable": false); null means
# no probe could run (no ping, nc or resolver on this system).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

read_input
in_str host HOST "${1:-}"
in_str port PORT ""
in_int count COUNT 3 1 10
[ -n "$HOST" ] || die 2 "\"host\" is required, e.g. {\"host\":\"example.org\"}"
valid_host "$HOST" || die 2 "\"host\" must be a host name or address (letters, digits, . - :)"
case $HOST in *_*) die 2 "\"host\" must be a host name or address (letters, digits, . - :)" ;; esac
if [ -n "$PORT" ]; then
	in_int port PORT "" 1 65535
fi

# 1. Name to address (ping and nc then never wait on DNS themselves).
resolve "$HOST" "" 3
addr=$(printf '%s\n' "$RES_ADDRS" | sed -n 1p)
if [ -n "$addr" ] && ! is_ip "$addr"; then
	RES_ERR="not an address: $addr"
	addr=
fi
resolve_err=null
[ -n "$RES_ERR" ] && [ -z "$addr" ] && resolve_err=$(json_str "$RES_ERR")

# 2. ICMP echo.
ping_json=null
ping_ok=0
if [ -n "$addr" ]; then
	pt=
	case $addr in
	*:*) tool ping6 && pt=$TOOL ;;
	esac
	[ -n "$pt" ] || { tool ping && pt=$TOOL; }
	if [ -z "$pt" ]; then
		ping_json='{"tool":null,"error":"ping is not available"}'
	else
		# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
		out=$(run_to $((COUNT + 3)) $pt -c "$COUNT" -W 2 -w $((COUNT + 2)) "$addr" 2>&1)
		case $out in
		*"packets transmitted"*) ;;
		*[Uu]sage:* | *"invalid option"* | *"unrecognized option"*)
			# a minimal BusyBox ping takes no options: one echo
			# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
			out=$(run_to 12 $pt "$addr" 2>&1)
			;;
		esac
		ping_json=$(printf '%s\n' "$out" | awk -v tool="${pt##* }" "$JSON_AWK"'
		/packets transmitted/ {
			sent = $1
			if (match($0, /[0-9]+ (packets )?received/)) { r = substr($0, RSTART, RLENGTH); sub(/ .*/, "", r) }
			if (match($0, /[0-9.]+% packet loss/)) { loss = substr($0, RSTART, RLENGTH); sub(/%.*/, "", loss) }
			next
		}
		/ is alive/ { sent = 1; r = 1; loss = 0; next }
		/No response from/ { sent = 1; r = 0; loss = 100; err = "no answer"; next }
		/min\/avg\/max/ {
			v = $0; sub(/.*= */, "", v); sub(/ .*/, "", v)
			split(v, t, "/"); rtt = sprintf("{\"min\":%s,\"avg\":%s,\"max\":%s}", jnum(t[1]), jnum(t[2]), jnum(t[3]))
			next
		}
		/^ping6?:/ || /[Pp]ermission denied|[Uu]nreachable|[Bb]ad address|[Uu]nknown host|not permitted/ {
			if (err == "") { err = $0; sub(/^ping6?: */, "", err) }
		}
		END {
			if (sent == "") { sent = 0; r = 0; loss = 100; if (err == "") err = "no answer within the time limit" }
			if (r == "") r = 0
			if (loss == "") loss = (sent > 0) ? 100 - r * 100 / sent : 100
			printf "{\"tool\":%s,\"sent\":%s,\"received\":%s,\"loss_pct\":%s,\"rtt_ms\":%s,\"error\":%s}\n", \
			    jstr(tool), jnum(sent), jnum(r), jnum(loss), (rtt == "" ? "null" : rtt), (err == "" ? "null" : jstr(err))
			if (r > 0) print "OK"
		}')
		case $ping_json in
		*OK) ping_ok=1 ping_json=$(printf '%s\n' "$ping_json" | sed -n 1p) ;;
		esac
	fi
fi

# 3. TCP connect.
tcp_json=null
tcp_ok=0
result=
if [ -n "$PORT" ] && [ -n "$addr" ]; then
	if ! tool nc; then
		tcp_json="{\"port\":$PORT,\"open\":null,\"result\":\"error\",\"detail\":\"nc is not available\"}"
	else
		# nc -z (OpenBSD, traditional, full BusyBox) connects and quits.
		# The small BusyBox nc has no -z: it connects, sends EOF and waits
		# for the server to close; still running after its 2 s connect
		# timeout means it got connected.
		# shellcheck disable=SC2086 # $TOOL may be "busybox NAME"
		if $TOOL -h 2>&1 | grep -q -- '-z'; then
			out=$(run_to 5 $TOOL -v -z -w 2 "$addr" "$PORT" </dev/null 2>&1)
			rc=$?
			[ "$rc" -ge 128 ] && rc=timeout
		else
			out=$(run_to 4 $TOOL -w 2 "$addr" "$PORT" </dev/null 2>&1 >/dev/null)
			rc=$?
			[ "$rc" -ge 128 ] && rc=0
		fi
		case $rc in
		0) result=connected tcp_ok=1 ;;
		timeout) result=timeout ;;
		*)
			case $out in
			*[Rr]efused*) result=refused ;;
			*[Tt]imed\ out* | *[Tt]imeout*) result=timeout ;;
			*[Uu]nreachable* | *"No route"*) result=unreachable ;;
			*) result=error ;;
			esac
			;;
		esac
		open=false
		[ "$tcp_ok" = 1 ] && open=true
		detail=$(printf '%s\n' "$out" | grep -v '^$' | tail -n 1)
		dj=null
		[ "$tcp_ok" = 1 ] || [ -z "$detail" ] || dj=$(json_str "$detail")
		tcp_json="{\"port\":$PORT,\"open\":$open,\"result\":\"$result\",\"detail\":$dj}"
	fi
fi

# false = probed and got no answer; null = nothing could be probed.
reachable=null
case $ping_json$tcp_json in
*'"sent":'[1-9]* | *'"open":false'* | *'"open":true'*) reachable=false ;;
esac
[ -z "$addr" ] && [ "$RES_VIA" != none ] && reachable=false
# A refused connection is an answer too: the host is up.
if [ "$ping_ok" = 1 ] || [ "$tcp_ok" = 1 ] || [ "$result" = refused ]; then
	reachable=true
fi
addr_json=null
[ -n "$addr" ] && addr_json=$(json_str "$addr")
emit "$(printf '{"host":%s,"address":%s,"resolved_via":%s,"resolve_error":%s,"ping":%s,"tcp":%s,"reachable":%s}' \
	"$(json_str "$HOST")" "$addr_json" "$(json_str "$RES_VIA")" \
	"$resolve_err" "$ping_json" "$tcp_json" "$reachable")" '
END {
	h = v["host"] (v["address"] != "null" && v["address"] != v["host"] ? " (" v["address"] ")" : "")
	if (v["address"] == "null") { printf "%s: cannot resolve: %s\n", v["host"], v["resolve_error"]; exit }
	if (v["ping.sent"] != "")
		printf "Ping %s: %d of %d answered%s\n", h, v["ping.received"], v["ping.sent"], \
		    (v["ping.rtt_ms.avg"] != "" ? sprintf(", average %s ms", v["ping.rtt_ms.avg"]) : "")
	else if (v["ping.error"] != "") printf "Ping %s: %s\n", h, v["ping.error"]
	if (v["tcp.port"] != "")
		printf "TCP port %s: %s%s\n", v["tcp.port"], v["tcp.result"], \
		    (v["tcp.result"] == "refused" ? " (the host is up, nothing listens there)" : "")
	printf "%s is %s.\n", h, (v["reachable"] == "true" ? "reachable" : v["reachable"] == "false" ? "not reachable" : "of unknown reachability (no probe could run)")
}'
