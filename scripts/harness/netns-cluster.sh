#!/usr/bin/env bash
# netns-cluster.sh: a generation job on hosts of their own, on this
# machine: the coordinator ("c4book coordinator --listen") and K keyed
# workers each in a network namespace of its own, with an address of its
# own on a bridge (veth pairs), each worker's link to the coordinator
# through a Toxiproxy proxy of its own (latency, jitter, bandwidth), and
# link faults made on purpose: a link set down (packets dropped, no RST:
# the cut of a cable, a laptop's sleep) for a while, a worker stopped
# (SIGSTOP) for a while, a worker held to a share of a CPU (a cgroup), a
# worker that leaves and joins again and again (churn). It prints the
# job's wall time, each process's CPU, the coordinator's summary (tasks
# solved twice among it), how soon each worker took a task again after
# its link came back or it woke, and checks the book against a
# one-process build of the same job (their text exports, byte for byte),
# unless --no-check. Needs root (ip netns), GNU time and Go (Toxiproxy v2.5.0 is
# built into DIR with go install).
#
# Usage: scripts/harness/netns-cluster.sh [options] DIR [-- coordinator flags...]
#
#   -d, --depth D        depth of the book (default 8)
#   -r, --root MOVES     root position (default: the empty board)
#   -k, --workers K      worker hosts (default 2), one thread each
#       --width W, --height H   the board (default 7x6)
#       --latency MS     each worker link's latency, each way, through its
#                        proxy (0: none; the round trip is twice it)
#       --jitter MS      its jitter (default a tenth of the latency)
#       --rate KBPS      each worker link's bandwidth, each way, in KB/s
#       --cut W:AT:FOR   set worker W's link down AT seconds after the
#                        start, for FOR seconds (repeatable); W 0 is the
#                        coordinator's link
#       --stop W:AT:FOR  SIGSTOP worker W at AT seconds for FOR seconds
#                        (repeatable)
#       --slow W:PCT     hold worker W to PCT% of one CPU (a cgroup's CPU
#                        quota) for the whole job
#       --churn W:EVERY  worker W leaves EVERY seconds after it joined and
#                        joins again EVERY seconds later, until the job
#                        ends; its leaves alternate SIGINT (a clean leave:
#                        tasks handed back) and SIGKILL (a crash)
#       --reference BOOK check the book against BOOK (a complete book of
#                        this board at least as deep: the digests of the
#                        job's root and depth in both, equal) instead of a
#                        one-process build
#       --no-check       do not build the job in one process to compare
#       --keep           leave the namespaces and bridge (to look around)
#
# The run directory keeps the books, keys and logs. Example:
#   sudo scripts/harness/netns-cluster.sh --depth 10 --width 5 --height 4 --latency 25 /tmp/ns1
set -euo pipefail

depth=8 root="" workers=2 width=7 height=6 latency=0 jitter="" rate=0 check=1 keep=0 reference=""
cuts=() stops=() slows=() churns=()
prog=netns-cluster.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

dir="" extra=()
while [ $# -gt 0 ]; do
	case $1 in
	-d | --depth) depth=${2:?$1 needs a value}; shift 2 ;;
	-r | --root) root=${2?$1 needs a value}; shift 2 ;;
	-k | --workers) workers=${2:?$1 needs a value}; shift 2 ;;
	--width) width=${2:?$1 needs a value}; shift 2 ;;
	--height) height=${2:?$1 needs a value}; shift 2 ;;
	--latency) latency=${2:?$1 needs a value}; shift 2 ;;
	--jitter) jitter=${2:?$1 needs a value}; shift 2 ;;
	--rate) rate=${2:?$1 needs a value}; shift 2 ;;
	--cut) cuts+=("${2:?$1 needs a value}"); shift 2 ;;
	--stop) stops+=("${2:?$1 needs a value}"); shift 2 ;;
	--slow) slows+=("${2:?$1 needs a value}"); shift 2 ;;
	--churn) churns+=("${2:?$1 needs a value}"); shift 2 ;;
	--reference) reference=${2:?$1 needs a value}; shift 2 ;;
	--no-check) check=0; shift ;;
	--keep) keep=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	-*) usage >&2; die "unknown option: $1" ;;
	*) [ -z "$dir" ] || die "one run directory, not $dir and $1"; dir=$1; shift ;;
	esac
