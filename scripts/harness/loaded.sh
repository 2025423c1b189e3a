#!/usr/bin/env bash
# loaded.sh: a book built on a busy machine must be exactly the book built
# on an idle one. It builds a reference book with one worker thread on the
# idle machine, then builds the same book again, several times, with more
# worker threads than cores while busy loops load every core, and
# compares each with the reference entry for entry (their text exports).
# A race that only shows when threads are descheduled at the wrong moment
# (as the one that stored a stopped search's 0, issue #19) shows here.
# The runs take turns at three ways of running a job:
#
#   local        c4book generate, its worker threads in the process
#   interrupted  the same, stopped with Ctrl-C (SIGINT) after a random
#                5 to 20 seconds and run again to its end
#   worker       c4book coordinator --listen with a separate c4book worker
#                process, over TCP with a token
#
# Each run's book must also pass "c4book book verify". The script ends with
# PASS or FAIL; the exit status is 1 if any run differs, and the logs are
# then kept and their directory printed.
#
# Usage: scripts/harness/loaded.sh [options]
#
#   -r, --root MOVES     root of the job (default 44444433, the quick start)
#   -d, --depth D        depth of the job (default 20: 2,880,247 positions)
#       --runs N         loaded runs (default 3: one of each way)
#       --threads N      worker threads of each loaded run (default 4 per CPU)
#       --hogs N         busy loops beside each loaded run (default 1 per CPU)
#       --reference BOOK use this book as the reference instead of building
#                        one (it must be of the same root and depth)
#       --timeout S      seconds a run may take (default 1200)
#       --keep           keep the logs and books even when every run passes
#
# c4book is built from this repository, unless the environment variable
# C4BOOK names a binary. Example: scripts/harness/loaded.sh --runs 6
set -euo pipefail

prog=loaded.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

cpus=$(nproc)
root=44444433 depth=20 runs=3 threads=$((4 * cpus)) hogs=$cpus reference="" timeout=1200 keep=0
while [ $# -gt 0 ]; do
	case $1 in
	-r | --root) root=${2?$1 needs a value}; shift 2 ;;
	-d | --depth) depth=${2:?$1 needs a value}; shift 2 ;;
	--runs) runs=${2:?$1 needs a value}; shift 2 ;;
	--threads) threads=${2:?$1 needs a value}; shift 2 ;;
	--hogs) hogs=${2:?$1 needs a value}; shift 2 ;;
	--reference) reference=${2:?$1 needs a value}; shift 2 ;;
	--timeout) timeout=${2:?$1 needs a value}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done
need_numbers depth runs threads hogs timeout
[ "$threads" -ge 1 ] || die "--threads $threads: at least 1"
[ -z "$reference" ] || [ -d "$reference" ] || die "--reference $reference: not a book directory"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/c4book-loaded.XXXXXX")
hog_pids=() job_pids=()
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	kill_all "${hog_pids[@]}" "${job_pids[@]}"
	keep_or_remove_tmp "$status" "logs and books"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

c4book=$(find_c4book "$repo")

# fail prints FAIL and why on standard error and exits with status 1 (this
# script runs no scenario: it replaces lib.sh's fail).
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# start_hogs starts the busy loops; stop_hogs ends them.
start_hogs() {
	local i
	for ((i = 0; i < hogs; i++)); do
		(while :; do :; done) &
		hog_pids+=($!)
	done
}
stop_hogs() {
	local pid
	for pid in "${hog_pids[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	hog_pids=()
}

# run_bg LOG COMMAND... runs COMMAND in the background (pid in bg_pid),
# its output in LOG.
run_bg() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	bg_pid=$!
	job_pids+=("$bg_pid")
}

# wait_done PID WHAT waits for PID, at most --timeout seconds, and fails
# unless it exits with status 0.
wait_done() {
	local pid=$1 what=$2 limit rc=0
	limit=$(($(now) + timeout))
	while kill -0 "$pid" 2>/dev/null; do
		[ "$(now)" -lt "$limit" ] || fail "$what took more than ${timeout}s"
		sleep 0.5
	done
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || fail "$what exited with status $rc"
}

