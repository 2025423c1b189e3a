#!/usr/bin/env bash
# chaos.sh: fault-injection tests of c4book on real processes. Each
# scenario runs one generation job on a local cluster, as
# scripts/harness/cluster.sh starts it (a real nats-server with JetStream
# and a token on a loopback port, K "c4book worker" processes, then one
# "c4book coordinator"), and injects its fault again and again, at moments
# set by the job's progress (the results the workers have sent, read from
# the server's monitoring endpoint) plus a random delay. Then it checks the
# book:
#   - the coordinator's last run exits with status 0 and says "complete",
#     and running the same command again says there is nothing to do;
#   - c4book book verify --sample N passes (every derived entry is the
#     negamax of its children; N random entries solved again);
#   - the book holds exactly the job's positions, and positions of its text
#     export (--check of them at random, or all) get the same score from
#     c4book solve, which knows nothing of the book.
# Each scenario prints what it did and PASS or FAIL; the exit status is 1
# if any failed, and the logs of every process are then kept and their
# directory printed.
#
# Usage: scripts/harness/chaos.sh [options]
#
# Scenarios (all by default; naming some runs only those):
#   --nats-restart       nats-server killed (SIGKILL) and started again on the
#                        same store and port, 3 times: while the coordinator
#                        plans and the workers wait for the queue (down 6-7 s),
#                        then twice while they solve (down 0.5-2.5 s, then
#                        2 x ack-wait); no process may exit
#   --worker-pause       a worker stopped (SIGSTOP) while solving until its task
#                        is delivered to another worker (after ack-wait), then
#                        resumed (SIGCONT), 2 times: at once, then ack-wait later
#   --worker-kill        a random worker killed (SIGKILL) at a random moment and
#                        started again, 8 times
#   --coordinator-kill   the coordinator killed (SIGKILL) and started again with
#                        the same command, 5 times: while it plans (or publishes),
#                        while it collects, while it derives; the workers
#                        may solve more than the job's positions only by the
#                        tasks in their hands (kills x K x task size)
#   With --quick: 2, 1, 4 and 3 times.
#
# Options:
#   -q, --quick            a smaller job (depth 16) and fewer faults: a minute or two
#   -f, --faults F         faults injected by each scenario
#   -k, --workers K        worker processes (default 3), one solving thread each
#   -r, --root MOVES       root of the job (default 44444433)
#   -d, --depth D          depth of the job (default 17; 16 with --quick)
#       --width W, --height H   board size (default 7x6)
#       --task-size N      positions in a task (default 64)
#       --ack-wait D       queue.ack-wait (default 3s); max-deliver is 10
#       --sample N         entries re-solved by book verify (default 200)
#       --check N          export lines checked with c4book solve (default 500; 0: all)
#       --timeout S        seconds a scenario's job may take (default 300)
#       --seed S           seed of the random choices (default: random; printed)
#       --keep             keep the logs even when everything passes
#
# nats-server is taken from PATH, GOBIN or $(go env GOPATH)/bin, or installed
# there with go install; c4book is built from this repository, unless the
# environment variable C4BOOK names a binary. Needs curl and jq.
#
# Example: scripts/harness/chaos.sh --quick --worker-kill --coordinator-kill
set -euo pipefail

prog=chaos.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

all_scenarios=(nats-restart worker-pause worker-kill coordinator-kill)
scenarios=() quick=0 faults="" workers=3 root=44444433 depth="" width=7 height=6
task_size=64 ack_wait=3s max_deliver=10 sample=200 check=500 timeout=300 seed="" keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--nats-restart | --worker-pause | --worker-kill | --coordinator-kill) scenarios+=("${1#--}"); shift ;;
	-q | --quick) quick=1; shift ;;
	-f | --faults) faults=${2:?$1 needs a value}; shift 2 ;;
	-k | --workers) workers=${2:?$1 needs a value}; shift 2 ;;
	-r | --root) root=${2?$1 needs a value}; shift 2 ;;
	-d | --depth) depth=${2:?$1 needs a value}; shift 2 ;;
	--width) width=${2:?$1 needs a value}; shift 2 ;;
	--height) height=${2:?$1 needs a value}; shift 2 ;;
	--task-size) task_size=${2:?$1 needs a value}; shift 2 ;;
	--ack-wait) ack_wait=${2:?$1 needs a value}; shift 2 ;;
	--sample) sample=${2:?$1 needs a value}; shift 2 ;;
	--check) check=${2:?$1 needs a value}; shift 2 ;;
	--timeout) timeout=${2:?$1 needs a value}; shift 2 ;;
	--seed) seed=${2:?$1 needs a value}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done