done
[ -n "$dir" ] || { usage >&2; die "no run directory"; }
need_numbers depth workers width height latency rate
[ "$workers" -ge 1 ] && [ "$workers" -le 50 ] || die "--workers $workers: 1 to 50"
[ -n "$jitter" ] || jitter=$((latency / 10))
for spec in "${cuts[@]}" "${stops[@]}"; do
	[[ $spec =~ ^[0-9]+:[0-9]+:[0-9]+$ ]] || die "a cut or stop is W:AT:FOR, whole numbers, not $spec"
done
for spec in "${slows[@]}" "${churns[@]}"; do
	[[ $spec =~ ^[0-9]+:[1-9][0-9]*$ ]] || die "a slow or churn is W:N, whole numbers, N at least 1, not $spec"
	[ "${spec%%:*}" -ge 1 ] && [ "${spec%%:*}" -le "$workers" ] || die "$spec: no worker ${spec%%:*} (workers 1 to $workers)"
done
[ "$(id -u)" -eq 0 ] || die "network namespaces need root"
command -v ip >/dev/null || die "ip (iproute2) is needed"
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is needed"
ip netns add c4probe$$ 2>/dev/null && ip netns del c4probe$$ || die "cannot make a network namespace here (ip netns add failed)"

mkdir -p "$dir/logs"
dir=$(cd "$dir" && pwd)
tmp=$dir
book=$dir/book.db
c4book=${C4BOOK:-}
if [ -z "$c4book" ]; then
	(cd "$repo" && go build -o "$dir/c4book" ./cmd/c4book) || die "build failed"
	c4book=$dir/c4book
fi
if [ ! -x "$dir/toxiproxy-server" ]; then
	echo "Building Toxiproxy v2.5.0 into $dir ..." >&2
	(cd "$dir" && GOBIN=$dir/toxibin GOFLAGS= go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0 github.com/Shopify/toxiproxy/v2/cmd/cli@v2.5.0) ||
		die "go install of Toxiproxy failed"
	mv "$dir/toxibin/server" "$dir/toxiproxy-server"
	mv "$dir/toxibin/cli" "$dir/toxiproxy-cli"
fi
board=(--width "$width" --height "$height")
say() { echo "$(date -u +%FT%TZ) $*" | tee -a "$dir/run.log" >&2; }

# The hosts: a bridge in this namespace, 10.77.0.1, and a namespace a host
# (c4h0 the coordinator, 10.77.0.2; c4hW worker W, 10.77.0.(10+W)), each
# joined to the bridge by a veth pair whose end here is c4vW.
net=10.77.0 bridge=c4br
hosts=(0 $(seq "$workers"))
addr() { if [ "$1" -eq 0 ]; then echo "$net.2"; else echo "$net.$((10 + $1))"; fi; }
# A slow worker's cgroup: v1's cpu controller, or v2's where v1 has none.
cgroup_dir() { # cgroup_dir W: the directory of worker W's cgroup
	if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_period_us ]; then
		echo "/sys/fs/cgroup/cpu/c4slow$1"
	else
		echo "/sys/fs/cgroup/c4slow$1"
	fi
}
teardown() {
	for h in "${hosts[@]}"; do ip netns del "c4h$h" 2>/dev/null || true; done
	ip link del "$bridge" 2>/dev/null || true
	for w in $(seq "$workers"); do rmdir "$(cgroup_dir "$w")" 2>/dev/null || true; done
}
teardown
ip link add "$bridge" type bridge
ip addr add "$net.1/24" dev "$bridge"
ip link set "$bridge" up
for h in "${hosts[@]}"; do
	ip netns add "c4h$h"
	ip link add "c4v$h" type veth peer name eth0 netns "c4h$h"
	ip link set "c4v$h" master "$bridge" up
	ip -n "c4h$h" addr add "$(addr "$h")/24" dev eth0
	ip -n "c4h$h" link set eth0 up
	ip -n "c4h$h" link set lo up
done

pids=()
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
	kill -CONT "${pids[@]}" 2>/dev/null || true
	sleep 1
	kill -9 "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	[ "$keep" -eq 1 ] || teardown
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The workers' keys, and the one-process build to compare with.
for w in $(seq "$workers"); do
	[ -f "$dir/w$w.nkey" ] || "$c4book" worker add "w$w" --book "$book" --out "$dir/w$w.nkey" "${board[@]}" >/dev/null
done

