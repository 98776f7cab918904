# plain.sh: no #! line and no execute permission: runs through /bin/sh
echo "plain-ok $*"
