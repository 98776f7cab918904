#!/bin/sh
# files.sh: write where a script may: $TMPDIR, the workspace, $HOME; read
# its own skill folder; open /dev/stdout again; print TMPDIR so the
# test can check it is gone
set -e
echo tmp >"$TMPDIR/a"
echo ws >"$SKILL_WORKSPACE/b"
echo home >"$HOME/c"
cat "$TMPDIR/a" "$SKILL_WORKSPACE/b" "$HOME/c" >/dev/null
grep -q escape "$SKILL_ROOT/SKILL.md"
echo stdout-again >/dev/stdout
echo "tmpdir=$TMPDIR"
echo files-ok
