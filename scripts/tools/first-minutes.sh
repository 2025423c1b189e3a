#!/usr/bin/env bash
# first-minutes.sh: what a job's warm tables save. For each c4book binary
# given, it plans a job in a new book, runs it (one process, the default
# worker threads) for a set time, stops it with Ctrl-C, and reads the
# process's CPU time with GNU time; then it solves a random sample of the
# leaves the job solved again, one by one with a cleared table (c4book
# bench), and prints
#
#   the leaves solved, the CPU per leaf in the job, the cold time per leaf
#   of the sample, and their ratio (the job's CPU a leaf / the cold one)
#
# The ratio says how much the job's order and its warm tables save on the
# leaves it met; the cold time says how hard those leaves are (compare it
# with a random sample of the whole job's, c4book estimate, or bench on
# ../shared/testdata/leaves-dD.txt). Binaries given together run one after
# the other, to be compared in one session. The board is the standard one.
#
# Usage: scripts/tools/first-minutes.sh [options] [BINARY...]
#
#   -d, --depth D      depth of the job (default 12)
#   -r, --root MOVES   root of the job (default the empty board)
#   -s, --seconds S    seconds of solving measured (default 240)
#   -n, --sample N     leaves of the cold sample (default 400)
#       --keep DIR     keep the books in DIR (default: removed)
#
# Without a binary, c4book is built from this repository. The planning is
# done first, apart, and not measured. Example:
#
#   scripts/tools/first-minutes.sh /tmp/c4book-old /tmp/c4book-new
set -euo pipefail

prog=first-minutes.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

depth=12 root="" seconds=240 sample=400 keep=""
while [ $# -gt 0 ]; do
	case $1 in
	-d | --depth) depth=$2; shift 2 ;;
	-r | --root) root=$2; shift 2 ;;
	-s | --seconds) seconds=$2; shift 2 ;;
	-n | --sample) sample=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) break ;;
	esac
done
command -v /usr/bin/time >/dev/null || die "GNU time (/usr/bin/time) is needed: apt install time"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/c4book-first.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=("$(find_c4book "$repo")")

printf '%-40s %10s %14s %14s %7s\n' binary leaves "job CPU/leaf" "cold/leaf" ratio
for bin in "${bins[@]}"; do
	dir=$tmp/$(basename "$bin")-$RANDOM
	mkdir -p "$dir"
	job=(generate --depth "$depth" --root "$root" --book "$dir/book.db")
	# Plan, then stop as soon as the tasks are out.
	"$bin" "${job[@]}" >"$dir/plan.out" 2>"$dir/plan.log" &
	pid=$!
	until grep -q "tasks published" "$dir/plan.log" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || die "$bin: the planning ended: $(tail -3 "$dir/plan.log")"
		sleep 1
	done
	kill -INT "$pid"
	wait "$pid" || true
	# The measured run.
	/usr/bin/time -f "%U %S" -o "$dir/time" "$bin" "${job[@]}" >"$dir/run.out" 2>"$dir/run.log" &
	pid=$!
	sleep "$seconds"
	pkill -INT -P "$pid" || true
	wait "$pid" || true
	read -r user sys < <(tail -1 "$dir/time") # after a line on the exit status
	# The leaves solved: the depth-D entries but those won with the next
	# stone, which the planning writes, scoring (42 - D) / 2.
	win=$(((42 - depth) / 2))
	"$bin" book export --book "$dir/book.db" --max-depth "$depth" 2>/dev/null |
		awk -v d="$depth" -v r="${#root}" -v w="$win" 'length($1) == d && $2 != w' >"$dir/solved.txt"
	leaves=$(wc -l <"$dir/solved.txt")
	[ "$leaves" -gt 0 ] || die "$bin: no leaf solved in $seconds s"
	shuf -n "$sample" "$dir/solved.txt" >"$dir/sample.txt"
	cold=$("$bin" bench --json "$dir/sample.txt" | sed -n 's/.*"mean_ns":\([0-9.]*\).*/\1/p')
	awk -v b="$bin" -v n="$leaves" -v u="$user" -v s="$sys" -v c="$cold" 'BEGIN {
		job = (u + s) * 1000 / n
		c /= 1e6
		printf "%-40s %10d %11.2f ms %11.2f ms %7.2f\n", b, n, job, c, job / c }'
	if [ -n "$keep" ]; then
		mkdir -p "$keep"
		mv "$dir" "$keep/"
	fi
done
