#!/usr/bin/env bash
# keyed-cluster.sh: run a generation job the way a cluster of spare
# machines runs it, on this machine: "c4book coordinator --listen" (its
# embedded NATS server on the loopback interface) and K "c4book worker"
# processes, each with a key of its own (c4book worker add), talking over
# TCP. Each process runs under GNU time; the script records the wall time,
# the CPU and peak memory of every process (over its restarts), and the
# disk of the plan, the NATS store and the book every minute, and prints
# them at the end. On purpose, once each if asked: kill -9 a worker and
# start it again, kill -9 the coordinator and start it again.
#
# The run directory keeps the book, the keys and the logs: run the same
# command again (after Ctrl-C, a crash, a reboot) and the job resumes from
# its book; the figures of each run are in run.log. Stop it with Ctrl-C, or,
# run in the background (setsid nohup ... &), with kill -TERM: a background
# job of a script ignores SIGINT. Either way every process gets Ctrl-C.
#
# Usage: scripts/harness/keyed-cluster.sh [options] DIR [-- coordinator flags...]
#
#   -d, --depth D          depth of the book (default 8)
#   -r, --root MOVES       root position (default: the empty board)
#   -k, --workers K        worker processes (default 2)
#   -c, --concurrency N    solving threads of each worker (default 1)
#       --tt-size SIZE     table of each worker (default worker.tt-size)
#       --nice N           run the workers at niceness N (nice -n N, and
#                          their session groups too where the kernel
#                          groups by session: sched_autogroup), as
#                          on a machine whose owner's work goes first
#       --kill-worker S    kill -9 worker 1 S seconds after the start, and
#                          start it again 10 seconds later
#       --kill-coordinator S   kill -9 the coordinator S seconds after the
#                          start, and start it again 10 seconds later
#
# Flags after -- go to the coordinator (--task-size 32, --tt-size of its
# referee, ...). c4book is built from this repository into DIR, unless the
# environment variable C4BOOK names a binary. GNU time (/usr/bin/time) is
# needed.
#
# Example: scripts/harness/keyed-cluster.sh --depth 12 --root 3344 /tmp/run3344
set -euo pipefail

depth=8 root="" workers=2 concurrency=1 tt_size="" kill_worker="" kill_coordinator="" worker_nice=""
prog=keyed-cluster.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

dir="" extra=()
while [ $# -gt 0 ]; do
	case $1 in
	-d | --depth) depth=${2:?$1 needs a value}; shift 2 ;;
	-r | --root) root=${2?$1 needs a value}; shift 2 ;;
	-k | --workers) workers=${2:?$1 needs a value}; shift 2 ;;
	-c | --concurrency) concurrency=${2:?$1 needs a value}; shift 2 ;;
	--tt-size) tt_size=${2:?$1 needs a value}; shift 2 ;;
	--nice) worker_nice=${2:?$1 needs a value}; shift 2 ;;
	--kill-worker) kill_worker=${2:?$1 needs a value}; shift 2 ;;
	--kill-coordinator) kill_coordinator=${2:?$1 needs a value}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	-*) usage >&2; die "unknown option: $1" ;;
	*) [ -z "$dir" ] || die "one run directory, not $dir and $1"; dir=$1; shift ;;
	esac
done
[ -n "$dir" ] || { usage >&2; die "no run directory"; }
[[ $workers =~ ^[1-9][0-9]*$ ]] || die "--workers $workers: must be 1 or more"
[[ $concurrency =~ ^[1-9][0-9]*$ ]] || die "--concurrency $concurrency: must be 1 or more"
[ -z "$worker_nice" ] || [[ $worker_nice =~ ^-?[0-9]+$ ]] || die "--nice $worker_nice: must be a niceness, -20 to 19"
for s in "$kill_worker" "$kill_coordinator"; do
	[ -z "$s" ] || [[ $s =~ ^[0-9]+$ ]] || die "a kill time must be seconds, not $s"
done
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is needed: apt-get install time"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$dir
book=$dir/book.db
log=$dir/run.log
c4book=${C4BOOK:-}
if [ -z "$c4book" ]; then
	echo "Building c4book into $dir ..." >&2
	(cd "$repo" && go build -o "$dir/c4book" ./cmd/c4book) || die "build failed"
	c4book=$dir/c4book
fi
# say writes a line, dated, to run.log and standard error (it replaces
# lib.sh's say, a scenario's story).
say() { echo "$(date -u +%FT%TZ) $*" | tee -a "$log" >&2; }

# The workers' keys: made once, kept in DIR.
for i in $(seq "$workers"); do
	if [ ! -f "$dir/w$i.nkey" ]; then
		"$c4book" worker add "w$i" --book "$book" --out "$dir/w$i.nkey" >/dev/null
	fi
done

port=$(free_port)
url=nats://127.0.0.1:$port
run=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$dir/logs"
coordinator_args=(coordinator --depth "$depth" --root "$root" --book "$book" --listen "127.0.0.1:$port" "${extra[@]}")
worker_args=(worker --nats "$url" --concurrency "$concurrency")
[ -z "$tt_size" ] || worker_args+=(--tt-size "$tt_size")