[ -n "$depth" ] || depth=$((quick ? 16 : 17))
need_numbers workers depth task_size sample check timeout
[ -z "$faults" ] || [[ $faults =~ ^[1-9][0-9]*$ ]] || die "--faults $faults: must be 1 or more"
[ -z "$seed" ] || [[ $seed =~ ^[0-9]+$ ]] || die "--seed $seed: not a number"
[ "$workers" -ge 2 ] || die "--workers $workers: at least 2 (a paused or killed worker needs another to take its task)"
[[ $ack_wait =~ ^([0-9]+)s$ ]] || die "--ack-wait $ack_wait: give whole seconds, such as 3s"
ack_wait_s=${BASH_REMATCH[1]}
[ ${#scenarios[@]} -gt 0 ] || scenarios=("${all_scenarios[@]}")
[ -n "$seed" ] || seed=$((RANDOM * 32768 + RANDOM))
command -v curl >/dev/null || die "curl is needed (the server's monitoring endpoint)"
command -v jq >/dev/null || die "jq is needed (the server's monitoring endpoint)"

# default_faults prints how many faults scenario $1 injects.
default_faults() {
	if [ -n "$faults" ]; then
		echo "$faults"
		return
	fi
	case $1 in
	nats-restart) echo $((quick ? 2 : 3)) ;;
	worker-pause) echo $((quick ? 1 : 2)) ;;
	worker-kill) echo $((quick ? 4 : 8)) ;;
	coordinator-kill) echo $((quick ? 3 : 5)) ;;
	esac
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/c4book-chaos.XXXXXX")
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	keep_or_remove_tmp "$status"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

nats_server=$(find_nats_server)
c4book=$(find_c4book "$repo")
echo "nats-server: $nats_server ($("$nats_server" --version)); c4book: $c4book" >&2
board=(--width "$width" --height "$height")
echo "job: ${width}x$height root ${root:--} depth $depth, tasks of $task_size; $workers workers; queue.ack-wait $ack_wait, queue.max-deliver $max_deliver; seed $seed; logs in $tmp"

# ---- Helpers of a scenario (they run in the scenario's subshell; those
# of lib.sh too: now_ms, secs, say, fail, alive, coordinator_gone,
# wait_for, logged, solve_again) ----

# rand LO HI prints a random integer in [LO, HI].
rand() { echo $(($1 + RANDOM % ($2 - $1 + 1))); }

# pause_ms MS sleeps MS milliseconds.
pause_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

# reap PID waits for a process that has ended (or was killed) and sets rc
# to its exit status. (Not in a command substitution: a subshell cannot
# wait for its parent's children.)
reap() {
	rc=0
	wait "$1" 2>/dev/null || rc=$?
}

# jsz FILTER applies the jq FILTER to the server's JetStream report; it
# fails while the server is down.
jsz() {
	local json
	json=$(curl -sf --max-time 2 "http://127.0.0.1:$mport/jsz?consumers=true") || return 1
	jq -r "$1" <<<"$json"
}

# results_in prints the results the workers have published so far (the
# last sequence of the result stream: it only grows, whatever the
# coordinator does with the tasks), or fails while the server is down.
results_in() {
	local n
	n=$(jsz '[.account_details[]?.stream_detail[]? | select(.name == "C4BOOK_RESULTS") | .state.last_seq] | first // 0') || return 1
	echo "$n"
}

# done_of prints "R of T tasks done" for the story (R: results in).
done_of() { echo "$(results_in || echo "?") of $total_tasks tasks done"; }

