#!/usr/bin/env bash
# liar.sh: a worker with valid credentials that lies, on real processes.
# Three workers are registered with "c4book worker add" (alice, bob and
# mallory, each with its own key file); a "c4book coordinator --listen"
# runs the job with its embedded server, which admits each worker by its
# key; the three "c4book worker --nkey" processes connect over TCP, and
# mallory is started with the test-only fault injection
# C4BOOK_TEST_LIE_FRACTION, which makes it publish wrong scores (possible
# at their depth, so that no check of a single result sees them) for a
# fraction of its results. Two scenarios:
#
#   cross-check  the job cross-checks a fraction of its tasks
#                (--cross-check, default 0.25): mallory fails a check and
#                is quarantined, and its results stored before are solved
#                again by the others. The coordinator is killed (SIGKILL)
#                as soon as it logs the quarantine and started again: its
#                second run must still refuse mallory ("quarantined:
#                mallory" in its summary). The job completes.
#   revoke       cross-checking off: mallory's lies are stored (the book
#                is compared with c4book solve, and must be wrong), then
#                "c4book book revoke --worker mallory" and the job run
#                again with alice and bob alone.
#
# After each, the finished book must pass "c4book book verify" with 0
# disagreements, and every position of its text export (or --check N of
# them) must get the same score from "c4book solve", which knows nothing
# of the book. Each scenario ends with PASS or FAIL; the exit status is 1
# if one failed, and the logs are then kept and their directory printed.
#
# Usage: scripts/harness/liar.sh [options] [cross-check] [revoke]
#
#   -r, --root MOVES       root of the job (default 44444433)
#   -d, --depth D          depth of the job (default 14: 8,678 positions,
#                          2,098 to solve, 263 tasks of 8)
#       --task-size N      positions in a task (default 8)
#       --cross-check F    fraction cross-checked in the cross-check
#                          scenario (default 0.25)
#       --lie F            fraction of mallory's results that lie (default 0.5)
#       --sample N         entries book verify solves again (default 200)
#       --check N          export lines checked with c4book solve (default 0: all)
#       --timeout S        seconds a job may take (default 300)
#       --keep             keep the logs even when everything passes
#
# c4book is built from this repository with the tag c4book_testlie (the
# lying worker is in no other build), unless the environment variable
# C4BOOK names a binary, which must be built so too (go build -tags
# c4book_testlie ./cmd/c4book): another refuses mallory's variable. No
# nats-server is needed: the coordinator's embedded server listens on a
# free loopback port.
#
# Example: scripts/harness/liar.sh cross-check
set -euo pipefail

prog=liar.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

scenarios=() root=44444433 depth=14 task_size=8 cross=0.25 lie=0.5 sample=200 check=0 timeout=300 keep=0
while [ $# -gt 0 ]; do
	case $1 in
	cross-check | revoke) scenarios+=("$1"); shift ;;
	-r | --root) root=${2?$1 needs a value}; shift 2 ;;
	-d | --depth) depth=${2:?$1 needs a value}; shift 2 ;;
	--task-size) task_size=${2:?$1 needs a value}; shift 2 ;;
	--cross-check) cross=${2:?$1 needs a value}; shift 2 ;;
	--lie) lie=${2:?$1 needs a value}; shift 2 ;;
	--sample) sample=${2:?$1 needs a value}; shift 2 ;;
	--check) check=${2:?$1 needs a value}; shift 2 ;;
	--timeout) timeout=${2:?$1 needs a value}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done
