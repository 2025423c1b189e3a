package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
)

// solve publishes the tasks not done, a window of them at a time, and
// collects results, and the referee's verdicts, until every task is done
// or failed and no verdict is awaited.
func (j *job) solve(ctx context.Context) error {
	if err := j.save(book.JobSolving, ""); err != nil {
		return err
	}
	stopReferee := j.trust.startReferee(ctx)
	defer stopReferee()
	results, err := j.openResults(ctx)
	if err != nil {
		return err
	}
	failures, stopWatch, err := j.watchFailures(ctx)
	if err != nil {
		return err
	}
	defer stopWatch()
	if err := j.dispatch.publishMore(ctx); err != nil {
		return err
	}
	left, total := j.tasks.leavesLeft()
	j.log.Info("tasks published", "tasks", j.tasks.pending, "positions", left, "window", j.cfg.Window)
	start := time.Now()
	doneLeaves := total - left
	j.progress(book.JobSolving, doneLeaves, total, start)
	status := time.NewTicker(j.cfg.StatusEvery)
	defer status.Stop()
	tail := time.NewTicker(tailLookEvery)
	defer tail.Stop()
	j.status.put(ctx, book.JobSolving, doneLeaves, total)
	// Whatever the way out, a run stopped (Ctrl-C) says so, with the
	// leaves done when it stopped.
	defer func() {
		if ctx.Err() != nil {
			j.status.put(context.WithoutCancel(ctx), book.JobStopped, doneLeaves, total)
		}
	}()

	lastResult := time.Now() // or the last look for stranded tasks
	// A failed task being refereed is not pending: its verdict may still
	// make it done.
	for j.tasks.pending > 0 || j.trust.cross.awaitingVerdicts() {
		if j.tasks.pending > 0 && j.tasks.pending == j.tasks.nParked && !j.trust.cross.awaitingVerdicts() {
			n, err := j.storeParked()
			if err != nil {
				return err
			}
			doneLeaves += n
			j.progress(book.JobSolving, doneLeaves, total, start)
			continue
		}
		select {
		case v := <-j.trust.cross.verdicts():
			n, err := j.verdict(ctx, v)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				return err
			}
			doneLeaves += n
			j.progress(book.JobSolving, doneLeaves, total, start)
			if err := j.dispatch.publishMore(ctx); err != nil {
				return err
			}
			continue
		case seq := <-failures:
			j.dispatch.taskFailed(ctx, seq)
			if err := j.dispatch.publishMore(ctx); err != nil {
				return err
			}
			continue
		case <-tail.C:
			if j.dispatch.atEnd {
				if err := j.dispatch.republishOverdue(ctx); err != nil {
					return err
				}
			}
			continue
		case <-status.C:
			if err := j.repairQueue(ctx, &results); err != nil {
				return err
			}
			if err := j.dispatch.republishOverdue(ctx); err != nil {
				return err
			}
			j.status.put(ctx, book.JobSolving, doneLeaves, total)
			j.record.Solved = doneLeaves
			if err := j.save(book.JobSolving, ""); err != nil {
				return err
			}
			continue
		default:
		}
		n, err := j.fetch(ctx, results, time.Second)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, queue.ErrNotReady):
			// A part of the queue is gone (deleted by a client with every
			// right): set up again at once.
			if err := j.repairQueue(ctx, &results); err != nil {
				return err
			}
			select { // not a hot loop if it was something else
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
			continue
		case errors.Is(err, errNoResult):
			if time.Since(lastResult) >= j.cfg.IdleCheck {
				lastResult = time.Now()
				if err := j.dispatch.recoverStranded(ctx); err != nil {
					return err
				}
			}
			continue
		case err != nil:
			return err
		}
		lastResult = time.Now()
		doneLeaves += n
		j.progress(book.JobSolving, doneLeaves, total, start)
		if err := j.dispatch.publishMore(ctx); err != nil {
			return err
		}
	}
	return j.solved(ctx, doneLeaves, total)
}

