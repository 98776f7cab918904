#!/bin/bash
# tools/bench/serve.sh - `skillbox serve` beside the @openai/agents peer
# served by node:http (tools/bench/peer/agent.mjs --serve), both on
# loopback against the same mock LLM over TLS: requests per second for
# /health and /v1/models (wrk, 8 connections, keep-alive), idle memory of
# the server, memory per concurrent turn (4 slow turns at once; RSS and
# PSS, which shares the forked workers' common pages fairly), and the time
# to the first byte of a streamed turn (curl, median of 20). Then skillbox
# alone over HTTPS (an EC P-256 certificate made here): /health req/s
# with keep-alive and with a new connection (a handshake) per request, and
# the server's RSS with 8 connections open. Prints Markdown tables. Run by
# tools/bench/run, or alone:
#
# usage: tools/bench/serve.sh BIN PEERDIR MOCKENV WORKDIR
# BENCH_SHORT=1: 1-second wrk runs and 5 first bytes (make bench-short).
set -euo pipefail
BIN=$1 PEER=$2 MOCKENV=$3 W=$4
D=3 NT=20 HALF=1.5
if [ -n "${BENCH_SHORT:-}" ]; then D=1 NT=5 HALF=0.5; fi
TOP=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck disable=SC1090
. "$MOCKENV"
export OPENAI_API_KEY=sk-bench
SPID= PPID_= TPID=
stop() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	[ -n "$PPID_" ] && kill "$PPID_" 2>/dev/null && wait "$PPID_" 2>/dev/null
	[ -n "$TPID" ] && kill "$TPID" 2>/dev/null && wait "$TPID" 2>/dev/null
	return 0
}
trap stop EXIT

cat >"$W/serve.yaml" <<EOC
provider: openai
model: bench-model
base_url: $MOCK_HTTPS
ca_file: $MOCK_CA
skills: [$TOP/skills]
skill_mode: inline
state_dir: $W/serve-state
workspace: $W/serve-ws
memory: 4M
serve:
  max_turns: 8
  max_connections: 64
