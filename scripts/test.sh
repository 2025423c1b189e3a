#!/usr/bin/env bash
# test.sh: the project's tests, as CI runs them (.ci/run).
#
#   1. every package, short (-short leaves the long reference sets to the
#      benchmarks and scripts);
#   2. the race detector on every package whose code runs concurrently:
#      all of them but config (no goroutines) in full, and the solver
#      without its single-threaded known-answer tests (reference sets,
#      small and large boards, the static bounds), which exercise no
#      concurrency and take seven minutes under the detector. The solver's
#      threads, teams, stops and shared table are all in what runs.
#      This pass builds with the tag c4book_testlie, which adds the lying
#      worker (worker/lie.go, cmd/c4book/lie.go) and its tests; the first
#      pass tests the build without it, as it is shipped;
#   3. the solver's pure-Go path (-tags purego: no assembly, the paths of
#      other architectures and compilers), tested short, and go vet of
#      every package for arm64 (its prefetch in assembly) and of the
#      solver with purego, so that neither rots unseen;
#   4. staticcheck (honnef.co/go/tools, a pinned version fetched by go run
#      through the module proxy): unused code, values never read, misused
#      APIs. About 35 s.
#
# The tests build without the compiler's profile (-pgo=off): with it, the
# packages cmd/c4book depends on would be compiled twice, once for its
# tests and once for the others', minutes more on 2 cores, and the profile
# only changes how fast the code runs (scripts/tools/pgo.sh).
#
# Usage: scripts/test.sh [go test flags], e.g. scripts/test.sh -count=1
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

go test -pgo=off -short "$@" ./...
go test -pgo=off -race -short -tags c4book_testlie "$@" ./book/... ./books/ ./cmd/... ./coordinator/... ./internal/... ./queue/ ./serve/ ./worker/
go test -pgo=off -race -short "$@" \
	-skip 'TestSolver_Solve_referenceSets|TestSolver_Solve_smallBoards|TestSolver_Solve_largeBoards|TestSolver_evensBound|TestSolver_oddThreatBound|TestSolver_expand' \
	./solver/
go test -pgo=off -short -tags purego "$@" ./solver/
go vet -tags purego ./solver/
GOARCH=arm64 go vet ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
