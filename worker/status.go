package worker

import (
	"context"
	"time"

	"github.com/c4book/c4book/queue"
)

// reportStatus stores the worker's status every StatusEvery until
// statusCtx is done; work is the worker's context.
//
// Busy says whether the worker worked in the interval, not only at the
// instant of the report: a worker on tasks of a few milliseconds spends
// most instants between two of them (waiting for the next one from the
// server), and sampled alone it would look idle while it solves all the
// time. A worker shown idle that takes a task, or shown with no task done
// that finishes one, reports at once, rather than up to StatusEvery later.
func (w *worker) reportStatus(statusCtx, work context.Context) {
	tick := time.NewTicker(w.cfg.StatusEvery)
	defer tick.Stop()
	for {
		job := w.LastJob()
		took := w.took.Swap(false)
		s := queue.WorkerStatus{
			WorkerID: w.cfg.ID, Host: w.host, Solved: w.Solved.Load(), Nodes: w.Nodes.Load(),
			Tasks: w.Tasks.Load(), Started: w.started, Busy: took || w.Busy.Load() > 0, JobID: job,
		}
		w.shownIdle.Store(!s.Busy)
		w.shownNone.Store(s.Tasks == 0)
		if err := w.pub.PutWorkerStatus(statusCtx, s); err != nil && work.Err() == nil {
			w.log.Debug("storing worker status", "error", err)
		}
		select {
		case <-statusCtx.Done():
			return
		case <-tick.C:
		case <-w.poke:
		}
	}
}

// pokeStatus has reportStatus store the worker's status now.
func (w *worker) pokeStatus() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}
