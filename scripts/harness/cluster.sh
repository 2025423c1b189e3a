#!/usr/bin/env bash
# cluster.sh: run a generation job on a local cluster of processes: a real
# nats-server with JetStream, one "c4book coordinator" and K "c4book worker"
# processes, all on this machine, talking over TCP on the loopback
# interface with a token. It prints the coordinator's summary, checks the
# book with "c4book book verify --sample N", and removes everything it
# started when it exits (the book stays).
#
# Usage: scripts/harness/cluster.sh [options] [-- c4book flags...]
#
#   -d, --depth D          depth of the book (default 8)
#   -r, --root MOVES       root position (default: the empty board)
#   -b, --book PATH        book directory (default c4book.db)
#   -k, --workers K        worker processes (default 2)
#   -c, --concurrency N    solving threads of each worker (default 1)
#   -p, --port PORT        port of nats-server (default: a free one)
#       --width W, --height H   board size (default 7x6)
#       --tt-size SIZE     table of each worker, shared by its threads (default worker.tt-size)
#       --sample N         entries book verify solves again at the end (default 100)
#
# Flags after -- go to the coordinator (--task-size 32, ...).
#
# nats-server is taken from PATH, GOBIN or $(go env GOPATH)/bin, or
# installed there with "go install github.com/nats-io/nats-server/v2@v2.15.2".
# c4book is built from this repository, unless the environment variable
# C4BOOK names a binary to use instead. Run from anywhere.
#
# Example: scripts/harness/cluster.sh --width 5 --height 4 --depth 10 --book /tmp/5x4.db -k 3
set -euo pipefail

depth=8 root="" book=c4book.db workers=2 concurrency=1 port="" width=7 height=6 tt_size="" sample=100
extra=()

prog=cluster.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

while [ $# -gt 0 ]; do
	case $1 in
	-d | --depth) depth=${2:?$1 needs a value}; shift 2 ;;
	-r | --root) root=${2?$1 needs a value}; shift 2 ;;
	-b | --book) book=${2:?$1 needs a value}; shift 2 ;;
	-k | --workers) workers=${2:?$1 needs a value}; shift 2 ;;
	-c | --concurrency) concurrency=${2:?$1 needs a value}; shift 2 ;;
	-p | --port) port=${2:?$1 needs a value}; shift 2 ;;
	--width) width=${2:?$1 needs a value}; shift 2 ;;
	--height) height=${2:?$1 needs a value}; shift 2 ;;
	--tt-size) tt_size=${2:?$1 needs a value}; shift 2 ;;
	--sample) sample=${2:?$1 needs a value}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done
[[ $workers =~ ^[0-9]+$ ]] || die "--workers $workers: not a number"
[[ $concurrency =~ ^[1-9][0-9]*$ ]] || die "--concurrency $concurrency: must be 1 or more"
[ -z "$port" ] || [[ $port =~ ^[0-9]+$ ]] || die "--port $port: not a number"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/c4book-cluster.XXXXXX")
pids=()
nats_pid=""

# cleanup stops the workers (Ctrl-C: they hand their tasks back), the
# coordinator and the server, then removes the temporary directory, keeping
# it when the job failed so that its logs can be read.
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do
		kill -INT "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [ -n "$nats_pid" ]; then
		kill -TERM "$nats_pid" 2>/dev/null || true
		wait "$nats_pid" 2>/dev/null || true
	fi
	if [ "$status" -eq 0 ]; then
		rm -rf "$tmp"
	else
		echo "cluster.sh: exit status $status; logs kept in $tmp" >&2
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

nats_server=$(find_nats_server)
echo "nats-server: $nats_server ($("$nats_server" --version))" >&2

c4book=$(find_c4book "$repo")

# The server runs with the project's shipped config, which takes its values
# from the environment: the token is in the environment of nats-server and
# of the c4book processes, never on a command line.
token=$(new_token)
[ -n "$port" ] || port=$(free_port)
C4BOOK_NATS_HOST=127.0.0.1 C4BOOK_NATS_PORT=$port C4BOOK_NATS_STORE=$tmp/store C4BOOK_NATS_TOKEN=$token \
	start_nats_server "$nats_server" "$repo/scripts/deploy/nats-server.conf" "$tmp/nats-server.log" || exit 2
url=nats://127.0.0.1:$port
echo "nats-server with JetStream on $url (store $tmp/store)" >&2

export C4BOOK_NATS_TOKEN=$token C4BOOK_NATS_URL=$url
board=(--width "$width" --height "$height")
worker_flags=(--concurrency "$concurrency")
[ -z "$tt_size" ] || worker_flags+=(--tt-size "$tt_size")

start=$(date +%s%N)
"$c4book" coordinator "${board[@]}" --depth "$depth" --root "$root" --book "$book" "${extra[@]}" >"$tmp/summary.txt" &
coordinator_pid=$!
pids+=("$coordinator_pid")
for i in $(seq "$workers"); do
	"$c4book" worker "${worker_flags[@]}" --id "worker-$i-$$" >"$tmp/worker-$i.log" 2>&1 &
	pids+=("$!")
done
echo "coordinator (pid $coordinator_pid) and $workers workers started; logs in $tmp" >&2

status=0
wait "$coordinator_pid" || status=$?
wall_ns=$(($(date +%s%N) - start))
cat "$tmp/summary.txt"

if [ "$status" -eq 0 ] && [ -r "/proc/$nats_pid/stat" ]; then
	coordinator_cpu=$(awk '$1 == "cpu" && $2 == "time" {print $3}' "$tmp/summary.txt")
	nats_ticks=$(cpu_ticks "$nats_pid")
	worker_ticks=0
	for pid in "${pids[@]:1}"; do
		worker_ticks=$((worker_ticks + $(cpu_ticks "$pid")))
	done
	awk -v wall="$wall_ns" -v hz="$(getconf CLK_TCK)" -v nats="$nats_ticks" -v work="$worker_ticks" -v coord="$coordinator_cpu" 'BEGIN {
		c = coord; sub(/s$/, "", c)
		n = nats / hz; w = work / hz
		printf "cluster: wall %.2fs; CPU: coordinator %.2fs, nats-server %.2fs, workers %.2fs; coordinator and nats-server %.1f%% of the CPU used\n",
			wall / 1e9, c, n, w, 100 * (c + n) / (c + n + w)
	}'
fi
if [ "$status" -eq 0 ]; then
	# The book is the coordinator's no more: check it as a user would.
	"$c4book" book verify --book "$book" --sample "$sample" >"$tmp/verify.txt" 2>&1 || status=$?
	cat "$tmp/verify.txt"
	[ "$status" -eq 0 ] || echo "cluster.sh: book verify failed (status $status)" >&2
fi
exit "$status"