# redeliveries prints the deliveries of tasks beyond the first of each:
# the deliveries of the task lanes' consumers together minus the tasks
# the stream has taken (once every task has been delivered, each at
# least once; before, a figure too low).
redeliveries() {
	jsz '[.account_details[]?.stream_detail[]? | select(.name == "C4BOOK_TASKS") | ([.consumer_detail[]? | select(.name | startswith("c4book-lane-")) | .delivered.consumer_seq] | add // 0) - (.state.last_seq // 0) | if . < 0 then 0 else . end] | first // 0'
}

# connections prints the clients connected to the server.
connections() {
	curl -sf --max-time 2 "http://127.0.0.1:$mport/connz" | jq -r .num_connections
}

# start_nats starts nats-server (again) on the scenario's port and store.
start_nats() {
	nats_starts=$((nats_starts + 1))
	start_nats_server "$nats_server" "$sdir/nats.conf" "$sdir/nats-server.$nats_starts.log" ||
		fail "nats-server did not start (log $sdir/nats-server.$nats_starts.log)"
}

# start_coordinator starts a run of the coordinator: coord_pid, its
# output in coordinator.RUN.out and its log in coordinator.RUN.log.
start_coordinator() {
	runs=$((runs + 1))
	"${coord_cmd[@]}" >"$sdir/coordinator.$runs.out" 2>"$sdir/coordinator.$runs.log" &
	coord_pid=$!
	coord_log=$sdir/coordinator.$runs.log
}

# start_worker I starts worker I (again), as worker-I.GEN.
start_worker() {
	local i=$1
	worker_gen[i]=$((${worker_gen[i]:-0} + 1))
	local id=worker-$i.${worker_gen[i]}
	"$c4book" worker --concurrency 1 --id "$id" >"$sdir/$id.log" 2>&1 &
	worker_pid[i]=$!
}

# progress_reached N: the workers have sent N results, or the coordinator
# ended.
progress_reached() {
	local n
	coordinator_gone && return 0
	n=$(results_in) || return 1
	[ "$n" -ge "$1" ]
}

# wait_progress N waits until the workers have sent N results (or the job
# ended), within the scenario's time.
wait_progress() { wait_for "$(remaining)" "$1 results" progress_reached "$1"; }

# remaining prints the seconds left of the scenario's --timeout.
remaining() {
	local r=$(((deadline - $(now_ms)) / 1000))
	echo $((r > 1 ? r : 1))
}

# threshold I F prints the results after which fault I of F is injected:
# the faults are spread evenly over the job.
threshold() { echo $((total_tasks * $1 / ($2 + 1))); }

# wait_published waits for the current coordinator run to publish its
# tasks, and sets total_tasks on the first run.
wait_published() {
	wait_for 120 "the coordinator to publish its tasks (log $coord_log)" logged_or_gone "tasks published"
	coordinator_gone && return 0
	if [ -z "$total_tasks" ]; then
		total_tasks=$(sed -n 's/.*msg="tasks published".* tasks=\([0-9]*\).*/\1/p' "$coord_log" | head -1)
		say "coordinator published $total_tasks tasks"
	fi
}

# logged_or_gone PATTERN: the coordinator logged PATTERN, or ended.
logged_or_gone() { logged "$coord_log" "$1" || coordinator_gone; }

# finish_job waits for the coordinator's run to end, which must be with
# status 0 and a complete job, and sets job_ms.
finish_job() {
	wait_for "$(remaining)" "the job to complete (coordinator log $coord_log)" coordinator_gone
	local rc
	reap "$coord_pid"
	job_ms=$(($(now_ms) - t0))
	[ "$rc" -eq 0 ] || fail "the coordinator (run $runs) exited with status $rc: see $coord_log"
	grep -Eq "^Job .* (complete|is already complete)" "$sdir/coordinator.$runs.out" ||
		fail "the coordinator's run $runs did not report the job complete: see $sdir/coordinator.$runs.out"
	say "job complete after $runs coordinator run(s), $(secs "$job_ms")s"
}