# timed NAME ARGS... starts c4book under GNU time in the background, its
# report in logs/NAME.RUN.N.time, and sets started to the pid of time. A
# worker (NAME w1, w2, ...) runs at the niceness of --nice, if given (setsid
# and nice execute c4book in their place: c4book is still time's child).
# Where the kernel groups processes by session (sched_autogroup), niceness
# orders the processes of a session only, and each session gets an equal
# share of the CPUs: a worker then runs in a session of its own, and that
# session's group gets the niceness too, so that it yields to every other.
started=""
timed() {
	local name=$1 n prog=("$c4book") c
	shift
	if [ -n "$worker_nice" ] && [[ $name == w* ]]; then
		prog=(setsid nice -n "$worker_nice" "$c4book")
	fi
	n=$(find "$dir/logs" -name "$name.$run.*.time" | wc -l)
	: >"$dir/logs/$name.$run.$n.time"
	/usr/bin/time -v -o "$dir/logs/$name.$run.$n.time" "${prog[@]}" "$@" >"$dir/logs/$name.$run.$n.out" 2>"$dir/logs/$name.$run.$n.err" &
	started=$!
	if [ -n "$worker_nice" ] && [[ $name == w* ]] && [ -f /proc/self/autogroup ]; then
		# Once c4book is in its own session (its group no longer ours).
		for _ in $(seq 100); do
			c=$(child "$started") && [ -n "$c" ] &&
				[ "$(cut -d' ' -f1 "/proc/$c/autogroup" 2>/dev/null)" != "$(cut -d' ' -f1 /proc/$$/autogroup)" ] && break
			c=""
			sleep 0.05
		done
		if [ -z "$c" ] || ! echo "$worker_nice" >"/proc/$c/autogroup" 2>/dev/null; then
			echo "keyed-cluster.sh: $name: could not set its session group's niceness (/proc/PID/autogroup): it may take an equal share of the CPUs" >&2
		fi
	fi
}

# child prints the pid of c4book under the time process $1.
child() { pgrep -P "$1" | head -1; }

pids=()
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do
		c=$(child "$pid") && kill -INT "$c" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "run $run: c4book $("$c4book" version | head -1); depth $depth, root '${root}', $workers workers of $concurrency threads${tt_size:+, tables of $tt_size}${worker_nice:+, niceness $worker_nice}; $url"
start=$(date +%s)
timed coordinator "${coordinator_args[@]}"
coord=$started
pids=("$coord")
sleep 2
declare -a wpids
for i in $(seq "$workers"); do
	timed "w$i" "${worker_args[@]}" --nkey "$dir/w$i.nkey"
	wpids[i]=$started
	pids+=("$started")
done

disk() {
	local plan nats data
	plan=$(du -sb "$book/plans" 2>/dev/null | cut -f1)
	nats=$(du -sb "$book/nats" 2>/dev/null | cut -f1)
	data=$(du -sb --exclude=plans --exclude=nats "$book" 2>/dev/null | cut -f1)
	echo "plan=${plan:-0} nats=${nats:-0} book=${data:-0}"
}

killed_worker="" killed_coordinator=""
while :; do
	now=$(($(date +%s) - start))
	if [ -n "$kill_worker" ] && [ -z "$killed_worker" ] && [ "$now" -ge "$kill_worker" ]; then
		c=$(child "${wpids[1]}") && kill -9 "$c"
		say "killed worker w1 (kill -9) at ${now}s"
		killed_worker=1
		sleep 10
		timed w1 "${worker_args[@]}" --nkey "$dir/w1.nkey"
		wpids[1]=$started
		pids+=("$started")
		say "started worker w1 again"
	fi
	if [ -n "$kill_coordinator" ] && [ -z "$killed_coordinator" ] && [ "$now" -ge "$kill_coordinator" ]; then
		c=$(child "$coord") && kill -9 "$c"
		say "killed the coordinator (kill -9) at ${now}s"
		killed_coordinator=1
		wait "$coord" 2>/dev/null || true
		sleep 10
		timed coordinator "${coordinator_args[@]}"
		coord=$started
		pids+=("$coord")
		say "started the coordinator again"
	fi
	if ! kill -0 "$coord" 2>/dev/null; then
		break
	fi
	if [ $((now - ${said:-0})) -ge 60 ] || [ -z "${said:-}" ]; then
		said=$now
		say "at ${now}s: $(disk); $(grep -a 'solving\|deriving\|planning' "$(ls -t "$dir"/logs/coordinator."$run".*.err | head -1)" 2>/dev/null | tail -1 | cut -c1-160)"
	fi
	sleep 5 &
	wait $! || true
done
status=0
wait "$coord" || status=$?
wall=$(($(date +%s) - start))
say "coordinator exited with status $status after ${wall}s"
# The workers have nothing more to do: stop them (Ctrl-C).
for i in $(seq "$workers"); do
	c=$(child "${wpids[i]}") && kill -INT "$c" 2>/dev/null || true
done
wait 2>/dev/null || true

# The figures of this run, from GNU time's reports.
report() {
	local role=$1 f cpu=0 mem=0 m
	for f in "$dir/logs/$role.$run".*.time; do
		[ -f "$f" ] || continue
		cpu=$((cpu + $(time_cpu "$f")))
		m=$(time_mem "$f")
		[ "${m:-0}" -le "$mem" ] || mem=$m
	done
	echo "$role: CPU ${cpu}s, peak ${mem} MiB"
}
say "run $run: wall ${wall}s; $(disk)"
for role in coordinator $(seq -f 'w%g' "$workers"); do
	say "  $(report "$role")"
done
out=$(ls -t "$dir"/logs/coordinator."$run".*.out | head -1)
sed -n '/^Job /,$p' "$out" | tee -a "$log"
exit "$status"