# Toxiproxy, here (on the bridge's address): a proxy a worker, to the
# coordinator's server.
"$dir/toxiproxy-server" -host "$net.1" -port 8474 >"$dir/logs/toxiproxy.log" 2>&1 &
pids+=($!)
tox() { "$dir/toxiproxy-cli" -h "http://$net.1:8474" "$@" >>"$dir/logs/toxiproxy-cli.log"; }
for _ in $(seq 50); do tox list 2>/dev/null && break; sleep 0.1; done
nats_url=()
for w in $(seq "$workers"); do
	port=$((5000 + w))
	tox create -l "$net.1:$port" -u "$(addr 0):4222" "w$w"
	if [ "$latency" -gt 0 ]; then
		tox toxic add -t latency -a latency="$latency" -a jitter="$jitter" -d "w$w"
		tox toxic add -t latency -a latency="$latency" -a jitter="$jitter" -u "w$w"
	fi
	if [ "$rate" -gt 0 ]; then
		tox toxic add -t bandwidth -a rate="$rate" -d "w$w"
		tox toxic add -t bandwidth -a rate="$rate" -u "w$w"
	fi
	nats_url[w]="nats://$net.1:$port"
done

# The workers prove who they are by their keys: the coordinator's
# embedded server admits those registered in the book, no one else.
timed() { # timed HOST NAME ARGS...: c4book in the namespace of HOST, under GNU time
	local h=$1 name=$2
	shift 2
	ip netns exec "c4h$h" /usr/bin/time -v -o "$dir/logs/$name.time" \
		"$c4book" "$@" >"$dir/logs/$name.out" 2>"$dir/logs/$name.err" &
	pids+=($!)
	started=$!
}
say "depth $depth, root '${root}', ${width}x$height, $workers workers; links: latency ${latency} ms each way (jitter $jitter), rate ${rate:-0} KB/s; cuts ${cuts[*]:-none}; stops ${stops[*]:-none}; slow ${slows[*]:-none}; churn ${churns[*]:-none}"
declare -a slowpct
for spec in "${slows[@]}"; do
	IFS=: read -r w pct <<<"$spec"
	cg=$(cgroup_dir "$w")
	mkdir -p "$cg" || die "cannot make the cgroup $cg"
	if [ -f "$cg/cpu.cfs_quota_us" ]; then
		echo 100000 >"$cg/cpu.cfs_period_us"
		echo $((pct * 1000)) >"$cg/cpu.cfs_quota_us"
	else
		echo "$((pct * 1000)) 100000" >"$cg/cpu.max" || die "cannot set cpu.max in $cg (is the cpu controller enabled?)"
	fi
	slowpct[w]=$pct
done
start=$(date +%s)
timed 0 coordinator coordinator --depth "$depth" --root "$root" --book "$book" --listen 0.0.0.0:4222 "${board[@]}" "${extra[@]}"
coord=$started
sleep 2
declare -a wpids wruns
join() { # join W: start worker W (again), its log numbered by its run
	local w=$1
	wruns[w]=$((${wruns[w]:-0} + 1))
	local name="w$w"
	[ "${wruns[w]}" -eq 1 ] || name="w$w.${wruns[w]}"
	timed "$w" "$name" worker --nats "${nats_url[w]}" --nkey "$dir/w$w.nkey" --concurrency 1 --log-level debug
	wpids[w]=$started
	if [ -n "${slowpct[w]:-}" ]; then
		local pid
		for _ in $(seq 50); do pid=$(pgrep -P "$started" | head -1) && [ -n "$pid" ] && break; sleep 0.1; done
		echo "$pid" >"$(cgroup_dir "$w")/cgroup.procs" || die "cannot put worker $w in its cgroup"
	fi
}
for w in $(seq "$workers"); do join "$w"; done

# The faults, on their schedule.
events=()
for spec in "${cuts[@]}"; do IFS=: read -r w at for <<<"$spec"; events+=("$at down $w" "$((at + for)) up $w"); done
for spec in "${stops[@]}"; do IFS=: read -r w at for <<<"$spec"; events+=("$at stop $w" "$((at + for)) cont $w"); done
if [ "${#events[@]}" -gt 0 ]; then
	mapfile -t events < <(printf '%s\n' "${events[@]}" | sort -n)
fi
declare -a churn_every churn_next churn_in churn_kills
for spec in "${churns[@]}"; do
	IFS=: read -r w every <<<"$spec"
	churn_every[w]=$every churn_next[w]=$every churn_in[w]=1 churn_kills[w]=0