# stop_workers interrupts the workers (they leave with a "worker stopped"
# line giving the positions they solved) and waits for them.
stop_workers() {
	local i
	for i in "${!worker_pid[@]}"; do
		kill -CONT "${worker_pid[i]}" 2>/dev/null || true
		kill -INT "${worker_pid[i]}" 2>/dev/null || true
	done
	for i in "${!worker_pid[@]}"; do
		for _ in $(seq 100); do
			alive "${worker_pid[i]}" || break
			sleep 0.1
		done
		kill -KILL "${worker_pid[i]}" 2>/dev/null || true
		reap "${worker_pid[i]}"
	done
	worker_pid=()
}

# solved_by_workers prints the positions the workers said they solved when
# they stopped, over all worker logs of the scenario.
solved_by_workers() {
	cat "$sdir"/worker-*.log | sed -n 's/.*msg="worker stopped".* positions=\([0-9]*\).*/\1/p' | awk '{s += $1} END {print s + 0}'
}

# check_book checks the finished job: the same command again finds nothing
# to do; book verify passes; the book holds the job's positions, and a
# sample of them (or all) gets the same scores from c4book solve.
check_book() {
	local out=$sdir/rerun.out rc=0 positions entries lines
	"${coord_cmd[@]}" >"$out" 2>"$sdir/rerun.log" || rc=$?
	[ "$rc" -eq 0 ] && grep -q "already complete" "$out" ||
		fail "running the coordinator again on the finished job: status $rc, not \"already complete\" (see $out, $sdir/rerun.log)"
	positions=$(sed -n 's/.*(\([0-9,]*\) positions).*/\1/p' "$out" | tr -d ,)

	rc=0
	"$c4book" book verify --book "$book" --sample "$sample" --seed "$seed" >"$sdir/verify.txt" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] && grep -q "^0 disagreements" "$sdir/verify.txt" ||
		fail "book verify --sample $sample --seed $seed: status $rc (see $sdir/verify.txt)"
	entries=$(sed -n 's/^\([0-9,]*\) entries read.*/\1/p' "$sdir/verify.txt")
	say "book verify --sample $sample: $entries entries, $(sed -n 's/^\([0-9,]*\) checked against.*/\1/p' "$sdir/verify.txt") checked against their children, $sample re-solved, 0 disagreements"

	"$c4book" book export --book "$book" --format text --out "$sdir/export.txt" 2>/dev/null ||
		fail "book export failed"
	lines=$(wc -l <"$sdir/export.txt")
	[ "$lines" -eq "$positions" ] || fail "the book holds $lines positions, the job has $positions"
	solve_again "$check" "$seed" "${board[@]}"
	[ "$mismatches" -eq 0 ] || fail "$mismatches of $(wc -l <"$sdir/check.txt") positions of the book differ from c4book solve (see $sdir/mismatches.txt: moves book-score moves solve-score)"
	say "the book holds the job's $positions positions; $(wc -l <"$sdir/check.txt") of them re-solved by c4book solve: all match"
}

