#!/bin/bash
# tools/bench/llm.sh - what one model request costs the client: peak RSS
# (VmHWM, from --stats), peak use of the memory budget, and instructions
# (valgrind --tool=callgrind) for a streamed request over plain HTTP and
# over TLS, against the mock server on 127.0.0.1. Prints a Markdown table.
# usage: tools/bench/llm.sh [BIN]
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$TOP/build/x86_64/skillbox}
D=$(mktemp -d "${TMPDIR:-/tmp}/skillbox-bench.XXXXXX")
trap '"$TOP/tools/mockllm" stop "$D/mock"; rm -rf "$D"' EXIT
"$TOP/tools/mockllm" start "$D/mock" "$TOP/tests/data/mock" >/dev/null
. "$D/mock/env"
export OPENAI_API_KEY=bench ANTHROPIC_API_KEY=bench

stats() {	# args...: "peak_bytes | hwm_kb | file_kb | anon_kb" from --stats
	"$BIN" --stats "$@" 2>&1 >/dev/null | sed -n 's/.*peak \([0-9]*\) bytes.*VmHWM) \([0-9]*\) KiB.* \([0-9]*\) KiB file pages.* \([0-9]*\) KiB anonymous.*/\1 | \2 | \3 | \4/p'
}
instr() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN" "$@" \
	    2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

echo "| request | budget peak (bytes) | VmHWM (KiB) | at exit: file pages (KiB) | at exit: anonymous (KiB) | instructions |"
echo "|---|---:|---:|---:|---:|---:|"
row() {
	name=$1; shift
	set -- llm -m bench "$@"
	s=$(stats "$@")
	printf '| %s | %s | %s |\n' "$name" "$s" "$(instr "$@")"
}
row "text, plain HTTP (openai)" -u "$MOCK_HTTP" "say hello"
row "text, TLS (openai)" -u "$MOCK_HTTPS" --ca "$MOCK_CA" "say hello"
row "tool call + result, TLS (openai)" -u "$MOCK_HTTPS" --ca "$MOCK_CA" \
    --tools "$TOP/tests/data/mock/tools.json" --tool-result ok "weather in oslo"
row "text, TLS (anthropic)" -p anthropic -u "$MOCK_HTTPS" --ca "$MOCK_CA" "say hello"
# Debian's bundle with the run's CA at its end, so the handshake succeeds
# after every anchor was loaded.
cat /etc/ssl/certs/ca-certificates.crt "$MOCK_CA" >"$D/bundle.pem"
row "text, TLS, system CA bundle + the mock's CA" -u "$MOCK_HTTPS" \
    --ca "$D/bundle.pem" "say hello"
