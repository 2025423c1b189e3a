package coordinator

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
)

// The job's status. A job keeps where it stands in the queue's status
// bucket (queue.JobStatus), for other processes to read: the phase, the
// positions done and in all, the tasks failed, the workers quarantined, the
// results of each worker, and whether writes wait for disk space. It is
// put from several goroutines: by the collecting goroutine as it solves; by
// a goroutine of the reporter's every StatusEvery while the job plans or
// derives, whose progress comes from other goroutines; and by whichever
// goroutine writes to the book when a write starts or stops waiting for
// disk space (guardedBook). So the reporter reads the job's counts through
// a function safe for any goroutine, and puts one status at a time.

// statusReporter stores a job's status in the queue's status bucket; a
// failure is logged, not fatal.
type statusReporter struct {
	// Set when the job starts; read-only after.
	q     Queue
	log   *slog.Logger
	every time.Duration // how often a phase without a collecting loop is put
	jobID string
	start time.Time
	// counts fills in the job's counts: failed tasks, quarantined workers
	// and the results of each worker. Called by every put, from any
	// goroutine.
	counts func(*queue.JobStatus)

	// Written by the goroutine that waits to write the book.
	diskFull atomic.Bool

	// mu makes puts one at a time, and guards the last status put.
	mu                  sync.Mutex
	lastState           book.JobState
	lastDone, lastTotal int64
}

// put stores the job status in state; done and total count the positions
// of the phase.
func (s *statusReporter) put(ctx context.Context, state book.JobState, done, total int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastState, s.lastDone, s.lastTotal = state, done, total
	st := queue.JobStatus{JobID: s.jobID, State: string(state), Total: uint64(total), Done: uint64(done), Started: s.start}
	s.counts(&st)
	if s.diskFull.Load() {
		st.Message = "waiting for disk space"
	}
	err := s.q.PutJobStatus(ctx, st)
	if err != nil && ctx.Err() == nil {
		s.log.Warn("storing job status", "error", err)
	}
}

// waitingForDisk records whether writes wait for disk space, and stores
// the last status again to say so.
func (s *statusReporter) waitingForDisk(ctx context.Context, on bool) {
	s.diskFull.Store(on)
	s.mu.Lock()
	state, done, total := s.lastState, s.lastDone, s.lastTotal
	s.mu.Unlock()
	s.put(ctx, state, done, total)
}

// report stores the job's status in state every s.every, with the counts
// last given to update, until stop is called: the status of a phase whose
// progress comes from another goroutine.
func (s *statusReporter) report(ctx context.Context, state book.JobState) (update func(done, total int64), stop func()) {
	var done, total atomic.Int64
	quit, finished := make(chan struct{}), make(chan struct{})
	s.put(ctx, state, 0, 0)
	go func() {
		defer close(finished)
		tick := time.NewTicker(s.every)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				s.put(ctx, state, done.Load(), total.Load())
			case <-quit:
				return
			}
		}
	}()
	return func(d, t int64) { done.Store(d); total.Store(t) }, func() { close(quit); <-finished }
}
