package coordinator

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
)

// A job in owned parts. A run of a job is one goroutine, the collecting
// goroutine: it goes through the phases (plan, solve, derive: this file)
// and, while solving, fetches results and collects them (collect.go). The
// job's state belongs to it, in parts that each own theirs:
//
//   - the dispatcher (dispatch.go, overdue.go): the run's tasks, the
//     window of those published, every publication, failed, stranded and
//     overdue tasks;
//   - trust (trust.go, crosscheck.go): what a result is worth, with one
//     entry point (admit); rejections, quarantines, cross-checks, and the
//     cases sent to the referee and its verdicts;
//   - the status reporter (status.go): the job's status in the queue.
//
// collect is where they meet: for each result, the dispatcher is told a
// copy was answered and trust judges it; the entries trust admits are
// written in one synced batch, the tasks of workers quarantined meanwhile
// are opened again, the good results acked, and the tasks still needed
// with no copy out published again. A task trust sends to the referee is
// marked as being refereed, and its verdict, when it comes, is applied
// the same way (verdict).
//
// Other goroutines touch the job through three doors only. The status
// reporter puts a status from its own goroutine while the job plans or
// derives, and from whichever goroutine waits to write the book
// (guardedBook); it reads the job's counts through statusCounts, whose
// Summary.Failed and Summary.Quarantined the collecting goroutine writes
// only while it solves, when no other goroutine puts a status, and whose
// Summary.Workers trust writes under its lock. The queue's goroutine hands
// the tasks it gives up on to the collecting goroutine over a channel
// (watchFailures). The referee's goroutine (crosscheck.go), which runs
// while the job solves, owns its solver and nothing of the job: it takes
// a task's keys over one channel and gives back its entries over another.

// job is a run of a job.
type job struct {
	// Set by Run; read-only after.
	cfg    Config
	id     string
	dir    string // the plan's
	log    *slog.Logger
	start  time.Time
	secret runSecret // drawn at each run: which tasks are cross-checked, and the copy ids

	// Owned by the collecting goroutine.
	record  book.Job
	runNo   int
	stale   bool       // tasks of earlier runs had another size: their results cannot be checked
	tasks   *taskTable // set once the plan is open; the dispatcher's
	summary Summary    // read by the status reporter too: see statusCounts

	// The parts.
	dispatch *dispatcher     // set once the plan is open
	*trust                   // embedded: the workers it quarantined and rejected read as the job's
	status   *statusReporter // used from any goroutine
}

// run runs the job: it reads the job's record, plans or resumes, solves
// the tasks not done, and derives.
func (j *job) run(ctx context.Context) error {
	rec, ok, err := j.cfg.Book.Job(j.id)
	if err != nil {
		return err
	}
	if ok && rec.State == book.JobDone {
		j.summary.AlreadyDone = true
		j.summary.Positions = rec.Planned
		j.summary.InBook = rec.Planned
		j.log.Info("job already complete: nothing to do")
		return nil
	}
	if !ok {
		rec = book.Job{ID: j.id, Root: j.cfg.Spec.Root, Depth: j.cfg.Spec.Depth, State: book.JobPlanning}
	}
	if rec.Runs >= maxRuns {
		return fmt.Errorf("job %s: run %d: too many runs", j.id, rec.Runs+1)
	}
	rec.Runs++
	j.runNo = rec.Runs
	if rec.Replan {
		// Entries of the job were taken out of the book (book.RevokeWorker)
		// after its plan was made: the plan is made again, from the book
		// as it is, and the results of earlier runs' tasks, whose indexes
		// name positions of the old plan, are not read.
		if err := RemovePlan(j.dir); err != nil {
			return fmt.Errorf("removing the plan made before a revocation: %w", err)
		}
		rec.Replan, rec.PlanRun, rec.State = false, j.runNo, book.JobPlanning
		j.log.Info("entries were revoked since the job's plan was made: planning again", "run", j.runNo)
	}
	// The results of an earlier run's tasks name them by index: with
	// another task size, the indexes name other positions.
	j.stale = rec.TaskSize != 0 && rec.TaskSize != j.cfg.Spec.TaskSize
	rec.TaskSize = j.cfg.Spec.TaskSize
	j.record = rec
	for _, w := range rec.Quarantined {
		j.trust.quarantine(w) // by an earlier run
	}
	if err := j.plan(ctx); err != nil {
		return err
	}
	leaves, err := openLeaves(j.dir)
	if err != nil {
		return err
	}
	defer leaves.Close()
	tasks := newTaskTable(leaves, j.cfg.Spec.TaskSize)
	if tasks.Len() > maxTasks {
		return fmt.Errorf("job %s: %d tasks of %d positions, more than a task id can name (%d): use a larger task size", j.id, tasks.Len(), j.cfg.Spec.TaskSize, maxTasks)
	}
	j.openTasks(tasks)
	if err := j.tasks.markHeld(j.heldEntries()); err != nil {
		return err
	}
	j.record.Tasks = int64(j.tasks.Len())
	if j.tasks.pending > 0 {
		if err := j.solve(ctx); err != nil {
			return err
		}
	}
	return j.derive(ctx)
}

// openTasks makes tasks the run's, once the plan is open: the
// dispatcher's, which trust reads.
func (j *job) openTasks(tasks *taskTable) {
	j.tasks = tasks
	j.dispatch = newDispatcher(j.cfg, j.id, j.runNo, j.secret, j.log, &j.summary, tasks)
	j.trust.run, j.trust.tasks = j.runNo, tasks
}

