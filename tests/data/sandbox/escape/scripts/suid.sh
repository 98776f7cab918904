#!/bin/sh
# suid.sh: run scripts/suid-id, a set-user-ID copy of id(1) the test puts
# in the skill folder
"$SKILL_ROOT/scripts/suid-id"
