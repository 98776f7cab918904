#!/bin/sh
# tools/bench/fleet.sh - a fleet on one machine: N device processes
# (`skillbox serve`, the offline provider, each its own state_dir and
# client id) against one mosquitto on 127.0.0.1 over TLS, and the
# controller. Measures the memory of each device (VmHWM of its serve, after
# a job), the time from `fleet send --group` to all N results, and the
# reconnect storm: from a broker restart until all N are connected again
# (the broker's log, read every 0.1 s). Prints a Markdown table.
# usage: tools/bench/fleet.sh [BIN]     (N=100 by default; needs mosquitto,
#        openssl and node; raises `ulimit -n` when it can)
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$TOP/build/x86_64/skillbox}
N=${N:-100}
MOSQ=$(command -v mosquitto 2>/dev/null || echo /usr/sbin/mosquitto)
[ -x "$MOSQ" ] || { echo "fleet.sh: no mosquitto: run tools/setup" >&2; exit 1; }
ulimit -n 4096 2>/dev/null || true
D=$(mktemp -d "${TMPDIR:-/tmp}/skillbox-fleetbench.XXXXXX")
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	[ -n "${MQ:-}" ] && kill "$MQ" 2>/dev/null
	sleep 1
	rm -rf "$D"
}
trap cleanup EXIT
now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{ printf "%.2f", $2 - $1 }'; }

# The CA and the broker's certificate (the devices use no client
# certificate here: the bench measures the fleet, not the ACL).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj /CN=bench-ca -keyout "$D/ca.key" -out "$D/ca.pem" >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=server \
    -keyout "$D/server.key" -out "$D/server.csr" >/dev/null 2>&1
echo 'subjectAltName=IP:127.0.0.1' >"$D/ext"
openssl x509 -req -in "$D/server.csr" -CA "$D/ca.pem" -CAkey "$D/ca.key" \
    -CAcreateserial -days 2 -extfile "$D/ext" -out "$D/server.pem" >/dev/null 2>&1
PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
mkdir -p "$D/mq"
cat >"$D/mosquitto.conf" <<EOF
user $(id -un)
persistence true
persistence_location $D/mq/
allow_anonymous true
max_connections -1
log_dest file $D/mosquitto.log
log_type notice
listener $PORT 127.0.0.1
cafile $D/ca.pem
certfile $D/server.pem
keyfile $D/server.key
EOF
broker() {
	: >"$D/mosquitto.log"
	"$MOSQ" -c "$D/mosquitto.conf" 2>/dev/null &
	MQ=$!
	sleep 0.3
}
connected() { grep -c 'New client connected' "$D/mosquitto.log" || true; }
mqtt() {
	printf 'mqtt:\n  broker: mqtts://127.0.0.1:%s\n  ca: %s/ca.pem\n  client_id: %s\n  keepalive: 60\n  groups: [all]\n' \
	    "$PORT" "$D" "$1"
}
broker
mkdir -p "$D/skills/bench/scripts"
printf -- '---\nname: bench\ndescription: The fleet bench'"'"'s job.\nmetadata:\n  default-action: scripts/job.sh\n  triggers: "bench"\nallowed-tools: Bash\n---\nBench.\n' \
    >"$D/skills/bench/SKILL.md"
printf '#!/bin/sh\necho done\n' >"$D/skills/bench/scripts/job.sh"
chmod 755 "$D/skills/bench/scripts/job.sh"
mqtt ctl >"$D/ctl.yaml"

i=1
while [ $i -le "$N" ]; do
	mkdir -p "$D/d$i"
	{ printf 'provider: offline\nskills: [%s/skills]\nstate_dir: %s/d%s\nworkspace: %s/d%s/ws\njobs:\n  every: 5\n  retries: 0\n' \
	    "$D" "$D" $i "$D" $i; mqtt d$i; } >"$D/d$i.yaml"
	"$BIN" -c "$D/d$i.yaml" serve --listen 127.0.0.1:0 \
	    --port-file "$D/d$i.port" 2>"$D/d$i.log" &
	PIDS="$PIDS $!"
	i=$((i + 1))
done
t=0
while [ "$("$BIN" -c "$D/ctl.yaml" fleet list 2>/dev/null | grep -c ' online ')" -lt "$N" ] &&
    [ $t -lt 120 ]; do
	sleep 1
	t=$((t + 1))
done
online=$("$BIN" -c "$D/ctl.yaml" fleet list 2>/dev/null | grep -c ' online ' || true)

t0=$(now)
got=$("$BIN" -c "$D/ctl.yaml" fleet send --group all --wait 300 "bench" | wc -l)
t1=$(now)
send=$(secs "$t0" "$t1")

hwm=$(for p in $PIDS; do sed -n 's/^VmHWM:[ \t]*\([0-9]*\).*/\1/p' /proc/$p/status; done |
    sort -n | awk '{ v[NR] = $1; s += $1 } END { printf "%d / %d / %d", v[int((NR + 1) / 2)], s / NR, v[NR] }')

kill "$MQ"
wait "$MQ" 2>/dev/null || true
t0=$(now)
broker
while [ "$(connected)" -lt "$N" ] && [ "$(secs "$t0" "$(now)" | cut -d. -f1)" -lt 300 ]; do
	sleep 0.1
done
t1=$(now)
storm=$(secs "$t0" "$t1")
again=$(connected)

echo "| measure ($N devices, one mosquitto, TLS, offline provider) | value |"
echo "|---|---:|"
echo "| devices online before the job | $online |"
echo "| memory per device, VmHWM of serve (KiB): median / mean / max | $hwm |"
echo "| \`fleet send --group\` to all results ($got of $N) | $send s |"
echo "| broker restart to all connected again ($again of $N) | $storm s |"