// heldEntries returns the book's entries of the leaves' depth, in key
// order, but those that registered workers quarantined in the job solved:
// a task holding one is solved again, whether the coordinator stopped
// before it could queue it again or the worker was quarantined by an
// earlier run.
func (j *job) heldEntries() iter.Seq2[book.Entry, error] {
	all := j.cfg.Book.Entries(j.cfg.Spec.Depth, j.cfg.Spec.Depth)
	out := j.trust.numbers(slices.Collect(maps.Keys(j.trust.quarantined)))
	if len(out) == 0 {
		return all
	}
	return func(yield func(book.Entry, error) bool) {
		for e, err := range all {
			if err == nil && out[e.Worker] {
				continue
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

// statusCounts fills in the job's counts of a status: the status
// reporter's counts.
func (j *job) statusCounts(s *queue.JobStatus) {
	s.Failed, s.Quarantined = uint64(len(j.summary.Failed)), j.summary.Quarantined
	s.Workers = j.trust.workerCounts()
}

// keepQuarantined keeps worker, quarantined, in the job's record: a
// coordinator run again ignores it from the start.
func (j *job) keepQuarantined(worker string) error {
	j.record.Quarantined = append(j.record.Quarantined, worker)
	return j.save(j.record.State, j.record.Message)
}

// save stores the job record in the book.
func (j *job) save(state book.JobState, message string) error {
	j.record.State = state
	j.record.Message = message
	rec, err := j.cfg.Book.PutJob(j.record)
	if err != nil {
		return fmt.Errorf("storing job record: %w", err)
	}
	j.record = rec
	return nil
}

// progress reports p to the configured callback.
func (j *job) progress(phase book.JobState, done, total int64, since time.Time) {
	if j.cfg.Progress != nil {
		j.cfg.Progress(Progress{Phase: phase, Done: done, Total: total, Elapsed: time.Since(since)})
	}
}

// plan makes the job's plan, or resumes it, or counts it when a former
// run made it whole; the positions scored at once are written to the book
// as it goes.
func (j *job) plan(ctx context.Context) error {
	start := time.Now()
	if j.record.State == book.JobPlanning {
		if err := j.save(book.JobPlanning, ""); err != nil {
			return err
		}
		j.log.Info("planning", "root", j.cfg.Spec.Root, "depth", j.cfg.Spec.Depth, "dir", j.dir)
	}
	// The queue is set up here, once a run, before anything else: the
	// job's status, planning included, is stored in it, and solving
	// publishes into it.
	if err := retry(ctx, j.log, "setting up the queue", func() error { return j.cfg.Queue.EnsureStreams(ctx, j.cfg.Stream) }); err != nil {
		return err
	}
	update, stop := j.status.report(ctx, book.JobPlanning)
	st, err := MakePlan(ctx, j.cfg.Spec, j.cfg.Book, j.dir, &PlanOptions{
		MemKeys: j.cfg.PlanMemKeys,
		Progress: func(n int64) {
			update(n, 0)
			j.progress(book.JobPlanning, n, 0, start)
		},
	})
	stop()
	if err != nil {
		return fmt.Errorf("planning: %w", err)
	}
	j.summary.Positions, j.summary.Immediate = st.Positions, st.Immediate
	j.record.Planned = st.Positions
	if j.record.State != book.JobPlanning {
		j.log.Info("resuming", "run", j.runNo, "state", j.record.State)
		return nil
	}
	if st.Kept {
		j.log.Info("planned before (by estimate, or a run stopped before solving): the plan is kept", "positions", st.Positions, "to_solve", st.Leaves)
	} else {
		j.log.Info("planned", "positions", st.Positions, "in_book", st.InBook, "to_solve", st.Leaves,
			"scored_at_once", st.Immediate, "took", time.Since(start).Round(time.Millisecond))
	}
	j.progress(book.JobPlanning, st.Positions, st.Positions, start)
	return j.save(book.JobSolving, "")
}

// derive scores the interior positions and marks the job done.
func (j *job) derive(ctx context.Context) error {
	if err := j.save(book.JobDeriving, ""); err != nil {
		return err
	}
	start := time.Now()
	// The progress of this phase counts the positions above the leaves
	// gone through, those the book holds included (see Derive): the
	// number derived is known only at the end.
	update, stop := j.status.report(ctx, book.JobDeriving)
	n, err := Derive(ctx, j.cfg.Spec, j.cfg.Book, j.dir, func(done, total int64) {
		// Derive makes one call at a time, the first with done 0.
		if done == 0 {
			j.log.Info("deriving: reading the positions above the leaves, scoring those the book does not hold", "positions", total)
		}
		update(done, total)
		j.progress(book.JobDeriving, done, total, start)
	})
	stop()
	j.summary.Derived = n
	if err != nil {
		return fmt.Errorf("deriving: %w", err)
	}
	j.record.Derived += n
	// The positions this run did not write were in the book before it.
	j.summary.InBook = j.summary.Positions - j.summary.Solved - j.summary.Immediate - j.summary.Derived
	if err := j.save(book.JobDone, ""); err != nil {
		return err
	}
	if err := RemovePlan(j.dir); err != nil {
		j.log.Warn("removing the plan of a finished job", "error", err)
	}
	if j.tasks.Len() > 0 {
		_, total := j.tasks.leavesLeft()
		j.status.put(ctx, book.JobDone, total, total)
		if err := j.cfg.Queue.RemoveJob(ctx, j.id); err != nil {
			j.log.Warn("removing the finished job's consumer and messages from the queue", "error", err)
		}
	}
	j.log.Info("job complete", "derived", n, "took", time.Since(j.start).Round(time.Millisecond))
	return nil
}
