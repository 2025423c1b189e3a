package book

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Snapshotter takes the snapshots of the book of a running job, for
// readers (c4book book get, serve) while the job writes it: every
// interval (SnapshotEvery), when the job's phase changes (Phase), and
// when asked (Take). Closing the book removes them (see snapshot.go).
// The zero Snapshotter takes none; Take and Stop are safe for concurrent
// use, Phase is called from one goroutine (the job's progress reports).
type Snapshotter struct {
	bk     *Book // nil: no snapshots
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
	last   JobState // phase of the last progress report

	mu       sync.Mutex // guards the failures' report
	failures int        // since the last one logged
	logged   time.Time
}

// Start takes snapshots of b every interval (none if it is 0), the first
// at once, until Stop; log reports each at level debug and their
// failures as warnings.
func (s *Snapshotter) Start(ctx context.Context, b *Book, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.bk, s.log, s.done = b, log, make(chan struct{})
	go func() {
		defer close(s.done)
		b.SnapshotEvery(ctx, interval, s.taken)
	}()
}

// taken logs a snapshot at level debug, or its failure.
func (s *Snapshotter) taken(at time.Time, took time.Duration, err error) {
	if err != nil {
		s.failed(err)
		return
	}
	s.log.Debug("book snapshot taken", "at", at, "took", took)
}

// Phase takes a snapshot when the job's phase changes: the plan is
// written, or the leaves are solved, which readers should see at once.
func (s *Snapshotter) Phase(p JobState) {
	if s.last != "" && p != s.last {
		s.Take()
	}
	s.last = p
}

// Take takes a snapshot now, if snapshots are taken at all (Start with
// an interval).
func (s *Snapshotter) Take() {
	if s.bk == nil {
		return
	}
	start := time.Now()
	at, err := s.bk.Snapshot()
	s.taken(at, time.Since(start), err)
}

// failed logs a snapshot that failed: the job goes on, readers keep the
// snapshot before. The first failure is logged, then one a minute, with
// the count since the last one logged.
func (s *Snapshotter) failed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	if time.Since(s.logged) < time.Minute {
		return
	}
	s.log.Warn("book snapshot failed: readers of the book keep the one before", "error", err, "failures", s.failures)
	s.failures, s.logged = 0, time.Now()
}

// Stop stops the snapshots, if any, and waits for the one being taken.
// Call it before closing the book.
func (s *Snapshotter) Stop() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
		s.cancel = nil
	}
}
