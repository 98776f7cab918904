#!/bin/sh
# sleeper.sh: ignore SIGTERM, leave children behind every way a shell can
# (background, subshell, double fork, setsid), then sleep past any timeout.
# Their pids go to the workspace: pids, setsid-pids.
trap '' TERM
ws=$SKILL_WORKSPACE
sleep 300 &
echo $! >>"$ws/pids"
(sleep 300 & echo $! >>"$ws/pids"; wait) &
( (trap '' TERM; sleep 300 & echo $! >>"$ws/pids") & )
if command -v setsid >/dev/null 2>&1; then
	setsid sleep 300 &
	echo $! >>"$ws/setsid-pids"
fi
echo started
sleep 300