// openResults replaces the tasks left in the stream by an earlier run: an
// earlier run's task that exhausted its deliveries while nobody watched
// would otherwise never be delivered nor reported. Then it binds to the
// job's results and stores those that came in while no coordinator ran,
// so that their tasks are not published again: only tasks still in a
// worker's hands are solved twice.
func (j *job) openResults(ctx context.Context) (Results, error) {
	q := j.cfg.Queue
	if err := retry(ctx, j.log, "removing old tasks", func() error { return q.PurgeTasks(ctx, j.id) }); err != nil {
		return nil, err
	}
	var results Results
	if err := retry(ctx, j.log, "binding to the results", func() error {
		src, err := q.Results(ctx, j.id)
		if err != nil {
			return err
		}
		for _, s := range src.Stray() {
			j.log.Warn("results for a job that is not open were in the result stream: purged", "subject", s.Subject, "worker", s.Worker, "messages", s.Messages)
		}
		results = src
		return nil
	}); err != nil {
		return nil, err
	}
	if err := j.drain(ctx, results); err != nil {
		return nil, err
	}
	return results, nil
}

// watchFailures returns the stream sequences of the tasks the server gives
// up on (MaxDeliver deliveries), handed from the queue's goroutine to the
// collecting one, until stop is called.
func (j *job) watchFailures(ctx context.Context) (failures <-chan uint64, stop func(), err error) {
	ch := make(chan uint64, 64)
	watchCtx, stopWatch := context.WithCancel(ctx)
	if err := retry(ctx, j.log, "watching failed tasks", func() error {
		return j.cfg.Queue.WatchMaxDeliveries(watchCtx, func(seq uint64) {
			select {
			case ch <- seq:
			case <-watchCtx.Done():
			}
		})
	}); err != nil {
		stopWatch()
		return nil, nil, err
	}
	return ch, stopWatch, nil
}

// solved ends the solving phase, doneLeaves of total positions done: the
// job fails if tasks were given up on.
func (j *job) solved(ctx context.Context, doneLeaves, total int64) error {
	j.record.Solved = doneLeaves
	j.summary.Failed = j.dispatch.appendFailed(j.summary.Failed[:0])
	if failed := len(j.summary.Failed); failed > 0 {
		msg := fmt.Sprintf("%d of %d tasks failed (each delivered %d times without a result, or published %d times without an accepted one); run the same command again to retry them",
			failed, j.tasks.Len(), j.cfg.Stream.MaxDeliver, maxCopies)
		j.status.put(ctx, book.JobFailed, doneLeaves, total)
		if err := j.save(book.JobFailed, msg); err != nil {
			return err
		}
		return fmt.Errorf("%w: %s", ErrTasksFailed, msg)
	}
	return nil
}

// drain stores the results waiting in the stream, until none comes for
// half a second.
func (j *job) drain(ctx context.Context, results Results) error {
	start := time.Now()
	left, total := j.tasks.leavesLeft()
	var stored int64
	defer func() {
		if stored > 0 {
			j.log.Info("stored results that came in between runs", "positions", stored, "took", time.Since(start).Round(time.Millisecond))
		}
	}()
	for j.tasks.pending > 0 {
		n, err := j.fetch(ctx, results, 500*time.Millisecond)
		if errors.Is(err, errNoResult) {
			return nil
		}
		if err != nil {
			return err
		}
		stored += n
		j.progress(book.JobSolving, total-left+stored, total, start)
	}
	return nil
}

// errNoResult: no result came within the wait.
var errNoResult = errors.New("no result")

// fetch waits up to wait for results and stores them (see collect),
// returning the number of positions newly done, or errNoResult.
func (j *job) fetch(ctx context.Context, results Results, wait time.Duration) (int64, error) {
	fetchCtx, cancel := context.WithTimeout(ctx, wait)
	msgs, bad, err := results.Fetch(fetchCtx, 256)
	cancel()
	for _, d := range bad {
		j.summary.Malformed++
		if floodLogged(j.summary.Malformed) {
			j.log.Warn("malformed result dropped", "sender", d.Sender, "subject", d.Subject, "error", d.Err, "dropped so far", j.summary.Malformed)
		}
	}
	switch {
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return 0, errNoResult
	case err != nil:
		return 0, err
	}
	return j.collect(ctx, msgs)
}