done
: >"$dir/events"
next=0
while kill -0 "$coord" 2>/dev/null; do
	now=$(($(date +%s) - start))
	for w in "${!churn_every[@]}"; do
		[ "$now" -ge "${churn_next[w]}" ] || continue
		if [ "${churn_in[w]}" -eq 1 ]; then
			if [ $((churn_kills[w] % 2)) -eq 0 ]; then sig=INT; else sig=KILL; fi
			churn_kills[w]=$((churn_kills[w] + 1))
			kill -"$sig" "$(pgrep -P "${wpids[w]}" | head -1)" 2>/dev/null || true
			churn_in[w]=0
			say "at ${now}s: worker $w leaves (SIG$sig)"
		else
			join "$w"
			churn_in[w]=1
			echo "$(date +%s) join $w" >>"$dir/events"
			say "at ${now}s: worker $w joins"
		fi
		churn_next[w]=$((now + churn_every[w]))
	done
	while [ "$next" -lt "${#events[@]}" ]; do
		read -r at what h <<<"${events[next]}"
		[ "$now" -ge "$at" ] || break
		case $what in
		down) ip link set "c4v$h" down ;;
		up) ip link set "c4v$h" up ;;
		stop) kill -STOP "$(pgrep -P "${wpids[h]}" | head -1)" ;;
		cont) kill -CONT "$(pgrep -P "${wpids[h]}" | head -1)" ;;
		esac
		echo "$(date +%s) $what $h" >>"$dir/events"
		say "at ${now}s: $what host $h"
		next=$((next + 1))
	done
	sleep 1
done
wait "$coord" || die "the coordinator failed: $dir/logs/coordinator.err"
wall=$(($(date +%s) - start))
say "coordinator done after ${wall}s"
for w in $(seq "$workers"); do kill -INT "$(pgrep -P "${wpids[w]}" | head -1)" 2>/dev/null || true; done
# Until each has written its figures (a worker may take a few seconds to
# give up on a server that is gone).
for w in $(seq "$workers"); do
	for _ in $(seq 150); do kill -0 "${wpids[w]}" 2>/dev/null || break; sleep 0.1; done
done

# How soon each worker took a task again after its link came back or it
# woke: the first "task taken" of its log after the event (the logs' times
# are to the second, local time).
while read -r at what w; do
	case $what in up | cont | join) ;; *) continue ;; esac
	[ "$w" -ge 1 ] || continue
	logs=("$dir/logs/w$w.err")
	for f in "$dir/logs/w$w".*.err; do [ -f "$f" ] && logs+=("$f"); done
	first=$(awk -v at="$(date -d "@$at" +%T)" '
		/msg="task taken"/ { match($0, /time=[0-9:]+/); t = substr($0, RSTART + 5, RLENGTH - 5); if (t >= at && (first == "" || t < first)) first = t }
		END { print first }' "${logs[@]}")
	if [ -n "$first" ]; then
		delay=$(($(date -d "$first" +%s) - $(date -d "$(date -d "@$at" +%T)" +%s)))
		say "worker $w: a task taken ${delay}s after $what at $(date -d "@$at" +%T)"
	else
		say "worker $w: no task taken after $what at $(date -d "@$at" +%T)"
	fi
done <"$dir/events"

for f in "$dir"/logs/*.time; do
	say "$(basename "$f" .time): CPU $(time_cpu "$f") s"
done
{ grep -E "tasks|solved twice|copies|cross" "$dir/logs/coordinator.out" || true; } | head -20 | while read -r l; do say "summary: $l"; done
if [ "$check" -eq 1 ] && [ -n "$reference" ]; then
	digest() { "$c4book" book digest --root "$root" --depth "$depth" --book "$1" "${board[@]}" 2>"$dir/logs/digest.err"; }
	mine=$(digest "$book") || die "digest of the book failed: $dir/logs/digest.err"
	theirs=$(digest "$reference") || die "digest of $reference failed: $dir/logs/digest.err"
	if [ "$mine" = "$theirs" ]; then
		say "PASS: the book's digest under '$root' to depth $depth equals $reference's ($mine)"
	else
		say "FAIL: the book's digest under '$root' to depth $depth is $mine, $reference's is $theirs"
		exit 1
	fi
elif [ "$check" -eq 1 ]; then
	alone=$dir/alone.db
	[ -d "$alone" ] || "$c4book" generate --depth "$depth" --root "$root" --book "$alone" "${board[@]}" --workers 2 >/dev/null 2>&1
	"$c4book" book export --book "$book" >"$dir/cluster.txt" 2>/dev/null
	"$c4book" book export --book "$alone" >"$dir/alone.txt" 2>/dev/null
	if cmp -s "$dir/cluster.txt" "$dir/alone.txt"; then
		say "PASS: the book equals the one-process build ($(wc -l <"$dir/alone.txt") entries)"
	else
		say "FAIL: the book differs from the one-process build"
		exit 1
	fi
fi
