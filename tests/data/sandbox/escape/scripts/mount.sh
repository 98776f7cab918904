#!/bin/sh
# mount.sh: mount a tmpfs in the workspace; prints mount-ok or mount-denied
mkdir -p "$SKILL_WORKSPACE/mnt"
if mount -t tmpfs skillbox-escape "$SKILL_WORKSPACE/mnt" 2>&1; then
	echo mount-ok
	umount "$SKILL_WORKSPACE/mnt"
else
	echo mount-denied
fi
