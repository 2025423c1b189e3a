//go:build c4book_testlie

// The lying worker: a fault injection for tests, built only with the tag
// c4book_testlie (go build -tags c4book_testlie ./cmd/c4book, as
// scripts/harness/liar.sh does), so that no binary in use carries it. Here
// are its settings; the liar itself is worker.LyingPublisher (worker/lie.go).

package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/c4book/c4book/worker"
)

// testEnvVars returns the variables of the fault injections of tests,
// which config.Load then leaves alone: lieEnv and liePositionsEnv.
func testEnvVars() []string { return []string{lieEnv, liePositionsEnv} }

// lieEnv names a fault injection for tests, never set in use: a worker
// started with C4BOOK_TEST_LIE_FRACTION=F (0 < F <= 1) publishes wrong
// scores for that fraction of its results (every result when F is 1,
// every other when 0.5), scores the coordinator's checks cannot tell from
// true ones, so that the defences against a lying worker with valid
// credentials (cross-checks, quarantine, c4book book revoke) can be run
// with real processes (scripts/harness/liar.sh). It is not a configuration
// key: no config file or flag sets it, the worker says so on standard error
// when it is set, and a binary built without the tag refuses it as it
// refuses any C4BOOK_ variable that is no key's.
const lieEnv = "C4BOOK_TEST_LIE_FRACTION"

// liePositionsEnv is the same fault injection counted in positions, not
// results: a worker started with C4BOOK_TEST_LIE_POSITIONS=F changes the
// score of that fraction of the positions it solved, one score of a
// result at a time, so that rare lies (1 in 100,000) can be measured
// against the checks that should find them.
const liePositionsEnv = "C4BOOK_TEST_LIE_POSITIONS"

// faultInjection is called as a worker starts: it returns an error for
// settings it refuses, or what wraps the worker's publisher once the
// worker has its tasks (nil: nothing to inject), which returns the
// function to call as the worker stops. Here it wraps the publisher in a
// worker.LyingPublisher when lieEnv or liePositionsEnv is set, and says
// so on stderr, at the start and with the count of lies at the end
// (scripts/harness/liar.sh reads that count).
func faultInjection(stderr io.Writer) (func(worker.Publisher) (worker.Publisher, func()), error) {
	f, positions, err := lieFraction()
	if err != nil || f == 0 {
		return nil, err
	}
	return func(pub worker.Publisher) (worker.Publisher, func()) {
		liar := &worker.LyingPublisher{Publisher: pub, Fraction: f, Positions: positions}
		unit := "results"
		if positions {
			unit = "positions"
		}
		fmt.Fprintf(stderr, "FAULT INJECTION FOR TESTS: this worker publishes wrong scores for %g of its %s.\n", f, unit)
		return liar, func() {
			lies, published := liar.Lies()
			fmt.Fprintf(stderr, "FAULT INJECTION: %d of %d %s lied about.\n", lies, published, unit)
		}
	}, nil
}

// lieFraction returns the fraction to lie about that lieEnv or
// liePositionsEnv sets, 0 when neither is set, and whether it counts
// positions.
func lieFraction() (f float64, positions bool, err error) {
	for _, env := range []string{lieEnv, liePositionsEnv} {
		v, ok := os.LookupEnv(env)
		if !ok || v == "" {
			continue
		}
		if f > 0 {
			return 0, false, fmt.Errorf("%s and %s are both set: one fault injection at a time", lieEnv, liePositionsEnv)
		}
		f, err = strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return 0, false, fmt.Errorf("%s=%q: must be a fraction above 0 and at most 1 (a fault injection for tests: unset it)", env, v)
		}
		positions = env == liePositionsEnv
	}
	return f, positions, nil
}