need_numbers depth task_size sample check timeout
[[ $cross =~ ^(0?\.[0-9]*[1-9][0-9]*|1)$ ]] || die "--cross-check $cross: a fraction above 0, at most 1"
[[ $lie =~ ^(0?\.[0-9]*[1-9][0-9]*|1)$ ]] || die "--lie $lie: a fraction above 0, at most 1"
[ ${#scenarios[@]} -gt 0 ] || scenarios=(cross-check revoke)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/c4book-liar.XXXXXX")
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	keep_or_remove_tmp "$status"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

c4book=$(find_c4book "$repo" c4book_testlie)
echo "job: 7x6 root ${root:--} depth $depth, tasks of $task_size; mallory lies on $lie of its results; logs in $tmp"

# ---- Helpers of a scenario (they run in the scenario's subshell; those
# of lib.sh too: now_ms, secs, say, fail, alive, coordinator_gone,
# wait_for, logged, solve_again) ----

# start_coordinator [FLAGS...] starts a run of the job's coordinator
# (coord_pid; its summary in coordinator.RUN.out, its log in
# coordinator.RUN.log) and waits until its server listens.
start_coordinator() {
	runs=$((runs + 1))
	coord_out=$sdir/coordinator.$runs.out coord_log=$sdir/coordinator.$runs.log
	"$c4book" coordinator --book "$book" --root "$root" --depth "$depth" --task-size "$task_size" \
		--listen "127.0.0.1:$port" "$@" >"$coord_out" 2>"$coord_log" &
	coord_pid=$!
	wait_for 60 "the coordinator to listen (log $coord_log)" coordinator_listens
}

coordinator_listens() { logged "$coord_out" "workers connect to" || ! alive "$coord_pid"; }

# finish_job waits for the coordinator's run to end with status 0 and a
# complete job.
finish_job() {
	local rc=0
	wait_for "$timeout" "the job to complete (log $coord_log)" coordinator_gone
	wait "$coord_pid" || rc=$?
	[ "$rc" -eq 0 ] || fail "the coordinator (run $runs) exited with status $rc: see $coord_log"
	logged "$coord_out" "^Job .* complete" || fail "the coordinator's run $runs did not report the job complete: see $coord_out"
}

# start_worker NAME [ENV...] starts worker NAME with its key, one thread.
start_worker() {
	local who=$1
	shift
	env "$@" "$c4book" worker --nats "nats://127.0.0.1:$port" --nkey "$sdir/$who.nkey" --concurrency 1 --tt-size 16MiB \
		>"$sdir/$who.log" 2>&1 &
	worker_pid[$who]=$!
}

# stop_worker NAME interrupts worker NAME and waits for it.
stop_worker() {
	kill -INT "${worker_pid[$1]}" 2>/dev/null || true
	wait "${worker_pid[$1]}" 2>/dev/null || true
	unset "worker_pid[$1]"
}

# wrong_entries sets wrong to how many positions of the book (its text
# export, or --check of them) get another score from c4book solve.
wrong_entries() {
	"$c4book" book export --book "$book" --format text --out "$sdir/export.txt" 2>"$sdir/export.log" ||
		fail "book export failed (see $sdir/export.log)"
	solve_again "$check" ""
	wrong=$mismatches
}

# check_book: book verify says 0 disagreements, and every position checked
# gets the book's score from c4book solve.
check_book() {
	local rc=0
	"$c4book" book verify --book "$book" --sample "$sample" >"$sdir/verify.txt" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] && logged "$sdir/verify.txt" "^0 disagreements" ||
		fail "book verify --sample $sample: status $rc (see $sdir/verify.txt)"
	say "book verify: $(grep -E '^0 disagreements' "$sdir/verify.txt")"
	wrong_entries
	[ "$wrong" -eq 0 ] || fail "$wrong of $(wc -l <"$sdir/check.txt") positions of the book differ from c4book solve (see $sdir/mismatches.txt)"
	say "the book's $(wc -l <"$sdir/export.txt") positions: $(wc -l <"$sdir/check.txt") solved again by c4book solve, all match"
}

# summary_line LABEL prints the row LABEL of the last run's summary.
summary_line() { grep -E "^  $1 " "$coord_out" | sed 's/^ *//; s/  */ /g'; }

# scenario NAME runs the scenario NAME in a subshell of its own, with a
# fresh book, keys and logs in $tmp/NAME.
scenario() {
	name=$1 sdir=$tmp/$1
	coord_pid="" runs=0
	declare -gA worker_pid=()
	trap 'scenario_exit' EXIT
	mkdir -p "$sdir"
	book=$sdir/book.db
	port=$(free_port)
	t0=$(now_ms)
	local who
	for who in alice bob mallory; do
		"$c4book" worker add "$who" --book "$book" --out "$sdir/$who.nkey" >>"$sdir/worker-add.out" 2>&1 ||
			fail "c4book worker add $who failed (see $sdir/worker-add.out)"
	done
	say "workers registered: $(sed -n 's/^worker \([a-z]*\) (number \([0-9]*\)).*/\1 (\2)/p' "$sdir/worker-add.out" | paste -sd, - | sed 's/,/, /g')"
	"scenario_${name//-/_}"
}

# scenario_exit stops the processes of a scenario.
scenario_exit() {
	local status=$?
	[ "$status" -eq 0 ] || grep -q "^FAIL $name:" "$tmp/results.txt" 2>/dev/null ||
		echo "FAIL $name: the script stopped with status $status" | tee -a "$tmp/results.txt"
	kill_all "${worker_pid[@]}" $coord_pid
	exit "$status"
}

# ---- The scenarios ----

scenario_cross_check() {
	local restarted="no restart: the job ended first" lies
	echo "== cross-check: queue.cross-check $cross; mallory lies on $lie of its results"
	start_coordinator --cross-check "$cross"
	start_worker mallory C4BOOK_TEST_LIE_FRACTION="$lie"
	start_worker alice
	start_worker bob
	wait_for "$timeout" "the coordinator to quarantine mallory or end (log $coord_log)" quarantined_or_gone
	if ! coordinator_gone; then
		kill -KILL "$coord_pid"
		wait "$coord_pid" 2>/dev/null || true
		say "mallory quarantined ($(grep -m1 'worker quarantined' "$coord_log" | sed -n 's/.*why="\([^"]*\)".*/\1/p')); coordinator killed (SIGKILL) at once"
		start_coordinator --cross-check "$cross"
		restarted="the coordinator killed at the quarantine and started again"
	fi
	finish_job
	say "job complete after $runs coordinator run(s)"
	logged "$coord_out" "quarantined: mallory" || fail "the last run's summary does not say mallory is quarantined: see $coord_out"
	for row in "results ignored" "cross-checked tasks" "solved again"; do
		[ -z "$(summary_line "$row")" ] || say "last run: $(summary_line "$row")"
	done
	stop_worker alice
	stop_worker bob
	stop_worker mallory
	lies=$(sed -n 's/^FAULT INJECTION: \([0-9]* of [0-9]*\) results.*/\1/p' "$sdir/mallory.log")
	say "mallory lied about $lies results"
	check_book
	echo "PASS cross-check: mallory (lying on $lie of its results: $lies) caught by a cross-check at $cross and quarantined; $restarted, the quarantine kept; book verified, every position right" |
		tee -a "$tmp/results.txt"
}

quarantined_or_gone() { logged "$coord_log" "worker quarantined.*worker=mallory" || coordinator_gone; }

scenario_revoke() {
	local lies before
	echo "== revoke: no cross-check; mallory lies on $lie of its results; then book revoke --worker mallory and the job again"
	start_coordinator --cross-check 0
	start_worker mallory C4BOOK_TEST_LIE_FRACTION="$lie"
	start_worker alice
	start_worker bob
	finish_job
	stop_worker mallory
	lies=$(sed -n 's/^FAULT INJECTION: \([0-9]* of [0-9]*\) results.*/\1/p' "$sdir/mallory.log")
	say "job complete; mallory lied about $lies results; $(grep -E '^    mallory ' "$coord_out" | sed 's/^ *//; s/  */ /g')"
	wrong_entries
	[ "$wrong" -gt 0 ] || fail "no position of the book is wrong after mallory's lies: the fault injection did not work"
	before=$wrong
	say "the book: $wrong of its $(wc -l <"$sdir/export.txt") positions wrong (c4book solve)"
	"$c4book" book revoke --worker mallory --book "$book" >"$sdir/revoke.out" 2>&1 ||
		fail "book revoke --worker mallory failed (see $sdir/revoke.out)"
	say "book revoke: $(head -1 "$sdir/revoke.out")"
	start_coordinator --cross-check 0
	finish_job
	say "job run again with alice and bob: $(summary_line "solved by workers"), $(summary_line "derived")"
	logged "$coord_out" "^    mallory " && fail "mallory's results were taken after its revocation: see $coord_out"
	stop_worker alice
	stop_worker bob
	check_book
	echo "PASS revoke: mallory's lies ($lies results) stored with cross-checking off ($before positions wrong), revoked, the job run again: book verified, every position right" |
		tee -a "$tmp/results.txt"
}

# ---- Main ----

failed=0
start_all=$(now_ms)
for s in "${scenarios[@]}"; do
	set +e
	(
		set -e
		scenario "$s"
	)
	[ $? -eq 0 ] || failed=$((failed + 1))
	set -e
done
echo
echo "Results ($(secs $(($(now_ms) - start_all)))s in all):"
sed 's/^/  /' "$tmp/results.txt"
if [ "$failed" -gt 0 ]; then
	echo "$failed of ${#scenarios[@]} scenarios failed" >&2
	exit 1
fi
