# todo.sh list: the tasks, read from the crew's _data folder.
[ "$1" = list ] || { echo "usage: todo.sh list" >&2; exit 2; }
cat "$(dirname "$0")/../_data/tasks.json"
