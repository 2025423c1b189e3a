#!/usr/bin/env bash
# serve-latency.sh: how fast "c4book serve" answers the positions people
# play, on one core. It starts "c4book serve --book BOOK" pinned to core 0
# (taskset), waits until it answers, and runs scripts/tools/servelatency
# pinned to core 1: GAMES random games from the empty board, each to its
# end, every position of each asked for in turn (GET /v1/position), each
# request timed by the client. It prints the percentiles of the
# latencies, all and by source (book, solver), and the slowest positions,
# then stops the server. Any book (a Pebble directory or a packed file), of any board, works: positions beyond
# it are solved (serve.solve-timeout, 2 s by default).
#
# Usage: scripts/tools/serve-latency.sh [options] BOOK [-- c4book serve flags...]
#
#   -g, --games N     random games (default 1000)
#   -s, --seed S      seed of the games (default 1): the same seed, the same
#                     positions, so that two books or two builds compare
#       --p99 D       fail (status 1) if the 99th percentile is above D
#                     (a Go duration: 20ms)
#       --load        serve with --load: the book read into memory first
#       --samples F   write every request to F, in the order asked:
#                     "microseconds stones source moves"
#
# c4book is built from this repository, unless C4BOOK names a binary.
# Needs taskset (util-linux) and two cores.
#
# Example: scripts/tools/serve-latency.sh --p99 20ms 7x6-d14.db
set -euo pipefail

games=1000 seed=1 p99=0 load=0 samples=""
prog=serve-latency.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

book="" extra=()
while [ $# -gt 0 ]; do
	case $1 in
	-g | --games) games=${2:?$1 needs a value}; shift 2 ;;
	-s | --seed) seed=${2:?$1 needs a value}; shift 2 ;;
	--p99) p99=${2:?$1 needs a value}; shift 2 ;;
	--load) load=1; shift ;;
	--samples) samples=$(realpath -m "${2:?$1 needs a value}"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	-*) usage >&2; die "unknown option: $1" ;;
	*) [ -z "$book" ] || die "one book, not $book and $1"; book=$1; shift ;;
	esac
done
[ -n "$book" ] || { usage >&2; die "no book"; }
[ -e "$book" ] || die "no book at $book (a Pebble directory or a packed file)"
need_numbers games seed
command -v taskset >/dev/null || die "taskset is needed (util-linux)"

tmp=$(mktemp -d)
server=""
cleanup() {
	local status=$?
	[ -z "$server" ] || { kill -INT "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
	keep_or_remove_tmp "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM


c4book=$(find_c4book "$repo") || die "build failed"
(cd "$repo" && go build -o "$tmp/servelatency" ./scripts/tools/servelatency) || die "build of servelatency failed"

port=$(free_port)
flags=(--book "$book" --listen "127.0.0.1:$port")
[ "$load" -eq 0 ] || flags+=(--load)
taskset -c 0 "$c4book" serve "${flags[@]}" "${extra[@]}" >"$tmp/serve.log" 2>&1 &
server=$!
for _ in $(seq 600); do
	curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
	alive "$server" || { cat "$tmp/serve.log" >&2; die "c4book serve exited"; }
	sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$tmp/serve.log" >&2; die "c4book serve does not answer"; }
echo "Serving $book on core 0 (c4book serve ${flags[*]} ${extra[*]}); $games games, seed $seed, from core 1." >&2
taskset -c 1 "$tmp/servelatency" -url "http://127.0.0.1:$port" -games "$games" -seed "$seed" -p99 "$p99" -samples "$samples"
