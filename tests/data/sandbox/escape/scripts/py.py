#!/usr/bin/env python3
# py.py: reads the input JSON from stdin, answers with JSON
import json, sys
data = json.load(sys.stdin)
print(json.dumps({"ok": True, "got": data}))
