#!/bin/sh
# udp.sh PORT: send a UDP datagram to 127.0.0.1:PORT (python3)
exec python3 -c '
import socket, sys
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"hello from the sandbox\n", ("127.0.0.1", int(sys.argv[1])))
    print("udp-ok")
except OSError as e:
    print("udp-denied", e)
' "$1"
