//go:build c4book_testlie

// The lying worker: a fault injection for tests, built only with the tag
// c4book_testlie (go build -tags c4book_testlie ./cmd/c4book, as
// scripts/harness/liar.sh does), so that no binary in use carries it.

package worker

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/c4book/c4book/queue"
)

// LyingPublisher publishes a worker's results, a fraction of them with
// every score changed into another that is possible at that depth and not
// a win at once: a draw becomes -1 (a loss by the last stone), any other
// score 0. For tests only: c4book's worker wraps its publisher in one when
// C4BOOK_TEST_LIE_FRACTION or C4BOOK_TEST_LIE_POSITIONS is set, so that
// the defences against a lying worker with valid credentials can be run
// with real processes.
type LyingPublisher struct {
	Publisher
	// Fraction is the share of the results (or of the positions) lied
	// about, above 0 and at most 1.
	Fraction float64
	// Positions counts the fraction in positions, one score of a result at
	// a time, not in whole results.
	Positions bool

	published atomic.Int64 // results, or positions
	lies      atomic.Int64 // results, or positions, lied about
}

// Lies returns the results (or positions) lied about, and those published.
func (p *LyingPublisher) Lies() (lies, published int64) {
	return p.lies.Load(), p.published.Load()
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
func (p *LyingPublisher) PublishResult(ctx context.Context, r queue.Result) error {
	if p.Positions {
		scores := slices.Clone(r.Scores)
		for i, s := range scores {
			n := p.published.Add(1)
			if int64(float64(n)*p.Fraction) > int64(float64(n-1)*p.Fraction) {
				scores[i] = lie(s)
				p.lies.Add(1)
			}
		}
		r.Scores = scores
		return p.Publisher.PublishResult(ctx, r)
	}
	n := p.published.Add(1)
	if int64(float64(n)*p.Fraction) > int64(float64(n-1)*p.Fraction) {
		scores := make([]int8, len(r.Scores))
		for i, s := range r.Scores {
			scores[i] = lie(s)
		}
		r.Scores = scores
		p.lies.Add(1)
	}
	return p.Publisher.PublishResult(ctx, r)
}
