#!/bin/sh
# node.sh: node, npx and python3 started by a shell, as a skill's command
# lines start them. V8 reserves gigabytes of address space at start, so a
# limit on address space kills node here; the sandbox limits memory
# instead. npx runs the local package the test put in $SKILL_ROOT/npx
# (--offline: no registry), with its cache in the private tmp.
export npm_config_cache="${TMPDIR:-$HOME}/npm-cache" npm_config_update_notifier=false
node -e 'console.log("node-ok " + (6 * 7))' 2>&1
(cd "$SKILL_ROOT/npx" && npx --offline hello-sbx a b 2>&1)
command -v python3 >/dev/null && python3 -c 'print("python-ok", 6 * 7)' 2>&1
exit 0