# scenario NAME INDEX runs the scenario NAME (the INDEX-th of all, which
# seeds its random choices) in a subshell of its own, with a fresh server,
# book and logs in $tmp/NAME. It exits with the scenario's status.
scenario() {
	name=$1 sdir=$tmp/$1
	nats_pid="" coord_pid="" worker_pid=() mport=""
	trap 'scenario_exit' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	mkdir -p "$sdir"
	RANDOM=$((seed + 1000 * $2))
	book=$sdir/book.db
	port=$(free_port) mport=$(free_port)
	while [ "$mport" = "$port" ]; do mport=$(free_port); done
	export C4BOOK_NATS_TOKEN
	C4BOOK_NATS_TOKEN=$(new_token)
	write_nats_conf "$sdir/nats.conf" "$port" "$sdir/store" "$C4BOOK_NATS_TOKEN" "$mport"
	export C4BOOK_NATS_URL=nats://127.0.0.1:$port
	export C4BOOK_QUEUE_ACK_WAIT=$ack_wait C4BOOK_QUEUE_MAX_DELIVER=$max_deliver
	# No cross-checks (scripts/harness/liar.sh runs those): the positions
	# solved twice then measure the work redone after the faults alone.
	export C4BOOK_QUEUE_CROSS_CHECK=0
	coord_cmd=("$c4book" coordinator "${board[@]}" --depth "$depth" --root "$root" --book "$book" --task-size "$task_size")
	{
		echo "C4BOOK_NATS_URL=$C4BOOK_NATS_URL C4BOOK_NATS_TOKEN=<in nats.conf> C4BOOK_QUEUE_ACK_WAIT=$ack_wait C4BOOK_QUEUE_MAX_DELIVER=$max_deliver C4BOOK_QUEUE_CROSS_CHECK=0"
		echo "${coord_cmd[*]}"
		echo "$c4book worker --concurrency 1 --id worker-I.GEN"
	} >"$sdir/commands.txt"

	nats_starts=0 runs=0 coord_log="" total_tasks="" job_ms=0 worker_gen=()
	t0=$(now_ms)
	deadline=$((t0 + timeout * 1000))
	start_nats
	# The workers first, as on a cluster whose machines wait for jobs:
	# they connect and wait for the coordinator to set up the queue.
	local i
	for i in $(seq "$workers"); do
		start_worker "$i"
	done
	for i in $(seq "$workers"); do
		wait_for 30 "worker-$i to connect (log $sdir/worker-$i.1.log)" logged "$sdir/worker-$i.1.log" "^Connected to"
	done
	start_coordinator
	"scenario_${name//-/_}"
}

# scenario_exit stops the processes of a scenario, first saving the
# server's view of the queue when the scenario failed.
scenario_exit() {
	local status=$? pid
	if [ "$status" -ne 0 ]; then
		grep -q "^FAIL $name:" "$tmp/results.txt" 2>/dev/null || echo "FAIL $name: the script stopped with status $status" | tee -a "$tmp/results.txt"
		[ -z "$mport" ] || curl -sf --max-time 2 "http://127.0.0.1:$mport/jsz?consumers=true" >"$sdir/jsz-at-exit.json" 2>/dev/null || true
	fi
	for pid in "${worker_pid[@]}" $coord_pid $nats_pid; do
		kill -CONT "$pid" 2>/dev/null || true
		kill -KILL "$pid" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	exit "$status"
}

# stop_nats stops the server at the end of a scenario.
stop_nats() {
	kill -TERM "$nats_pid" 2>/dev/null || true
	reap "$nats_pid"
}

# ---- The scenarios ----

scenario_nats_restart() {
	local f i n left down back back_max=0 down_list="" summary
	f=$(default_faults nats-restart)
	echo "== nats-restart: nats-server killed (SIGKILL) and started again on the same store and port, $f times"
	: >"$sdir/problems.txt"
	for i in $(seq "$f"); do
		if [ "$i" -eq 1 ] && [ "$f" -ge 2 ]; then
			# The first restart lands while the coordinator plans: it
			# then sets up the queue with the server down, while the
			# workers wait for the queue. The server stays down more
			# than 5 seconds (the NATS client's default request timeout).
			poll_s=0.01 wait_for 120 "the coordinator to plan (log $coord_log)" logged_or_gone "msg=planning"
			left="the coordinator planning, the workers waiting for the queue"
			down=$((6000 + $(rand 0 1000)))
		else
			wait_published
			wait_progress "$(threshold $((i - 1)) "$f")"
			pause_ms "$(rand 0 500)"
			left="solving, $(done_of)"
			# The last time, the server stays down past queue.ack-wait:
			# the workers cannot report progress, and their tasks time
			# out.
			down=$(rand 500 2500)
			[ "$i" -lt "$f" ] || down=$((2 * ack_wait_s * 1000 + $(rand 0 1000)))
		fi
		coordinator_gone && fail "the job ended before restart $i: use a longer job (--depth)"
		kill -KILL "$nats_pid"
		reap "$nats_pid"
		pause_ms "$down"
		start_nats
		n=$(now_ms)
		wait_for 60 "the $((workers + 1)) clients to reconnect after restart $i" clients_back_or_gone
		back=$(($(now_ms) - n))
		back_max=$((back > back_max ? back : back_max))
		down_list+="${down_list:+, }$(secs "$down")s"
		say "restart $i: nats-server killed ($left), down $(secs "$down")s, started again; $(connections || echo "?") clients connected $(secs "$back")s later"
		restart_the_dead "restart $i"
	done
	finish_job
	summary=$sdir/coordinator.$runs.out
	check_book
	stop_workers
	stop_nats
	if [ -s "$sdir/problems.txt" ]; then
		fail "the job completed and the book is right, but $(wc -l <"$sdir/problems.txt") processes exited on restarts of nats-server: $(awk -F '\t' '{who[$3] = who[$3] (who[$3] ? ", " : "") $1 " (" $2 ", status " $4 ")"} END {for (m in who) printf "%s%s: %s", n++ ? "; " : "", who[m], m}' "$sdir/problems.txt")"
	fi
	echo "PASS nats-restart: $f SIGKILLs and restarts of nats-server (down ${down_list}; all clients back within $(secs "$back_max")s of each restart); job $(secs "$job_ms")s, $(solved_line "$summary"); book verified" | tee -a "$tmp/results.txt"
}