// collect checks results, writes the entries of the good ones in one
// synced batch, then acks them; it returns the number of positions newly
// done. Rejected results are terminated. A good result whose task awaits
// more (a cross-check's second answer, or the referee's verdict) is acked
// too: what is kept of it is in memory, for the run. A task the job still
// needs always has a copy out: when the result of its last copy is
// rejected, ignored or not enough (a cross-check awaiting a second
// worker), a new copy is published (the worker that took the task may
// have acked it); a task being refereed needs none.
func (j *job) collect(ctx context.Context, msgs []*queue.ResultMsg) (int64, error) {
	var entries []book.Entry
	var good []*queue.ResultMsg
	var answered []int
	var dups []duplicate
	var newly int64
	for _, m := range msgs {
		run, _, index := splitTaskID(m.Result.TaskID)
		if j.stale && run < j.runNo || run < j.record.PlanRun {
			// An earlier run's task, of another size or of a plan made
			// before a revocation: its index names other positions now.
			// Not the worker's fault; solved again.
			j.term(m)
			continue
		}
		if j.dispatch.answered(index, sender(m), j.trust.listensTo(sender(m))) {
			answered = append(answered, index)
		}
		a := j.trust.admit(m)
		if a.refused != nil {
			j.term(m)
			continue
		}
		good = append(good, m)
		if a.referred {
			j.dispatch.unpark(index) // a parked task refereed keeps its place until decided
			j.dispatch.refereeing(index, true)
		}
		if a.parked {
			j.dispatch.park(index)
		}
		if a.duplicate {
			dups = append(dups, duplicate{index: index, result: &m.Result, entries: a.entries})
		}
		if !a.decided {
			continue
		}
		j.dispatch.done(index)
		newly += int64(len(a.entries))
		j.summary.Solved += int64(len(a.entries))
		j.summary.Nodes += m.Result.Nodes
		entries = append(entries, a.entries...)
	}
	if len(entries) > 0 {
		if err := j.cfg.Book.PutBatch(entries); err != nil {
			return 0, fmt.Errorf("writing results: %w", err)
		}
	}
	if err := j.checkDuplicates(dups); err != nil {
		return 0, err
	}
	// The results of workers quarantined in this batch, written above or
	// before, are solved again.
	undone, err := j.requeueQuarantined(ctx)
	if err != nil {
		return newly, err
	}
	newly -= undone
	j.ack(ctx, good)
	// A task not published yet in this run (the results of an earlier run
	// are drained first) is published in its turn.
	if err := j.dispatch.publishAnswered(ctx, answered); err != nil {
		return newly, err
	}
	return newly, j.publishUnparked(ctx)
}

// duplicate is a result of a task done already, and its entries.
type duplicate struct {
	index   int
	result  *queue.Result
	entries []book.Entry
}

// checkDuplicates compares the answers of tasks done already with the
// scores the book holds for them, once the batch that may have stored
// them is written (trust.compareDuplicate): a task whose answers differ
// goes to the referee. A task reopened or refereed since its answer came
// is not compared.
func (j *job) checkDuplicates(dups []duplicate) error {
	for _, d := range dups {
		if !j.tasks.done[d.index] || j.tasks.refereeing[d.index] {
			continue
		}
		stored := make([]int8, len(d.entries))
		for i, e := range d.entries {
			v, ok, err := j.cfg.Book.GetEntry(e.Depth, e.Key)
			if err != nil {
				return fmt.Errorf("reading the scores of task %d, answered again: %w", d.index, err)
			}
			if !ok {
				// A task done has every position in the book: this one
				// was deleted under the job.
				j.log.Warn("a task done has a position missing from the book; not compared with its answer again", "task", d.index, "position", i)
				stored = nil
				break
			}
			stored[i] = int8(v.Score)
		}
		if stored != nil && j.trust.compareDuplicate(d.index, d.result, stored) {
			j.dispatch.refereeing(d.index, true)
		}
	}
	return nil
}

// publishUnparked publishes a copy of each task a new identity unparked
// (trust.unparkFor).
func (j *job) publishUnparked(ctx context.Context) error {
	var again []int
	for _, i := range j.trust.takeUnparked() {
		if j.dispatch.unpark(i) {
			again = append(again, i)
		}
	}
	return j.dispatch.publishAgain(ctx, again)
}

