#!/bin/sh
# env.sh: the environment the script sees, and its parent's through /proc
env
echo "--- parent"
if tr '\0' '\n' <"/proc/$PPID/environ" 2>&1; then echo "parent-env-ok"; else echo "parent-env-denied"; fi
