#!/usr/bin/env bash
# packed-figures.sh: the figures of a packed book against the other forms
# of the same book, for docs/benchmarks.md: the Pebble book's size on disk,
# the packed file's (with the time and peak memory of book pack), the binary
# export's raw and with zstd -19, Pons' .book export's (and what it loses),
# and the time of one lookup in the packed and in the Pebble book, warm and,
# when run as root, cold (the page cache dropped before the first pass).
#
# Usage: scripts/tools/packed-figures.sh [--root MOVES] [--depth D] BOOK OUTDIR
#
# BOOK is a Pebble book; OUTDIR gets the packed file, the exports and the
# reports. c4book and lookuplatency are built from this repository, unless
# C4BOOK names a binary. Needs GNU time and zstd.
#
# Example: scripts/tools/packed-figures.sh /work/exp/d12/book.db /tmp/fig12
set -euo pipefail

prog=packed-figures.sh
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

root_args=() book="" out=""
while [ $# -gt 0 ]; do
	case $1 in
	--root) root_args+=(--root "${2?$1 needs a value}"); shift 2 ;;
	--depth) root_args+=(--depth "${2:?$1 needs a value}"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; die "unknown option: $1" ;;
	*) book_and_dir "$1"; shift ;;
	esac
done
need_book_and_dir
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is needed"
command -v zstd >/dev/null || die "zstd is needed"
mkdir -p "$out"
c4book=${C4BOOK:-}
if [ -z "$c4book" ]; then
	(cd "$repo" && go build -o "$out/c4book" ./cmd/c4book) || die "build failed"
	c4book=$out/c4book
fi
(cd "$repo" && go build -o "$out/lookuplatency" ./scripts/tools/lookuplatency) || die "build failed"

# size FILE prints its size in bytes.
size() { stat -c %s "$1"; }

pebble=$(du -sb --exclude=plans --exclude=nats --exclude=snapshots "$book" | cut -f1)
/usr/bin/time -v -o "$out/pack.time" "$c4book" book pack "${root_args[@]}" --book "$book" "$out/book.c4pack" >"$out/pack.out"
positions=$(awk '/^packed / {gsub(",", "", $2); print $2}' "$out/pack.out")
"$c4book" book export --format bin --book "$out/book.c4pack" --out "$out/book.bin" 2>/dev/null
zstd -q -19 -f "$out/book.bin" -o "$out/book.bin.zst"
"$c4book" book export --format pons --book "$out/book.c4pack" --out "$out/book.pons" 2>"$out/pons.err"

bits() { awk -v b="$1" -v n="$positions" 'BEGIN {printf "%.2f", 8 * b / n}'; }
echo "positions: $positions"
echo
echo "| form | bytes | bits a position |"
echo "| --- | ---: | ---: |"
echo "| Pebble book (its directory, no plan, NATS store or snapshot) | $pebble | $(bits "$pebble") |"
echo "| packed book | $(size "$out/book.c4pack") | $(bits "$(size "$out/book.c4pack")") |"
echo "| binary export | $(size "$out/book.bin") | $(bits "$(size "$out/book.bin")") |"
echo "| binary export, zstd -19 | $(size "$out/book.bin.zst") | $(bits "$(size "$out/book.bin.zst")") |"
echo "| Pons' .book (lossy) | $(size "$out/book.pons") | $(bits "$(size "$out/book.pons")") |"
echo
echo "pack: $(time_wall "$out/pack.time") wall, $(time_mem "$out/pack.time") MiB peak (with its check)"
echo "Pons' export: $(grep -E '^(wrote|lost)' "$out/pons.err" | tr '\n' ' ')"
echo
for form in "$out/book.c4pack" "$book"; do
	if [ "$(id -u)" -eq 0 ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches
		echo "lookups, the page cache dropped first (first pass cold):"
	else
		echo "lookups (not root: the page cache is as it is):"
	fi
	"$out/lookuplatency" -n 100000 "$form"
done
