# tests/e2e/lib.sh - helpers for the end-to-end tests, sourced by tests/run.
#
# Each case runs in a fresh empty directory ($T) with these set:
#   BIN     absolute path of the skillbox binary under test
#   RUNNER  qemu-<arch>-static for cross builds, empty natively
#   DATA    absolute path of tests/data
#   TOP     absolute path of the repository
# and the function `sk ARGS...` that runs skillbox through $RUNNER.
#
#   testcmd NAME CMD EXPECTED [STDIN]   stdout of `eval CMD` equals EXPECTED
#   testrc  NAME RC CMD                 exit status of `eval CMD` is RC
#   testhas NAME TEXT CMD               stdout+stderr of `eval CMD` contain TEXT
#   skip    NAME REASON

sk() { $RUNNER "$BIN" "$@"; }

_newdir() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/skillbox-e2e.XXXXXX")
	cd "$T" || exit 1
}

_done() {
	cd "$TOP" || exit 1
	rm -rf "$T"
}

_pass() { PASS=$((PASS + 1)); [ -n "$VERBOSE" ] && echo "PASS: $1"; return 0; }
_fail() {
	FAIL=$((FAIL + 1))
	echo "FAIL: $CASEFILE: $1"
	shift
	[ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/    /'
	return 0
}

skip() {
	SKIP=$((SKIP + 1))
	echo "SKIP: $CASEFILE: $1: $2"
}

testcmd() {
	_newdir
	if [ -n "${4+x}" ]; then
		out=$(printf '%s' "$4" | eval "$2" 2>"$T/.err")
	else
		out=$(eval "$2" </dev/null 2>"$T/.err")
	fi
	if [ "$out" = "$3" ]; then
		_pass "$1"
	else
		_fail "$1" "expected:" "$3" "got:" "$out" "stderr:" "$(head -c 2000 "$T/.err")"
	fi
	_done
}

testrc() {
	_newdir
	eval "$3" </dev/null >"$T/.out" 2>&1
	rc=$?
	if [ "$rc" = "$2" ]; then
		_pass "$1"
	else
		_fail "$1" "expected exit $2, got $rc" "$(head -c 2000 "$T/.out")"
	fi
	_done
}

testhas() {
	_newdir
	eval "$3" </dev/null >"$T/.out" 2>&1
	if grep -qF -- "$2" "$T/.out"; then
		_pass "$1"
	else
		_fail "$1" "expected to find: $2" "got:" "$(head -c 2000 "$T/.out")"
	fi
	_done
}

# The scripted model (tools/scriptllm.js) in folder $1, over TLS when
# openssl can make it a certificate for localhost: sets SM (the folder),
# SM_PID and SM_URL, and SM_CA (a config line trusting it, or empty).
# Returns 1 when it did not start. Then:
#   sm_steps JSON    the script (and a new journal)
#   sm_nreq          requests made since
#   sm_req N EXPR    EXPR (JavaScript over r, request N's body), printed
sm_start() {
	SM=$1 SM_CA= SM_URL=
	mkdir -p "$SM"
	if command -v openssl >/dev/null && openssl req -x509 -newkey ec \
	    -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
	    -addext subjectAltName=DNS:localhost -keyout "$SM/key.pem" \
	    -out "$SM/cert.pem" >/dev/null 2>&1; then
		SM_CA="ca_file: $SM/cert.pem"
	fi
	node "$TOP/tools/scriptllm.js" "$SM" >"$SM/log" 2>&1 &
	SM_PID=$!
	i=0
	while [ ! -s "$SM/port" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -s "$SM/port" ] || return 1
	if [ -n "$SM_CA" ]; then
		SM_URL=https://localhost:$(cat "$SM/port")
	else
		SM_URL=http://127.0.0.1:$(cat "$SM/port")
	fi
}
sm_steps() { rm -f "$SM/journal" "$SM/script.json"; printf '%s' "$1" >"$SM/script.json"; }
sm_nreq() { [ -f "$SM/journal" ] && wc -l <"$SM/journal" | tr -d ' ' || echo 0; }
sm_req() {
	sed -n "${1}p" "$SM/journal" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);console.log(eval(process.argv[1]))})' "$2"
}

# zombies_wait: under qemu-user skillbox cannot be the subreaper of what a
# script leaves behind (prctl fails there), so the leftovers it kills become
# zombies of init, which on some hosts reaps them only every second or two.
# They count against uid 65534's RLIMIT_NPROC (32) in the next run: wait,
# at most 10 s, until fewer than 8 are left. Natively it returns at once.
zombies_wait() {
	[ -n "$RUNNER" ] || return 0
	_zw=0
	while [ "$_zw" -lt 100 ]; do
		[ "$(cat /proc/[0-9]*/status 2>/dev/null | awk '
		    /^State:/ { z = $2 == "Z" }
		    /^Uid:/ { if (z && $2 == 65534) n++ }
		    END { print n + 0 }')" -lt 8 ] && return 0
		sleep 0.1
		_zw=$((_zw + 1))
	done
}
