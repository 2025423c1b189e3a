//go:build c4book_testlie

// The lying worker: a fault injection for tests, built only with the tag
// c4book_testlie (go build -tags c4book_testlie ./cmd/c4book, as
// scripts/liar.sh does), so that no binary in use carries it.

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/c4book/c4book/queue"
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
// with real processes (scripts/liar.sh). It is not a configuration key:
// no config file or flag sets it, the worker says so on standard error
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
// lyingPublisher when lieEnv or liePositionsEnv is set, and says so on
// stderr, at the start and with the count of lies at the end
// (scripts/liar.sh reads that count).
func faultInjection(stderr io.Writer) (func(worker.Publisher) (worker.Publisher, func()), error) {
	f, positions, err := lieFraction()
	if err != nil || f == 0 {
		return nil, err
	}
	return func(pub worker.Publisher) (worker.Publisher, func()) {
		liar := &lyingPublisher{Publisher: pub, fraction: f, positions: positions}
		unit := "results"
		if positions {
			unit = "positions"
		}
		fmt.Fprintf(stderr, "FAULT INJECTION FOR TESTS: this worker publishes wrong scores for %g of its %s.\n", f, unit)
		return liar, func() {
			fmt.Fprintf(stderr, "FAULT INJECTION: %d of %d %s lied about.\n", liar.lies.Load(), liar.published.Load(), unit)
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

// lyingPublisher publishes a worker's results, a fraction of them with
// every score changed into another that is possible at that depth and not
// a win at once: a draw becomes -1 (a loss by the last stone), any other
// score 0. For tests only (lieEnv).
type lyingPublisher struct {
	worker.Publisher
	fraction  float64
	positions bool         // the fraction is of positions, not of results
	published atomic.Int64 // results, or positions
	lies      atomic.Int64 // results, or positions, lied about
}

// lie returns the score a liar gives for the score s.
func lie(s int8) int8 {
	if s == 0 {
		return -1
	}
	return 0
}

// PublishResult publishes r, a lie for result (or position) n when the
// count of lies due, n times the fraction rounded down, grows.
func (p *lyingPublisher) PublishResult(ctx context.Context, r queue.Result) error {
	if p.positions {
		scores := slices.Clone(r.Scores)
		for i, s := range scores {
			n := p.published.Add(1)
			if int64(float64(n)*p.fraction) > int64(float64(n-1)*p.fraction) {
				scores[i] = lie(s)
				p.lies.Add(1)
			}
		}
		r.Scores = scores
		return p.Publisher.PublishResult(ctx, r)
	}
	n := p.published.Add(1)
	if int64(float64(n)*p.fraction) > int64(float64(n-1)*p.fraction) {
		scores := make([]int8, len(r.Scores))
		for i, s := range r.Scores {
			scores[i] = lie(s)
		}
		r.Scores = scores
		p.lies.Add(1)
	}
	return p.Publisher.PublishResult(ctx, r)
}
