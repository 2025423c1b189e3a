#!/usr/bin/env bash
# book-checks.sh: every check of a finished 7x6 book from the empty board,
# as the depth-14 book was checked (docs/benchmarks.md, "The depth-14 book,
# checked") and the depth-16 book must be (issue 45), in one run that
# needs nobody: it can be started to wait for a job's end (--wait) and
# read afterwards. Each check writes its output and GNU time's report into
# OUTDIR; summary.txt says PASS or FAIL for each, and the script fails if
# any failed.
#
#   counts    entries at each depth (book stats) against the positions of
#             ../shared/testdata/counts-7x6.txt (its nonterm_mirror column),
#             at the depths it has
#   digest    book digest --by-root 4 (digest-dD.txt, D the book's depth),
#             against docs/digests/dD.txt when that file exists
#   digest-K  the same at each depth K below D with a docs/digests/dK.txt
#             (--depth K), against it, line for line
#   uci       scripts/tools/ucicheck --all: the UCI 8-ply data set's tally
#   leaves-K  the positions of ../shared/testdata/leaves-dK.txt, K up to D,
#             through book get: every score equal
#   verify    book verify --sample N --seed S: 0 corrupt, 0 disagreements
#
# Usage: scripts/tools/book-checks.sh [options] BOOK OUTDIR
#
#   --sample N    entries book verify solves again (default 1000)
#   --seed S      its seed (default 1)
#   --only LIST   the checks to run, by name, comma-separated (digest-K and
#                 leaves-K as "digests" and "leaves"; default all)
#   --wait PIDS   wait first until each process PID (comma-separated: a
#                 harness, a coordinator) has ended
#   --testdata D  the folder of counts-7x6.txt and leaves-dK.txt (default
#                 ../shared/testdata beside the repository)
#   --digests D   the folder of the published dK.txt (default docs/digests)
#
# BOOK is a Pebble book or a packed file. c4book and ucicheck are built
# from this repository, unless C4BOOK names a c4book binary. Needs GNU time.
# The digest of a depth-16 book takes about 20 min on 2 cores, the verify of
# 1,000 entries 10-20 min (docs/benchmarks.md).
#
# Example: scripts/tools/book-checks.sh --wait 1234 /work/exp/d16/book.db /work/exp/d16/checks
set -euo pipefail

prog=book-checks.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

sample=1000 seed=1 only="" wait_pids="" data=$repo/../shared/testdata digests=$repo/docs/digests
book="" out=""
while [ $# -gt 0 ]; do
	case $1 in
	--sample) sample=${2:?$1 needs a value}; shift 2 ;;
	--seed) seed=${2:?$1 needs a value}; shift 2 ;;
	--only) only=${2:?$1 needs a value}; shift 2 ;;
	--wait) wait_pids=${2:?$1 needs a value}; shift 2 ;;
	--testdata) data=${2:?$1 needs a value}; shift 2 ;;
	--digests) digests=${2:?$1 needs a value}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; die "unknown option: $1" ;;
	*) book_and_dir "$1"; shift ;;
	esac
done
need_book_and_dir
need_numbers sample seed
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is needed"
[ -f "$data/counts-7x6.txt" ] || die "no counts-7x6.txt in $data (--testdata)"
for c in ${only//,/ }; do
	case $c in counts | digest | digests | uci | leaves | verify) ;; *) die "--only: no check named $c" ;; esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary=$out/summary.txt

# wanted NAME: whether the check NAME runs.
wanted() { [ -z "$only" ] || [[ ,$only, == *,$1,* ]]; }

