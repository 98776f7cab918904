#!/bin/sh
# busybox.sh: BusyBox applets inside the sandbox
bb=$(command -v busybox) || { echo no-busybox; exit 0; }
n=$("$bb" wc -l <"$SKILL_ROOT/SKILL.md")
"$bb" ls / >/dev/null
"$bb" sh -c 'echo "$((6 * 7))"' | "$bb" grep -q 42
echo "busybox-ok $n" | "$bb" sed 's/ok/OK/'
