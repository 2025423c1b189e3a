package queue

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Waiting for the server. A client of the queue waits out what passes by
// itself: a server not started yet or restarting, a coordinator that has
// not set up the queue yet. Backoff.Retry is the one loop that does it:
//
//	attempt  1     2     3     4     5    ...  n
//	pause     0.5s  1s    2s    4s    8s  ...  10s (Max)
//	log      line                ...  line, a minute after the last one
//
// Each pause is drawn at random in [(1-Jitter)*p, p], so that clients cut
// off together do not all come back at the same instant.

// Backoff is how Retry waits between attempts. The zero value is ready to
// use.
type Backoff struct {
	// First is the pause after the first failure; each pause doubles the
	// one before. The default value is 500 milliseconds.
	First time.Duration
	// Max caps the pause. The default value is 10 seconds.
	Max time.Duration
	// Jitter is the share of each pause drawn at random: a pause p lasts
	// between (1-Jitter)*p and p. It is below 1. The default value is 0.25.
	Jitter float64
	// LogEvery is the least time between two lines saying what Retry
	// waits for. The default value is one minute.
	LogEvery time.Duration
	// Level is the level of those lines. The default value is
	// slog.LevelInfo.
	Level slog.Level
	// Passing reports whether a failure may pass by itself, so that the
	// attempt is worth making again. The default value is Transient.
	Passing func(error) bool

	clock clock // nil: the real one
}

// Defaults of Backoff.
const (
	defaultBackoffFirst    = 500 * time.Millisecond
	defaultBackoffMax      = 10 * time.Second
	defaultBackoffJitter   = 0.25
	defaultBackoffLogEvery = time.Minute
)

// Retry calls fn until it returns nil, returns an error that is not
// passing (b.Passing), or ctx is done, pausing between attempts. It says
// what it waits for ("waiting for " + what, with the time waited and the
// last error) to log at the first failure and then at most every
// b.LogEvery, and how long it waited once fn succeeds after such a line.
// A nil log says nothing.
//
// It returns nil, fn's error that is not passing, or, when ctx is done,
// an error wrapping ctx's error that also tells fn's last one.
func (b Backoff) Retry(ctx context.Context, log *slog.Logger, what string, fn func() error) error {
	b = b.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var start, said time.Time // of the first failure, of the last line
	pause := b.First
	for {
		err := fn()
		if err == nil {
			if !said.IsZero() {
				log.Log(ctx, b.Level, "waited for "+what, "waited", roundWait(b.clock.Now().Sub(start)))
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), err)
		}
		if !b.Passing(err) {
			return err
		}
		now := b.clock.Now()
		if start.IsZero() {
			start = now
		}
		if said.IsZero() || now.Sub(said) >= b.LogEvery {
			log.Log(ctx, b.Level, "waiting for "+what, "waited", roundWait(now.Sub(start)), "error", err)
			said = now
		}
		if serr := b.clock.Sleep(ctx, b.jitter(pause)); serr != nil {
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, serr, err)
		}
		pause = min(2*pause, b.Max)
	}
}

// withDefaults returns b with its zero fields set to their defaults.
func (b Backoff) withDefaults() Backoff {
	if b.First <= 0 {
		b.First = defaultBackoffFirst
	}
	if b.Max <= 0 {
		b.Max = defaultBackoffMax
	}
	b.First = min(b.First, b.Max)
	if b.Jitter <= 0 || b.Jitter >= 1 {
		b.Jitter = defaultBackoffJitter
	}
	if b.LogEvery <= 0 {
		b.LogEvery = defaultBackoffLogEvery
	}
	if b.Passing == nil {
		b.Passing = Transient
	}
	if b.clock == nil {
		b.clock = realClock{}
	}
	return b
}

// jitter returns a pause drawn at random in [(1-b.Jitter)*p, p].
func (b Backoff) jitter(p time.Duration) time.Duration {
	return p - time.Duration(b.Jitter*rand.Float64()*float64(p))
}

// roundWait rounds a time waited for the log: to the second from a second
// up.
func roundWait(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// clock is the time Retry reads and sleeps on: the real one, or a fake in
// tests.
type clock interface {
	Now() time.Time
	// Sleep waits for d, or returns ctx's error once ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
}

// realClock is the time of the system.
type realClock struct{}

func (realClock) Now() time.Time                                   { return time.Now() }
func (realClock) Sleep(ctx context.Context, d time.Duration) error { return sleep(ctx, d) }