EOC
waitfile() { local i=0; while [ ! -s "$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done; [ -s "$1" ]; }
rm -f "$W/sb.port" "$W/peer.port"
"$BIN" -c "$W/serve.yaml" serve --listen 127.0.0.1:0 --port-file "$W/sb.port" 2>"$W/sb.log" &
SPID=$!
BENCH_BASE_URL=$MOCK_HTTPS BENCH_MODEL=bench-model BENCH_SKILLS=$TOP/skills \
    NODE_EXTRA_CA_CERTS=$MOCK_CA node "$PEER/agent.mjs" --serve "$W/peer.port" 2>"$W/peer.log" &
PPID_=$!
waitfile "$W/sb.port" || { cat "$W/sb.log" >&2; exit 1; }
waitfile "$W/peer.port" || { cat "$W/peer.log" >&2; exit 1; }
SB=http://127.0.0.1:$(cat "$W/sb.port")
PE=http://127.0.0.1:$(cat "$W/peer.port")

kib() { sed -n "s/^$2:[ \t]*\([0-9]*\) kB/\1/p" "/proc/$1/${3:-status}"; }
# Memory of a process and its children: RSS summed, PSS summed.
tree_mem() {
	local r=0 p=0 pid
	for pid in $1 $(pgrep -P "$1" || true); do
		r=$((r + $(kib "$pid" VmRSS)))
		p=$((p + $(kib "$pid" Pss smaps_rollup)))
	done
	echo "$r $p"
}
rps() { wrk -t1 -c8 -d${D}s "$1" | sed -n 's/^Requests\/sec:[ \t]*//p' | cut -d. -f1; }
chat='{"model":"skillbox","stream":true,"messages":[{"role":"user","content":"bench: what is using my disk?"}]}'
slow='{"model":"skillbox","stream":true,"messages":[{"role":"user","content":"bench: hold on"}]}'
ttfb() {
	local i=0
	while [ $i -lt $NT ]; do
		curl -s -o /dev/null -w '%{time_starttransfer}\n' -H 'Content-Type: application/json' -d "$chat" "$1/v1/chat/completions"
		i=$((i + 1))
	done | sort -n | sed -n "$(((NT + 1) / 2))p" | awk '{printf "%.1f", $1 * 1000}'
}
turn_ok() { curl -s -H 'Content-Type: application/json' -d "${chat/\"stream\":true,/}" "$1/v1/chat/completions" | grep -q 'Bench answer'; }
turn_ok "$SB" || { echo "serve.sh: skillbox serve gave no answer" >&2; exit 1; }
turn_ok "$PE" || { echo "serve.sh: the peer gave no answer" >&2; exit 1; }

for who in SB PE; do
	url=${!who}
	pid=$SPID; [ $who = PE ] && pid=$PPID_
	h=$(rps "$url/health")
	m=$(rps "$url/v1/models")
	read -r idle_r idle_p <<<"$(tree_mem "$pid")"
	t=$(ttfb "$url")
	for i in 1 2 3 4; do curl -sN -o /dev/null -H 'Content-Type: application/json' -d "$slow" "$url/v1/chat/completions" & done
	sleep 2
	read -r busy_r busy_p <<<"$(tree_mem "$pid")"
	wait $(jobs -p | grep -v "^$SPID$\|^$PPID_$" || true) 2>/dev/null || true
	eval "${who}_ROW=\"| \$h | \$m | \$idle_r | \$idle_p | \$(( (busy_r - idle_r) / 4 )) | \$(( (busy_p - idle_p) / 4 )) | \$t |\""
done
echo "| server | /health req/s | /v1/models req/s | idle RSS KiB | idle PSS KiB | RSS per turn KiB | PSS per turn KiB | first SSE byte ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
echo "| skillbox serve $SB_ROW"
echo "| @openai/agents + node:http $PE_ROW"

# --- HTTPS (skipped by a binary built with SERVE_TLS=0)
"$BIN" version | grep -q 'HTTPS (TLS' || exit 0
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout "$W/tls.key" -out "$W/tls.pem" -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost >/dev/null 2>&1
{ grep -v '^serve:\|^  max_' "$W/serve.yaml"
  printf 'serve:\n  max_connections: 64\n  tls_cert: %s\n  tls_key: %s\n' \
      "$W/tls.pem" "$W/tls.key"; } >"$W/tls.yaml"
rm -f "$W/tls.port"
"$BIN" -c "$W/tls.yaml" serve --listen 127.0.0.1:0 --port-file "$W/tls.port" 2>"$W/tls.log" &
TPID=$!
waitfile "$W/tls.port" || { cat "$W/tls.log" >&2; exit 1; }
TU=https://localhost:$(cat "$W/tls.port")
curl -s --cacert "$W/tls.pem" "$TU/health" | grep -q '"ok"' ||
    { echo "serve.sh: no answer over HTTPS" >&2; exit 1; }
read -r idle_r _ <<<"$(tree_mem "$TPID")"
keep=$(rps "$TU/health")
wrk -t1 -c8 -d${D}s "$TU/health" >/dev/null &
sleep $HALF
read -r open_r _ <<<"$(tree_mem "$TPID")"
wait $! 2>/dev/null || true
fresh=$(wrk -t1 -c8 -d${D}s -H 'Connection: close' "$TU/health" |
    sed -n 's/^Requests\/sec:[ \t]*//p' | cut -d. -f1)
echo
echo "| skillbox serve over HTTPS (EC P-256) | /health req/s, keep-alive | /health req/s, a handshake each | idle RSS KiB | RSS with 8 connections KiB |"
echo "|---|---:|---:|---:|---:|"
echo "| | $keep | $fresh | $idle_r | $open_r |"
