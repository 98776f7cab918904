#!/bin/sh
# echo.sh: the script contract - the input from stdin and $SKILL_INPUT,
# and the SKILL_* variables, as one JSON object; it runs in the workspace
# (cwd_ws) and SKILL_ROOT is its own folder (root_ok)
stdin=$(cat)
printf '{"stdin":%s,"env":%s,"name":"%s","root_ok":%s,"cwd_ws":%s,"ws_ok":%s}\n' \
    "$stdin" "$SKILL_INPUT" "$SKILL_NAME" \
    "$([ -f "$SKILL_ROOT/scripts/echo.sh" ] && echo true || echo false)" \
    "$([ "$SKILL_WORKSPACE" = "$(pwd -P)" ] && echo true || echo false)" \
    "$([ -d "$SKILL_WORKSPACE" ] && echo true || echo false)"