# clients_back_or_gone: the coordinator and every worker are connected, or
# one of them ended.
clients_back_or_gone() {
	local i
	clients_back && return 0
	coordinator_gone && return 0
	for i in "${!worker_pid[@]}"; do
		alive "${worker_pid[i]}" || return 0
	done
	return 1
}

# restart_the_dead WHEN records each process that ended (WHEN: "restart
# 2") in problems.txt (who, when, its last log line, its exit status,
# separated by tabs) and starts it again, so that the scenario goes on;
# then it waits for every client.
restart_the_dead() {
	local i rc id
	if coordinator_gone; then
		reap "$coord_pid"
		problem "coordinator run $runs" "$1" "$(tail -1 "$coord_log")" "$rc"
		start_coordinator
	fi
	for i in "${!worker_pid[@]}"; do
		alive "${worker_pid[i]}" && continue
		reap "${worker_pid[i]}"
		id=worker-$i.${worker_gen[i]}
		problem "$id" "$1" "$(tail -1 "$sdir/$id.log")" "$rc"
		start_worker "$i"
	done
	wait_for 60 "the $((workers + 1)) clients to connect" clients_back
}

# problem WHO WHEN MESSAGE STATUS records and prints a process that ended.
problem() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "${3#c4book: }" "$4" >>"$sdir/problems.txt"
	say "PROBLEM: $1 exited with status $4 after $2 of nats-server, and was started again: $3"
}

# clients_back: the coordinator and every worker are connected.
clients_back() {
	local n
	n=$(connections) || return 1
	[ "$n" -ge $((workers + 1)) ]
}

# solved_line SUMMARY prints what the summary says of the positions.
solved_line() {
	if grep -q "is already complete" "$1"; then
		echo "nothing left to do (the last kill came after the job was marked done)"
		return
	fi
	awk '/^  positions +[0-9]/ {p = $2} /solved by workers/ {s = $4} /results rejected/ {r = $3}
		END {printf "%s positions, %s solved by workers%s", p, s, r ? ", " r " results rejected" : ""}' "$1"
}

# busy PID: the process used CPU in the last 0.3 s (a worker with one
# thread: it is solving a task).
busy() {
	local a b
	a=$(cpu_ticks "$1")
	sleep 0.3
	b=$(cpu_ticks "$1")
	[ $((b - a)) -ge 3 ]
}

# redelivered_since R: more tasks were delivered again than R.
redelivered_since() {
	local r
	r=$(redeliveries) || return 1
	[ "$r" -gt "$1" ]
}