# generate runs c4book generate of the job; exec, so that run_bg's pid is
# c4book's and a signal sent to it reaches c4book.
generate() { exec "$c4book" generate --root "$root" --depth "$depth" "$@"; }

# export_book BOOK OUT writes BOOK's text export to OUT.
export_book() {
	"$c4book" book export --book "$1" --format text --out "$2" 2>"$2.log" || fail "book export of $1 failed (see $2.log)"
}

# run_local DIR, run_interrupted DIR, run_worker DIR build DIR/book.db
# with $threads threads, one way each.
run_local() {
	run_bg "$1/generate.log" generate --book "$1/book.db" --workers "$threads"
	wait_done "$bg_pid" "generate"
}

run_interrupted() {
	local after=$((5 + RANDOM % 16)) rc=0
	run_bg "$1/generate.1.log" generate --book "$1/book.db" --workers "$threads"
	sleep "$after"
	if kill -INT "$bg_pid" 2>/dev/null; then
		wait "$bg_pid" || rc=$?
		[ "$rc" -eq 130 ] || fail "generate stopped with Ctrl-C exited with status $rc, not 130 (see $1/generate.1.log)"
		echo "    stopped with Ctrl-C after ${after}s, run again"
	fi
	run_bg "$1/generate.2.log" generate --book "$1/book.db" --workers "$threads"
	wait_done "$bg_pid" "generate (resumed)"
}

run_worker() {
	local port coord worker
	port=$(free_port)
	export C4BOOK_NATS_TOKEN
	C4BOOK_NATS_TOKEN=$(new_token)
	run_bg "$1/coordinator.log" "$c4book" coordinator --book "$1/book.db" --root "$root" --depth "$depth" \
		--listen "127.0.0.1:$port"
	coord=$bg_pid
	run_bg "$1/worker.log" "$c4book" worker --nats "nats://127.0.0.1:$port" --concurrency "$threads"
	worker=$bg_pid
	wait_done "$coord" "the coordinator"
	kill -INT "$worker" 2>/dev/null || true
	wait "$worker" 2>/dev/null || true
	unset C4BOOK_NATS_TOKEN
}

echo "job: root ${root:--}, depth $depth; $runs loaded runs of $threads worker threads beside $hogs busy loops ($cpus CPUs); logs in $tmp"
if [ -z "$reference" ]; then
	mkdir -p "$tmp/reference"
	reference=$tmp/reference/book.db
	t=$(now)
	run_bg "$tmp/reference/generate.log" generate --book "$reference" --workers 1
	wait_done "$bg_pid" "the reference build"
	echo "reference: one worker thread, idle machine: $(($(now) - t))s"
fi
export_book "$reference" "$tmp/reference.txt"
entries=$(wc -l <"$tmp/reference.txt")
echo "reference: $entries entries"

ways=(local interrupted worker)
failed=0
for ((i = 1; i <= runs; i++)); do
	way=${ways[$(((i - 1) % ${#ways[@]}))]}
	dir=$tmp/run$i
	mkdir -p "$dir"
	echo "run $i: $way, $threads threads, $hogs busy loops"
	t=$(now)
	start_hogs
	"run_$way" "$dir"
	stop_hogs
	elapsed=$(($(now) - t))
	export_book "$dir/book.db" "$dir/export.txt"
	compare_exports "$tmp/reference.txt" "$dir/export.txt" "$dir/diff.txt"
	verify=ok
	if ! "$c4book" book verify --book "$dir/book.db" >"$dir/verify.txt" 2>&1; then
		verify="FAILED (see $dir/verify.txt)"
	fi
	echo "    ${elapsed}s; $(wc -l <"$dir/export.txt") entries, $wrong wrong scores, $misplaced positions out of place; book verify: $verify"
	if [ "$wrong" -ne 0 ] || [ "$misplaced" -ne 0 ] || [ "$verify" != ok ]; then
		failed=$((failed + 1))
		head -20 "$dir/diff.txt" | sed 's/^/      /'
	fi
done
if [ "$failed" -gt 0 ]; then
	echo "FAIL: $failed of $runs loaded runs differ from the reference"
	exit 1
fi
echo "PASS: $runs loaded runs, $entries entries each, 0 differences from the one-thread build"
