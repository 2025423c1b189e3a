#!/usr/bin/env bash
# coordinator-memory.sh: the peak resident memory of a coordinator. Runs
# "c4book coordinator" with its embedded NATS server listening on the
# loopback interface, and one "c4book worker" process beside it, on a job
# (by default the README's quick start, a new book in a scratch
# directory); prints the coordinator's peak resident memory (GNU time's
# maximum resident set size) and its summary.
#
# Usage: scripts/tools/coordinator-memory.sh [-d DEPTH] [-r ROOT] [--stand-in] [--external] [-- c4book coordinator flags...]
#
#   -d, --depth D      depth of the book (default 20)
#   -r, --root MOVES   root position ("" for the empty board; default 44444433)
#       --stand-in     the worker is a stand-in that answers every task at once
#                      with a made-up score (TestStandInWorkerProcess of
#                      coordinator/scale_test.go, built with go test -c): the
#                      coordinator's share of a deep job, without the solving;
#                      the book, in a scratch directory, is then wrong, and is
#                      removed with it
#       --external     NATS is a separate nats-server process (run with
#                      scripts/deploy/nats-server.conf) instead of the
#                      coordinator's embedded server: the coordinator's own
#                      memory, and the server's peak beside it
#
# c4book is built from this repository, unless C4BOOK names a binary.
# Example, the depth-14 book of the empty board: scripts/tools/coordinator-memory.sh -d 14 -r "" --stand-in
set -euo pipefail

depth=20 root=44444433 stand_in=0
extra=()
external=0
prog=coordinator-memory.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

while [ $# -gt 0 ]; do
	case $1 in
	-d | --depth) depth=$2; shift 2 ;;
	-r | --root) root=$2; shift 2 ;;
	--stand-in) stand_in=1; shift ;;
	--external) external=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	*) usage >&2; die "unknown argument $1" ;;
	esac
done
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is needed: apt-get install time"

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

c4book=$(find_c4book "$repo")
port=$(free_port)
export C4BOOK_NATS_TOKEN
C4BOOK_NATS_TOKEN=$(new_token)

if [ "$stand_in" = 1 ]; then
	echo "Building the stand-in worker ..." >&2
	(cd "$repo" && go test -c -o "$tmp/standin.test" ./coordinator) >&2 || die "building the stand-in failed"
fi

nats=(--listen "127.0.0.1:$port")
if [ "$external" = 1 ]; then
	nats_server=$(find_nats_server)
	C4BOOK_NATS_HOST=127.0.0.1 C4BOOK_NATS_PORT=$port C4BOOK_NATS_STORE=$tmp/store \
		start_nats_server "$nats_server" "$repo/scripts/deploy/nats-server.conf" "$tmp/nats-server.log" || die "nats-server did not start"
	pids+=("$nats_pid")
	nats=(--nats "nats://127.0.0.1:$port")
fi
/usr/bin/time -f "%M" -o "$tmp/rss" "$c4book" coordinator --depth "$depth" --root "$root" \
	--book "$tmp/book.db" "${nats[@]}" "${extra[@]}" >"$tmp/coordinator.out" 2>"$tmp/coordinator.err" &
coord=$!
pids+=("$coord")
for _ in $(seq 300); do # the embedded server listens once the book is open
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
	kill -0 "$coord" 2>/dev/null || break
	sleep 0.1
done
if [ "$stand_in" = 1 ]; then
	C4BOOK_STANDIN_NATS="nats://127.0.0.1:$port" "$tmp/standin.test" -test.run '^TestStandInWorkerProcess$' -test.v >"$tmp/worker.out" 2>&1 &
else
	"$c4book" worker --nats "nats://127.0.0.1:$port" --exit-when-idle 30s >"$tmp/worker.out" 2>&1 &
fi
pids+=("$!")
if ! wait "$coord"; then
	cat "$tmp/coordinator.err" >&2
	die "the coordinator failed"
fi
cat "$tmp/coordinator.out"
kb=$(cat "$tmp/rss")
what=""
[ "$stand_in" = 0 ] || what=", stand-in worker"
[ "$external" = 0 ] || what="$what, external nats-server"
echo "coordinator peak resident memory: $((kb / 1024)) MiB (job --root \"$root\" --depth $depth$what)"
if [ "$external" = 1 ]; then
	hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$nats_pid/status" 2>/dev/null || echo 0)
	echo "nats-server peak resident memory: $((hwm / 1024)) MiB"
fi
