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
