#!/bin/sh
# net.sh PORT: open a TCP connection to 127.0.0.1:PORT and send a line;
# prints connect-ok, or connect-denied and exits 1
port=$1
if command -v python3 >/dev/null 2>&1; then
	exec python3 -c '
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
    s.sendall(b"hello from the sandbox\n")
    s.close()
    print("connect-ok")
except OSError as e:
    print("connect-denied", e)
    sys.exit(1)
' "$port"
fi
for nc in "busybox nc" nc; do
	if echo "hello from the sandbox" | $nc -w 3 127.0.0.1 "$port" 2>&1; then
		echo connect-ok
		exit 0
	fi
done
echo connect-denied
exit 1