scenario_worker_pause() {
	local f i w pid r0 t_stop waited hold attempt ok list="" late
	f=$(default_faults worker-pause)
	echo "== worker-pause: a worker stopped (SIGSTOP) while solving, past queue.ack-wait ($ack_wait) until its task is delivered to another, then resumed (SIGCONT), $f times"
	wait_published
	for i in $(seq "$f"); do
		wait_progress "$(threshold "$i" "$f")"
		w=$(((i - 1) % workers + 1))
		pid=${worker_pid[w]}
		ok=0
		for attempt in 1 2 3; do
			coordinator_gone && fail "the job ended before pause $i: use a longer job (--depth)"
			wait_for 60 "worker-$w to be solving" busy "$pid"
			r0=$(redeliveries)
			kill -STOP "$pid"
			t_stop=$(now_ms)
			say "pause $i: worker-$w (pid $pid) stopped while solving ($(done_of))"
			# The task comes back after queue.ack-wait (longer for a
			# task already delivered before: the wait doubles, up to 8
			# times).
			local limit=$((t_stop + (8 * ack_wait_s + 10) * 1000))
			until redelivered_since "$r0"; do
				[ "$(now_ms)" -lt "$limit" ] && ! coordinator_gone || break
				sleep 0.1
			done
			waited=$(($(now_ms) - t_stop))
			if redelivered_since "$r0"; then
				ok=1
				break
			fi
			kill -CONT "$pid"
			coordinator_gone && fail "the job completed while worker-$w was stopped, and no task was delivered again: its task was not redelivered? (pause $i)"
			say "pause $i: no task delivered again within $(secs "$waited")s: worker-$w held none (stopped between two tasks); trying again"
		done
		[ "$ok" -eq 1 ] || fail "pause $i: no redelivery seen in 3 attempts"
		# Resume soon the first time (the late result races with the
		# other worker's), one AckWait later the next (it comes second);
		# the pause lasts at least AckWait.
		hold=$((i % 2 == 1 ? 0 : ack_wait_s * 1000))
		hold=$((waited + hold < ack_wait_s * 1000 + 200 ? ack_wait_s * 1000 + 200 - waited : hold))
		pause_ms "$hold"
		kill -CONT "$pid"
		say "pause $i: a task was delivered again $(secs "$waited")s after the stop (AckWait after the worker's last progress report); worker-$w resumed $(secs $((waited + hold)))s after the stop"
		list+="${list:+, }$(secs $((waited + hold)))s"
	done
	finish_job
	local summary=$sdir/coordinator.$runs.out
	late=$(cat "$sdir"/worker-*.log | { grep -E 'level=(WARN|ERROR)' || true; } | tee "$sdir/worker-warnings.txt" | wc -l)
	sed 's/^/    worker: /' "$sdir/worker-warnings.txt" | head -5
	r0=$(redeliveries)
	check_book
	stop_workers
	stop_nats
	echo "PASS worker-pause: $f worker(s) stopped (SIGSTOP) for $list, past AckWait $ack_wait, each time a task delivered again to another worker, then resumed (SIGCONT); $r0 redeliveries in all; $late warnings of workers; job $(secs "$job_ms")s, $(solved_line "$summary"); book verified" | tee -a "$tmp/results.txt"
}

scenario_worker_kill() {
	local f i w left delay
	f=$(default_faults worker-kill)
	echo "== worker-kill: a random worker killed (SIGKILL) at a random moment and started again, $f times"
	wait_published
	for i in $(seq "$f"); do
		wait_progress "$(threshold "$i" "$f")"
		coordinator_gone && fail "the job ended before kill $i: use a longer job (--depth)"
		pause_ms "$(rand 0 1000)"
		w=$(rand 1 "$workers")
		left=$(done_of)
		kill -KILL "${worker_pid[w]}"
		reap "${worker_pid[w]}"
		delay=$(rand 0 1500)
		pause_ms "$delay"
		start_worker "$w"
		say "kill $i: worker-$w.$((worker_gen[w] - 1)) killed ($left); worker-$w.${worker_gen[w]} started $(secs "$delay")s later"
	done
	finish_job
	local summary=$sdir/coordinator.$runs.out r
	r=$(redeliveries)
	check_book
	stop_workers
	stop_nats
	echo "PASS worker-kill: $f workers killed (SIGKILL) and $f started again; $r task redeliveries; job $(secs "$job_ms")s, $(solved_line "$summary"); book verified" | tee -a "$tmp/results.txt"
}

