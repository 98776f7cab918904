#!/bin/sh
# /etc/boot-test.sh of the boot test's guest: run once by init after rcS.
# Prints one line per check on the console,
#   BOOT-CHECK NAME ok|fail DETAIL
# which tools/boot.sh reads on the host, then BOOT-DONE, and powers off.
PATH=/sbin:/bin:/usr/sbin:/usr/bin
export PATH
. /etc/boot.env
SB=/usr/bin/skillbox
API=http://127.0.0.1:8080
R=/tmp/boot-test
mkdir -p $R

# check NAME DETAIL CMD...: ok when CMD exits 0
check() {
	n=$1 d=$2
	shift 2
	if "$@"; then
		echo "BOOT-CHECK $n ok $d"
	else
		echo "BOOT-CHECK $n fail $d"
	fi
}
# info FILE: a file's lines on the console, for the host's log
info() { sed "s/^/BOOT-INFO $1: /" "$2"; }

echo "BOOT-INFO kernel: $(uname -r) $(uname -m)"

# State is in /var/lib/skillbox, and /var is the RAM disk, as on OpenWrt.
var_tmpfs() {
	[ "$(readlink /var)" = tmp ] && grep -q '^[^ ]* /tmp tmpfs ' /proc/mounts
}
check var-tmpfs "/var -> /tmp on tmpfs" var_tmpfs

# rcS started the service through /etc/init.d/S95skillbox
# (start-stop-daemon); its pid file names a running `skillbox serve`.
service_up() {
	/etc/init.d/S95skillbox status >/dev/null || return 1
	pid=$(cat /var/run/skillbox.pid) &&
	    tr '\0' ' ' </proc/"$pid"/cmdline | grep -q 'skillbox .*serve'
}
check service "$(/etc/init.d/S95skillbox status)" service_up
# ... as the user skillbox, not root (S95skillbox's RUN_AS)
svc_user() { stat -c %U /proc/"$(cat /var/run/skillbox.pid)" 2>/dev/null; }
check service-user "$(svc_user)" [ "$(svc_user)" = skillbox ]

# GET /health: the server may still be loading; a few tries.
health() {
	i=0
	while [ $i -lt 20 ]; do
		timeout 10 wget -q -O $R/health $API/health 2>/dev/null &&
		    grep -q '"status":"ok"' $R/health && return 0
		sleep 1
		i=$((i + 1))
	done
	return 1
}
check health "GET /health" health
info health $R/health

# One offline turn through the service: the offline provider picks a
# skill and runs its default action in the sandbox of this kernel.
run_offline() {
	timeout 90 wget -q -O $R/run --header 'Accept: application/json' --header 'Content-Type: application/json' \
	    --post-data '{"input":"how is the memory and load?","session":"boot"}' \
	    $API/api/v1/run 2>$R/run.err &&
	    grep -q '"status":"ok"' $R/run &&
	    grep -q "(offline: no model is configured; this is the '[a-z-]*' skill's" $R/run
}
check run-offline "POST /api/v1/run" run_offline
info run $R/run
info run $R/run.err

# Its session was written under /var/lib/skillbox, i.e. in RAM.
session() {
	ls /var/lib/skillbox/sessions/*boot* >/dev/null 2>&1
}
check session "$(ls /var/lib/skillbox/sessions 2>/dev/null | tr '\n' ' ')" session

# The layers qemu-user cannot show: Landlock, seccomp, network namespaces.
$SB -c /etc/skillbox/skillbox.yaml sandbox check >$R/sandbox 2>&1
info sandbox $R/sandbox
for l in landlock seccomp seccomp-net netns userdrop nnp; do
	st=$(awk -v l=$l '$1 == l { print $2 }' $R/sandbox)
	check "sandbox-$l" "$(sed -n "s/^$l  *//p" $R/sandbox)" \
	    [ "$st" = active ]
done

# A turn with the scripted model on the host (10.0.2.2 through qemu's user
# network, over TLS with the host's throw-away CA): a handoff to sysinfo
# runs its overview script in the sandbox, and the model's final answer
# comes back.
cat >$R/model.yaml <<EOT
provider: openai
model: scripted
base_url: $LLM_URL
ca_file: /etc/skillbox/llm-ca.pem
skills: [/usr/share/skillbox/skills]
state_dir: /var/lib/skillbox
limits:
  retries: 0
  time: 120
EOT
OPENAI_API_KEY=sk-boot-test timeout 150 $SB -c $R/model.yaml run --json \
    "how is this device?" >$R/model 2>$R/model.err
echo "BOOT-INFO model: exit $?"
info model.err $R/model.err
model_tool() {
	grep '"type":"tool_end"' $R/model | grep -q 'overview.sh'
}
check model-tool "sysinfo's overview.sh ran in the sandbox" model_tool
check model-answer "the scripted model's final answer" \
    grep -q 'BOOT-MODEL-ANSWER' $R/model

# A read-only root, as with a squashfs firmware: / is remounted read-only
# (a write there must fail), and a turn through the service and one from
# the command line still answer, their sessions written in /var (RAM).
ro_root() {
	mount -o remount,ro / 2>$R/ro.err || return 1
	if touch /etc/ro-probe 2>/dev/null; then
		echo "/ is still writable" >>$R/ro.err
		return 1
	fi
	timeout 90 wget -q -O $R/ro --header 'Accept: application/json' --header 'Content-Type: application/json' \
	    --post-data '{"input":"what is using my disk?","session":"ro-serve"}' \
	    $API/api/v1/run 2>>$R/ro.err && grep -q '"status":"ok"' $R/ro &&
	    timeout 90 $SB -c /etc/skillbox/skillbox.yaml run --session ro-cli \
	    "how is the memory and load?" >>$R/ro 2>>$R/ro.err &&
	    ls /var/lib/skillbox/sessions/*ro-serve* \
	    /var/lib/skillbox/sessions/*ro-cli* >/dev/null 2>>$R/ro.err
}
check ro-root "/ read-only: a served turn and a command-line one" ro_root
info ro.err $R/ro.err

# Stop the service as a device's shutdown would: SIGTERM, exit 0.
service_stop() {
	/etc/init.d/S95skillbox stop >$R/stop 2>&1 &&
	    grep -q 'skillbox: stopped' $R/stop &&
	    ! /etc/init.d/S95skillbox status >/dev/null
}
check service-stop "S95skillbox stop" service_stop
info stop $R/stop
info log /var/log/skillbox.log

echo BOOT-DONE
sync
poweroff -f
