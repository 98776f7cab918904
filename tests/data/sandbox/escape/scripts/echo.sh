#!/bin/sh
# echo.sh: the script contract - the input from stdin and $SKILL_INPUT,
# and the SKILL_* variables, as one JSON object
stdin=$(cat)
printf '{"stdin":%s,"env":%s,"name":"%s","root_ok":%s,"ws_ok":%s}\n' \
    "$stdin" "$SKILL_INPUT" "$SKILL_NAME" \
    "$([ "$SKILL_ROOT" = "$(pwd -P)" ] && echo true || echo false)" \
    "$([ -d "$SKILL_WORKSPACE" ] && echo true || echo false)"
