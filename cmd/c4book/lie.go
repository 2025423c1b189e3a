package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/worker"
)

// lieEnv names a fault injection for tests, never set in use: a worker
// started with C4BOOK_TEST_LIE_FRACTION=F (0 < F <= 1) publishes wrong
// scores for that fraction of its results (every result when F is 1,
// every other when 0.5), scores the coordinator's checks cannot tell from
// true ones, so that the defences against a lying worker with valid
// credentials (cross-checks, quarantine, c4book book revoke) can be run
// with real processes (scripts/liar.sh). It is not a configuration key:
// no config file or flag sets it, and the worker says so on standard
// error when it is set.
const lieEnv = "C4BOOK_TEST_LIE_FRACTION"

// lieFraction returns the fraction of results to lie about that lieEnv
// sets, 0 when it is not set.
func lieFraction() (float64, error) {
	v, ok := os.LookupEnv(lieEnv)
	if !ok || v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0 && f <= 1) {
		return 0, fmt.Errorf("%s=%q: must be a fraction above 0 and at most 1 (a fault injection for tests: unset it)", lieEnv, v)
	}
	return f, nil
}

// lyingPublisher publishes a worker's results, a fraction of them with
// every score changed into another that is possible at that depth and not
// a win at once: a draw becomes -1 (a loss by the last stone), any other
// score 0. For tests only (lieEnv).
type lyingPublisher struct {
	worker.Publisher
	fraction  float64
	published atomic.Int64
	lies      atomic.Int64 // results lied about
}

// PublishResult publishes r, a lie for result n when the count of lies
// due, n times the fraction rounded down, grows.
func (p *lyingPublisher) PublishResult(ctx context.Context, r queue.Result) error {
	n := p.published.Add(1)
	if int64(float64(n)*p.fraction) > int64(float64(n-1)*p.fraction) {
		scores := make([]int8, len(r.Scores))
		for i, s := range r.Scores {
			if s == 0 {
				scores[i] = -1
			}
		}
		r.Scores = scores
		p.lies.Add(1)
	}
	return p.Publisher.PublishResult(ctx, r)
}
