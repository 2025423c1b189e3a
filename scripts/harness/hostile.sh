#!/usr/bin/env bash
# hostile.sh: one hostile worker key against a job, with real processes.
# Three workers are registered ("c4book worker add"): alice and bob run
# "c4book worker" honestly; mallory runs scripts/harness/attacker, which,
# with mallory's key, floods the result stream (900 KB results on jobs
# nobody runs, junk on its own subject), sends requests whose reply subject
# is alice's result subject, the job's status key or its task subject, holds
# 50 tasks for ever reporting progress on them, takes 40 tasks at a time
# and lies on those it does not see two copies of, and acks and
# terminates deliveries it guesses. The job runs on "c4book coordinator
# --listen" (embedded server, keys only, queue.ack-wait 5s).
#
# It passes when the job finishes within --timeout seconds and its book
# equals, entry for entry, a book of the same job built by one honest
# worker thread (their text exports), and "c4book book verify" passes.
# The attacker's counts, the coordinator's summary rows about it and the
# times are printed. The exit status is 1 on a failure, and the logs are
# then kept and their directory printed.
#
# Usage: scripts/harness/hostile.sh [options]
#
#   -r, --root MOVES      root of the job (default 44444433)
#   -d, --depth D         depth of the job (default 16)
#       --task-size N     positions in a task (default 8)
#       --cross-check F   fraction cross-checked (default 0.1)
#       --attacks LIST    attacks of scripts/harness/attacker (default all)
#       --timeout S       seconds the attacked job may take (default 600)
#       --keep            keep the logs even when it passes
#
# c4book is built from this repository, unless C4BOOK names a binary; the
# attacker is always built from it. No nats-server is needed.
set -euo pipefail

prog=hostile.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

root=44444433 depth=16 task_size=8 cross=0.1 attacks=flood,inject,hoard,lie,acks timeout=600 keep=0
while [ $# -gt 0 ]; do
	case $1 in
	-r | --root) root=${2?$1 needs a value}; shift 2 ;;
	-d | --depth) depth=${2:?$1 needs a value}; shift 2 ;;
	--task-size) task_size=${2:?$1 needs a value}; shift 2 ;;
	--cross-check) cross=${2:?$1 needs a value}; shift 2 ;;
	--attacks) attacks=${2:?$1 needs a value}; shift 2 ;;
	--timeout) timeout=${2:?$1 needs a value}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done
need_numbers depth task_size timeout

tmp=$(mktemp -d "${TMPDIR:-/tmp}/c4book-hostile.XXXXXX")
pids=()
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	kill_all "${pids[@]}"
	keep_or_remove_tmp "$status"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

c4book=$(find_c4book "$repo")
echo "Building the attacker ..." >&2
(cd "$repo" && go build -o "$tmp/attacker" ./scripts/harness/attacker) >&2
# fail prints FAIL and why and exits with status 1 (this script runs no
# scenario: it replaces lib.sh's fail).
fail() {
	echo "FAIL: $*"
	exit 1
}

echo "job: root ${root:--}, depth $depth, tasks of $task_size, cross-check $cross; attacks: $attacks; logs in $tmp"

# The reference: one honest thread, nobody else.
t=$(now)
"$c4book" generate --root "$root" --depth "$depth" --task-size "$task_size" --book "$tmp/ref.db" --workers 1 \
	>"$tmp/ref.out" 2>"$tmp/ref.log" || fail "the reference build failed (see $tmp/ref.log)"
ref_secs=$(($(now) - t))
"$c4book" book export --book "$tmp/ref.db" --out "$tmp/ref.txt" 2>/dev/null || fail "export of the reference"
echo "reference: $(wc -l <"$tmp/ref.txt") entries, one honest thread, ${ref_secs}s"