if [ -n "$wait_pids" ]; then
	echo "Waiting for ${wait_pids//,/, } to end ..."
	for pid in ${wait_pids//,/ }; do
		while kill -0 "$pid" 2>/dev/null; do sleep 30; done
	done
fi
[ -e "$book" ] || die "no book at $book"

c4book=${C4BOOK:-}
if [ -z "$c4book" ]; then
	(cd "$repo" && go build -o "$out/c4book" ./cmd/c4book) || die "build failed"
	c4book=$out/c4book
fi
(cd "$repo" && go build -o "$out/ucicheck" ./scripts/tools/ucicheck) || die "build failed"

failed=0
# result NAME STATUS DETAIL: one line of the summary, printed too.
result() {
	local verdict=PASS
	[ "$2" -eq 0 ] || { verdict=FAIL; failed=1; }
	printf '%-10s %s  %s\n' "$1" "$verdict" "$3" | tee -a "$summary"
}
# timed NAME CMD...: runs CMD under GNU time (report in NAME.time), its
# output in NAME.out and errors in NAME.err; returns its status.
timed() {
	local name=$1
	shift
	/usr/bin/time -v -o "$out/$name.time" "$@" >"$out/$name.out" 2>"$out/$name.err"
}
# cost NAME: the wall time, CPU and peak memory of NAME's run.
cost() { echo "$(time_wall "$out/$1.time") wall, $(time_cpu "$out/$1.time") CPU-s, $(time_mem "$out/$1.time") MiB"; }

: >"$summary"
echo "book $book, $(date -u +%FT%TZ), c4book $("$c4book" version 2>/dev/null | head -1)" | tee -a "$summary"
"$c4book" book stats --book "$book" >"$out/stats.txt" || die "book stats failed: is $book a book?"
depth=$(awk '$1 ~ /^[0-9]+$/ && NF >= 2 {d = $1} END {print d}' "$out/stats.txt")
[ -n "$depth" ] || die "book stats of $book names no depth"
echo "depth $depth" | tee -a "$summary"

if wanted counts; then
	# The book's entries at each depth, and the set's positions (column 6,
	# nonterm_mirror, of counts-7x6.txt).
	# counts-7x6.txt may stop short of the book's depth (the one of
	# ../shared stops at 14): the depths past it are compared with nothing,
	# and the summary says so.
	upto=$(awk -v d="$depth" '$1 ~ /^[0-9]+$/ && $1 <= d {k = $1} END {print k}' "$data/counts-7x6.txt")
	st=0
	diff <(awk -v d="$upto" '$1 ~ /^[0-9]+$/ && $1 <= d {gsub(",", "", $2); print $1, $2}' "$out/stats.txt") \
		<(awk -v d="$upto" '$1 ~ /^[0-9]+$/ && $1 <= d {print $1, $6}' "$data/counts-7x6.txt") >"$out/counts.diff" || st=$?
	detail="entries at each depth 0-$upto against counts-7x6.txt"
	[ "$upto" = "$depth" ] || detail="$detail (it has no depth past $upto: depths $((upto + 1))-$depth unchecked)"
	result counts $st "$detail; $(awk '$1 == "all" {print $2}' "$out/stats.txt") entries in all"
fi

if wanted digest; then
	st=0
	timed digest "$c4book" book digest --by-root 4 --book "$book" || st=$?
	cp "$out/digest.out" "$out/digest-d$depth.txt"
	detail="$(wc -l <"$out/digest.out") lines, $(cost digest)"
	if [ "$st" -eq 0 ] && [ -f "$digests/d$depth.txt" ]; then
		diff "$out/digest.out" "$digests/d$depth.txt" >"$out/digest.diff" || st=$?
		detail="$detail; against $digests/d$depth.txt"
	else
		detail="$detail; no published digest to compare ($digests/d$depth.txt): digest-d$depth.txt is the new one"
	fi
	result digest "$st" "$detail"
fi

if wanted digests; then
	for f in $(ls "$digests"/d*.txt 2>/dev/null | sort -V); do
		k=$(basename "$f" .txt)
		k=${k#d}
		[[ $k =~ ^[0-9]+$ ]] && [ "$k" -lt "$depth" ] || continue
		st=0
		timed "digest-$k" "$c4book" book digest --depth "$k" --by-root 4 --book "$book" || st=$?
		[ "$st" -ne 0 ] || diff "$out/digest-$k.out" "$f" >"$out/digest-$k.diff" || st=$?
		result "digest-$k" "$st" "--depth $k against $f ($(wc -l <"$f") lines), $(cost "digest-$k")"
	done
fi

if wanted uci && [ "$depth" -ge 8 ]; then
	st=0
	timed uci "$out/ucicheck" --book "$book" --all || st=$?
	result uci "$st" "$(tail -1 "$out/uci.out")"
fi

if wanted leaves; then
	for f in $(ls "$data"/leaves-d*.txt | sort -V); do
		k=$(basename "$f" .txt)
		k=${k#leaves-d}
		[[ $k =~ ^[0-9]+$ ]] && [ "$k" -le "$depth" ] || continue
		st=0
		"$c4book" book get --book "$book" <"$f" >"$out/leaves-$k.out" 2>"$out/leaves-$k.err" || st=$?
		# book get prints "moves score"; the file's lines are "moves score".
		[ "$st" -ne 0 ] || diff <(awk '{print $1, $2}' "$f") "$out/leaves-$k.out" >"$out/leaves-$k.diff" || st=$?
		result "leaves-$k" "$st" "$(wc -l <"$f") positions of $(basename "$f") through book get"
	done
fi

if wanted verify; then
	st=0
	timed verify "$c4book" book verify --sample "$sample" --seed "$seed" --book "$book" || st=$?
	result verify "$st" "--sample $sample --seed $seed: $(grep -E 'corrupt$|disagreements?$' "$out/verify.out" | paste -sd ';'), $(cost verify)"
fi

echo "checks in $out"
exit "$failed"