scenario_coordinator_kill() {
	local f i kills=0 left to_solve solved extra bound phases=""
	f=$(default_faults coordinator-kill)
	echo "== coordinator-kill: the coordinator killed (SIGKILL) while it plans, solves and derives, and started again with the same command, $f times"
	for i in $(seq "$f"); do
		if [ "$i" -eq 1 ]; then
			# The first kill lands while the coordinator plans, or
			# while it publishes the first tasks.
			wait_for 120 "the coordinator to start planning (log $coord_log)" logged_or_gone "msg=planning"
			coordinator_gone && fail "the coordinator ended before kill 1: see $coord_log"
			pause_ms "$(rand 0 300)"
		elif [ "$i" -lt "$f" ]; then
			# The kills between land while the workers solve.
			wait_published
			coordinator_gone && break
			wait_progress "$(threshold $((i - 1)) $((f - 1)))"
			pause_ms "$(rand 0 1000)"
		else
			# The last kill lands while the shallower scores are
			# derived.
			wait_for "$(remaining)" "the coordinator's run $runs to derive (log $coord_log)" logged_or_gone "msg=deriving"
			pause_ms "$(rand 0 200)"
		fi
		coordinator_gone && break
		kill -KILL "$coord_pid"
		reap "$coord_pid"
		kills=$((kills + 1))
		local phase=planning
		logged "$coord_log" "msg=planned" && phase=publishing
		logged "$coord_log" "msg=resuming" && phase="resuming"
		logged "$coord_log" "tasks published" && phase=solving
		logged "$coord_log" "msg=deriving" && phase=deriving
		phases+="${phases:+, }$phase"
		local delay
		delay=$(rand 0 1000)
		say "kill $kills: coordinator run $runs killed while $phase ($(done_of)); started again $(secs "$delay")s later"
		pause_ms "$delay"
		start_coordinator
	done
	[ "$kills" -ge 1 ] || fail "the job ended before the coordinator could be killed: use a longer job (--depth)"
	finish_job
	local summary=$sdir/coordinator.$runs.out
	for i in $(seq "$runs"); do cat "$sdir/coordinator.$i.log"; done | sed -n 's/.*msg=resuming.* run=\([0-9]*\) state=\([a-z]*\).*/run \1 in \2/p' | paste -sd, - | sed 's/^/  resumed: /; s/,/, /g'
	to_solve=$(sed -n 's/.*msg=planned.* to_solve=\([0-9]*\).*/\1/p' "$sdir"/coordinator.*.log | tail -1)
	check_book
	stop_workers
	stop_nats
	solved=$(solved_by_workers)
	extra=$((solved - to_solve))
	bound=$((kills * workers * task_size))
	say "the workers solved $solved positions in all, for $to_solve to solve: $extra solved twice (at most $bound allowed: $kills kills x $workers tasks in flight x $task_size)"
	[ "$solved" -ge "$to_solve" ] || fail "the workers solved $solved positions in all, fewer than the $to_solve of the job: the book cannot be complete"
	[ "$extra" -le "$bound" ] || fail "the workers solved $solved positions for $to_solve to solve: $extra more than the job, beyond the $bound that tasks in flight explain (kills x workers x task size): stored work was redone"
	echo "PASS coordinator-kill: $kills SIGKILLs of the coordinator ($phases), $runs runs; the workers solved $solved positions for $to_solve to solve ($extra twice); job $(secs "$job_ms")s, last run: $(solved_line "$summary"); book verified" | tee -a "$tmp/results.txt"
}

# ---- Main ----

failed=0
start_all=$(now_ms)
for s in "${scenarios[@]}"; do
	i=0
	for a in "${!all_scenarios[@]}"; do
		[ "${all_scenarios[a]}" != "$s" ] || i=$a
	done
	set +e
	(
		set -e
		scenario "$s" "$i"
	)
	[ $? -eq 0 ] || failed=$((failed + 1))
	set -e
done
echo
echo "Results ($(secs $(($(now_ms) - start_all)))s in all, seed $seed):"
sed 's/^/  /' "$tmp/results.txt"
if [ "$failed" -gt 0 ]; then
	echo "$failed of ${#scenarios[@]} scenarios failed" >&2
	exit 1
fi