book=$tmp/book.db
for who in alice bob mallory; do
	"$c4book" worker add "$who" --book "$book" --out "$tmp/$who.nkey" >>"$tmp/worker-add.out" 2>&1 ||
		fail "c4book worker add $who (see $tmp/worker-add.out)"
done
port=$(free_port)
url=nats://127.0.0.1:$port
t=$(now)
C4BOOK_QUEUE_ACK_WAIT=5s "$c4book" coordinator --book "$book" --root "$root" --depth "$depth" --task-size "$task_size" \
	--cross-check "$cross" --listen "127.0.0.1:$port" >"$tmp/coordinator.out" 2>"$tmp/coordinator.log" &
coord=$!
pids+=("$coord")
for _ in $(seq 600); do
	logged "$tmp/coordinator.out" "workers connect to" && break
	kill -0 "$coord" 2>/dev/null || fail "the coordinator stopped (see $tmp/coordinator.log)"
	sleep 0.1
done
job=$(sed -n 's/.*msg=planned .*job=\([^ ]*\).*/\1/p' "$tmp/coordinator.log" | head -1)
for _ in $(seq 600); do
	[ -n "$job" ] && break
	sleep 0.1
	job=$(sed -n 's/.* job=\([^ ]*\).*/\1/p' "$tmp/coordinator.log" | head -1)
done
[ -n "$job" ] || fail "the coordinator's log names no job"

"$tmp/attacker" --nats "$url" --nkey "$tmp/mallory.nkey" --job "$job" --victim alice --attacks "$attacks" \
	>"$tmp/attacker.out" 2>"$tmp/attacker.log" &
attacker=$!
pids+=("$attacker")
sleep 2 # mallory first, to take its hoards
honest=()
for who in alice bob; do
	"$c4book" worker --nats "$url" --nkey "$tmp/$who.nkey" --concurrency 1 --tt-size 16MiB >"$tmp/$who.log" 2>&1 &
	pids+=($!)
	honest+=($!)
done

limit=$(($(now) + timeout))
while kill -0 "$coord" 2>/dev/null; do
	[ "$(now)" -lt "$limit" ] || fail "the attacked job took more than ${timeout}s (see $tmp/coordinator.log)"
	sleep 0.5
done
rc=0
wait "$coord" || rc=$?
job_secs=$(($(now) - t))
[ "$rc" -eq 0 ] || fail "the coordinator exited with status $rc (see $tmp/coordinator.log)"
for pid in "$attacker" "${honest[@]}"; do
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
done
echo "the attacked job: ${job_secs}s (the reference ${ref_secs}s); what mallory did:"
sed 's/^ATTACK /  /' "$tmp/attacker.out"
echo "the coordinator's summary, about it:"
grep -E "^  (results (rejected|unsigned|ignored)|cross-checked|tasks overdue|queue set up|solved again|wall time)" "$tmp/coordinator.out" | sed 's/^ */  /' || true
grep -E "^    mallory " "$tmp/coordinator.out" | sed 's/^ */  /' || true

"$c4book" book export --book "$book" --out "$tmp/book.txt" 2>/dev/null || fail "export of the attacked job's book"
compare_exports "$tmp/ref.txt" "$tmp/book.txt" "$tmp/diff.txt"
if [ "$(wc -l <"$tmp/ref.txt")" -ne "$(wc -l <"$tmp/book.txt")" ]; then
	misplaced=$((misplaced + 1))
fi
"$c4book" book verify --book "$book" >"$tmp/verify.txt" 2>&1 || fail "book verify (see $tmp/verify.txt)"
if [ "$wrong" -ne 0 ] || [ "$misplaced" -ne 0 ]; then
	head -10 "$tmp/diff.txt"
	fail "the attacked job's book differs from the honest one: $wrong wrong scores, $misplaced positions out of place"
fi
echo "PASS: the attacked job finished in ${job_secs}s (bound ${timeout}s); its book equals the honest one, $(wc -l <"$tmp/book.txt") entries, 0 wrong; book verify passed"
