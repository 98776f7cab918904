#!/bin/sh
# cpu.sh - the processes using the most CPU right now: processes.sh with
# {"sort": "cpu"} (over a 1 s sample) unless an input is given. Takes the
# same input and prints the same output as processes.sh.
SKILL_INPUT=${SKILL_INPUT:-}
if [ -z "$SKILL_INPUT" ] && [ ! -t 0 ]; then
	SKILL_INPUT=$(cat)
fi
# shellcheck disable=SC2089,SC2090 # JSON text, not shell quoting
case $SKILL_INPUT in
'' | '{}') SKILL_INPUT='{"sort":"cpu"}' ;;
esac
# shellcheck disable=SC2090
export SKILL_INPUT
exec sh "$(dirname "$0")/processes.sh" "$@" </dev/null
