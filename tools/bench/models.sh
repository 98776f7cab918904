#!/bin/sh
# tools/bench/models.sh - requests per second of `skillbox serve` for
# GET /v1/models beside GET /health, offline (no model is asked): wrk
# with keep-alive, one thread, C connections (default 16), D seconds
# (default 5) each. With ORCH=1 /v1/models lists the orchestration
# skills, so it shows what finding them costs a request.
# usage: tools/bench/models.sh [BIN [SKILLS_DIR [C [D]]]]
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$TOP/build/x86_64/skillbox}
SK=${2:-$TOP/skills}
C=${3:-16}
D=${4:-5}
W=$(mktemp -d "${TMPDIR:-/tmp}/skillbox-models.XXXXXX")
SP=
trap '[ -n "$SP" ] && kill "$SP" 2>/dev/null; rm -rf "$W"' EXIT
printf 'skills: [%s]\nstate_dir: %s/state\nworkspace: %s/ws\nmemory: 4M\nserve:\n  max_connections: 64\n' \
    "$SK" "$W" "$W" >"$W/c.yaml"
"$BIN" -c "$W/c.yaml" serve --listen 127.0.0.1:0 --port-file "$W/port" 2>"$W/log" &
SP=$!
i=0
while [ ! -s "$W/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -s "$W/port" ] || { cat "$W/log" >&2; exit 1; }
U=http://127.0.0.1:$(cat "$W/port")
n=$(curl -s "$U/v1/models" | grep -o '"id":' | wc -l)
[ "$n" -ge 1 ] || { echo "models.sh: /v1/models gave no list" >&2; exit 1; }
rps() { wrk -t1 -c"$C" -d"$D"s "$U$1" | sed -n 's/^Requests\/sec:[ \t]*//p' | cut -d. -f1; }
echo "| path | req/s (wrk -t1 -c$C -d${D}s) |"
echo "|---|---:|"
echo "| /health | $(rps /health) |"
echo "| /v1/models ($n models) | $(rps /v1/models) |"
