#!/bin/sh
# forks.sh N: start N sleeping children, their pids in the workspace;
# prints "spawned N" only when all of them started
i=0
while [ "$i" -lt "${1:-200}" ]; do
	sleep 60 &
	echo $! >>"$SKILL_WORKSPACE/pids"
	i=$((i + 1))
done
echo "spawned $i"
