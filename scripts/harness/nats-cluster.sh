#!/usr/bin/env bash
# nats-cluster.sh: a generation job on a JetStream cluster of three real
# nats-server processes on the loopback interface (one cluster, a token),
# with queue.replicas 3, a coordinator and K workers as processes spread
# over the servers. Once the workers have sent some results, one server
# (not the first) is killed (SIGKILL) and started again on its store a few
# seconds later; the job must complete, and the book pass
# "c4book book verify". Everything started is stopped on exit; the logs
# are kept when something failed.
#
# Usage: scripts/harness/nats-cluster.sh [options]
#
#   -d, --depth D          depth of the book (default 16)
#   -r, --root MOVES       root position (default 44444433)
#   -k, --workers K        worker processes (default 2)
#       --down S           seconds the killed server stays down (default 5)
#
# nats-server and c4book are found or built as scripts/harness/cluster.sh
# does; needs curl and jq (the streams' replicas are read from server 0's
# monitoring endpoint).
set -euo pipefail

depth=16 root=44444433 workers=2 down=5
prog=nats-cluster.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

while [ $# -gt 0 ]; do
	case $1 in
	-d | --depth) depth=${2:?$1 needs a value}; shift 2 ;;
	-r | --root) root=${2?$1 needs a value}; shift 2 ;;
	-k | --workers) workers=${2:?$1 needs a value}; shift 2 ;;
	--down) down=${2:?$1 needs a value}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/c4book-nats-cluster.XXXXXX")
pids=() server_pids=()
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	for pid in "${server_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${server_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ "$status" -eq 0 ]; then
		rm -rf "$tmp"
	else
		echo "$prog: exit status $status; logs kept in $tmp" >&2
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

nats_server=$(find_nats_server)
c4book=$(find_c4book "$repo")
token=$(new_token)
ports=() routes=() urls=()
for i in 1 2 3; do
	ports+=("$(free_port) $(free_port)") # client, cluster
done
http_port=$(free_port) # server 0's monitoring: to read the streams' replicas
for i in 0 1 2; do
	read -r _ cport <<<"${ports[i]}"
	routes+=("nats-route://127.0.0.1:$cport")
done

# write_conf I writes the configuration of server I (0..2).
write_conf() {
	local i=$1 port cport
	read -r port cport <<<"${ports[i]}"
	{
		echo "server_name: c4book-$i"
		echo "listen: 127.0.0.1:$port"
		[ "$i" != 0 ] || echo "http: 127.0.0.1:$http_port"
		echo "jetstream { store_dir: \"$tmp/store-$i\" }"
		echo "authorization { token: \"$token\" }"
		echo "cluster {"
		echo "  name: c4book"
		echo "  listen: 127.0.0.1:$cport"
		echo "  routes: [$(IFS=,; echo "${routes[*]}")]"
		echo "}"
	} >"$tmp/nats-$i.conf"
}

# start_server I starts server I and sets server_pids[I].
start_server() {
	"$nats_server" -c "$tmp/nats-$1.conf" >>"$tmp/nats-$1.log" 2>&1 &
	server_pids[$1]=$!
}

for i in 0 1 2; do
	write_conf "$i"
	start_server "$i"
	read -r port _ <<<"${ports[i]}"
	urls+=("nats://127.0.0.1:$port")
done
# The cluster is ready when JetStream has a meta leader.
for _ in $(seq 300); do
	grep -q "JetStream cluster new metadata leader\|Self is new JetStream cluster metadata leader" "$tmp"/nats-*.log && break
	sleep 0.1
done
grep -q "metadata leader" "$tmp"/nats-*.log || die "the JetStream cluster elected no leader: see $tmp/nats-*.log"
echo "three nats-servers in one JetStream cluster: ${urls[*]}" >&2

export C4BOOK_NATS_TOKEN=$token C4BOOK_QUEUE_REPLICAS=3
all=$(IFS=,; echo "${urls[*]}")
"$c4book" coordinator --depth "$depth" --root "$root" --book "$tmp/book.db" --nats "$all" >"$tmp/coordinator.out" 2>"$tmp/coordinator.log" &
coordinator_pid=$!
pids+=("$coordinator_pid")
for k in $(seq "$workers"); do
	# Each worker lists the servers from another one first.
	first=$((k % 3))
	list=$(for j in 0 1 2; do echo -n "${urls[(first + j) % 3]},"; done)
	"$c4book" worker --concurrency 1 --id "worker-$k" --nats "${list%,}" >"$tmp/worker-$k.log" 2>&1 &
	pids+=("$!")
done
echo "coordinator and $workers workers started; logs in $tmp" >&2

# Kill server 2 once the job is solving, and start it again.
for _ in $(seq 600); do
	grep -q "tasks published" "$tmp/coordinator.log" && break
	kill -0 "$coordinator_pid" 2>/dev/null || break
	sleep 0.1
done
sleep 2
if kill -0 "$coordinator_pid" 2>/dev/null; then
	kill -KILL "${server_pids[2]}"
	wait "${server_pids[2]}" 2>/dev/null || true
	echo "server c4book-2 killed (SIGKILL) while the job solves; down ${down}s" >&2
	sleep "$down"
	start_server 2
	echo "server c4book-2 started again on its store" >&2
else
	echo "$prog: the job ended before a server could be killed: use a longer job (--depth)" >&2
fi

status=0
wait "$coordinator_pid" || status=$?
cat "$tmp/coordinator.out"
[ "$status" -eq 0 ] || die "the coordinator exited with status $status: see $tmp/coordinator.log"
"$c4book" book verify --book "$tmp/book.db" --sample 200
replicas=$(curl -s "http://127.0.0.1:$http_port/jsz?streams=true&config=true" |
	jq -r '[.account_details[].stream_detail[] | select(.name | startswith("C4BOOK_")) | "\(.name) \(.config.num_replicas)"] | join(", ")')
echo "streams and their replicas: $replicas" >&2
case $replicas in
*"C4BOOK_TASKS 3"*"C4BOOK_RESULTS 3"* | *"C4BOOK_RESULTS 3"*"C4BOOK_TASKS 3"*) ;;
*) die "the streams do not have 3 replicas: $replicas" ;;
esac
echo "PASS: the job completed on a three-server cluster with one server killed and restarted, and the book verifies" >&2
