#!/usr/bin/env bash
# pgo.sh: makes cmd/c4book/default.pgo, the CPU profile the Go compiler
# optimizes c4book with (profile-guided optimization). go build, go run
# and go install use a main package's default.pgo on their own, so every
# c4book built from this repository is optimized for the profile's work.
#
# The work profiled is the solver's on the positions a book job solves:
# c4book bench on the random deep leaves (leaves-d10, -d12 and -d14, all
# 300 of each) and the first 100 of the 8-stone leaves (leaves-d8), each
# position on a cleared table. The binary profiled is built without a
# profile (-pgo=off), so the result does not depend on the profile
# already there. It took 70 s here.
#
# Make it again when the search changes much: a stale profile still
# builds, but optimizes what the code was (docs/benchmarks.md measures
# what the profile is worth). A profile is a sample, and a new one can
# give slower code than the old: compare the two binaries (callgrind's
# instructions, or alternated c4book bench runs) and keep the faster.
#
# Usage: scripts/tools/pgo.sh [TESTDATA]
#
#   TESTDATA  the folder of leaves-dD.txt (default ../shared/testdata)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
data=${1:-$repo/../shared/testdata}
for d in 8 10 12 14; do
	if [ ! -r "$data/leaves-d$d.txt" ]; then
		echo "pgo.sh: $data/leaves-d$d.txt: not found (give the testdata folder)" >&2
		exit 2
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
go build -pgo=off -o "$tmp/c4book" ./cmd/c4book
"$tmp/c4book" bench --cpuprofile "$tmp/deep.pprof" \
	"$data/leaves-d10.txt" "$data/leaves-d12.txt" "$data/leaves-d14.txt"
"$tmp/c4book" bench --cpuprofile "$tmp/d8.pprof" --limit 100 "$data/leaves-d8.txt"
go tool pprof -proto "$tmp/deep.pprof" "$tmp/d8.pprof" >"$tmp/default.pgo"
mv "$tmp/default.pgo" cmd/c4book/default.pgo
echo "pgo.sh: wrote cmd/c4book/default.pgo ($(wc -c <cmd/c4book/default.pgo) bytes)"