// storeParked stores the parked tasks on the word of their first answers
// (trust.parkedEntries), once they are all the run has left: no other
// identity answered to check them. It returns the positions stored.
func (j *job) storeParked() (int64, error) {
	entries, indexes, err := j.trust.parkedEntries()
	if err != nil {
		return 0, err
	}
	if err := j.cfg.Book.PutBatch(entries); err != nil {
		return 0, fmt.Errorf("writing results: %w", err)
	}
	for _, i := range indexes {
		j.dispatch.done(i)
	}
	j.summary.Solved += int64(len(entries))
	j.log.Info("cross-checks skipped: no other worker answered in this run to check the last tasks; stored on their first answers", "tasks", len(indexes))
	return int64(len(entries)), nil
}

// verdict applies the referee's verdict v (crosscheck.go) on the
// collecting goroutine: trust decides the task (the cross-checks of its
// answers, the quarantines that follow, the counts), the coordinator's
// entries are written and the task done, and the tasks of the workers
// the verdict quarantined are solved again. It returns the number of
// positions newly done. A verdict's error (the referee could not solve:
// the job stopped) is the job's.
func (j *job) verdict(ctx context.Context, v verdict) (int64, error) {
	d, err := j.trust.decide(v)
	if err != nil {
		return 0, err
	}
	if err := j.cfg.Book.PutBatch(d.entries); err != nil {
		return 0, fmt.Errorf("writing the coordinator's scores of a cross-checked task: %w", err)
	}
	j.dispatch.refereeing(d.index, false)
	if d.recheck && j.tasks.done[d.index] {
		// Its scores replaced: nothing newly done.
		undone, err := j.requeueQuarantined(ctx)
		return -undone, err
	}
	j.dispatch.done(d.index)
	newly := int64(len(d.entries))
	j.summary.Solved += newly
	j.summary.Nodes += d.nodes
	undone, err := j.requeueQuarantined(ctx)
	return newly - undone, err
}

// ack acks results whose entries are written.
func (j *job) ack(ctx context.Context, good []*queue.ResultMsg) {
	for _, m := range good {
		if err := m.Ack(ctx); err != nil {
			// The entries are written: the result, delivered again, is a
			// harmless duplicate.
			level := slog.LevelWarn
			if ctx.Err() != nil {
				level = slog.LevelDebug // stopped: no news
			}
			j.log.Log(ctx, level, "acking a stored result", "task", m.Result.TaskID, "error", err)
		}
	}
}

// requeueQuarantined solves again the results that the workers
// quarantined since the last call gave in this job (trust.toSolveAgain):
// each task done is marked not done and published again. It returns the
// positions of the tasks that were done and no longer are.
func (j *job) requeueQuarantined(ctx context.Context) (int64, error) {
	workers, tasks, voided, err := j.trust.toSolveAgain()
	if err != nil {
		return 0, err
	}
	if len(workers) == 0 && len(voided) == 0 {
		return 0, nil
	}
	var undone int64
	var again []int
	for _, i := range tasks {
		if !j.tasks.done[i] {
			continue // not solved yet, or given up on
		}
		n := j.tasks.positions(i)
		undone += n
		j.summary.Requeued += n
		if j.trust.uncredit(i, n) {
			// Stored in this run: no longer solved by it.
			j.summary.Solved -= n
		}
		if j.dispatch.reopen(i) {
			again = append(again, i)
		}
	}
	if undone > 0 {
		j.log.Warn("results of quarantined workers: their tasks are solved again", "workers", workers, "tasks", len(again), "positions", undone)
	}
	for _, i := range voided {
		j.dispatch.refereeing(i, false) // a void case's task is not refereed any more
		j.dispatch.unpark(i)            // nor parked
		if j.dispatch.issued(i) && j.tasks.needed(i) {
			again = append(again, i)
		}
	}
	return undone, j.dispatch.publishAgain(ctx, again)
}

// term terminates a result message that is not stored.
func (j *job) term(m *queue.ResultMsg) {
	if err := m.Term(); err != nil {
		j.log.Warn("terminating a result", "error", err)
	}
}
