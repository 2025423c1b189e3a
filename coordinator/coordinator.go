// Package coordinator runs a generation job: it plans the positions of the
// job, publishes the positions to solve as tasks, checks and stores the
// workers' results, and derives every shallower score from the solved
// ones. The book is the truth: a coordinator started again on a job
// finishes it without redoing what the book holds.
package coordinator

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator/keyfile"
	"github.com/c4book/c4book/queue"
)

// Config is what a coordinator needs to run a job.
type Config struct {
	Spec   Spec
	Book   JobBook
	Queue  Queue
	Stream queue.StreamConfig // task delivery: AckWait, MaxDeliver
	// PlanDir is where jobs keep their plans (see MakePlan): key files of
	// their positions, in a directory named for the job, removed when the
	// job is done. The default value is the directory plans in the book's.
	PlanDir string
	// PlanMemKeys is PlanOptions.MemKeys. The default value is
	// DefaultPlanMemKeys.
	PlanMemKeys int
	// Window is the most tasks published and not answered at a time: a
	// task is published as an earlier one is done, so the stream holds a
	// bounded number of messages whatever the job's size. The default
	// value is DefaultWindow.
	Window int
	// Log receives what happens: the plan, rejected results, failed tasks.
	// The default value (nil) discards it.
	Log *slog.Logger
	// Progress, if not nil, is called as the job advances, at most a few
	// times a second.
	Progress func(Progress)
	// OnResult, if not nil, is called for each result of a worker the
	// coordinator checks, from the goroutine that runs the job: accepted
	// is true for a result whose scores passed the checks (a duplicate
	// included), false for one rejected (Summary.Rejected); a result a
	// cross-check finds wrong later is reported again, rejected. Results of
	// quarantined workers and malformed messages, which name no worker
	// reliably, are not reported. For metrics; the default value (nil)
	// reports nothing.
	OnResult func(worker string, accepted bool)
	// OnQuarantine, if set, is called with a worker quarantined for the
	// job, once the job's record in the book says so: a process that runs
	// the server can then refuse the worker's key, so that it takes no
	// more tasks (a quarantined worker's results are ignored, but every
	// task it takes waits to be published again). Called on the
	// collecting goroutine. The default value (nil) does nothing.
	OnQuarantine func(worker string)
	// StatusEvery is how often the job status is stored in the queue's
	// status bucket and the job record in the book. The default value is
	// 5 seconds.
	StatusEvery time.Duration
	// CrossCheck is the fraction of tasks, 0 to 1, solved twice by
	// different workers and compared (see trust.go). The default value is
	// 0 (no cross-check); the commands set it from queue.cross-check
	// (DefaultCrossCheck unless set).
	CrossCheck float64
	// QuarantineAfter is the number of rejected results after which a
	// worker's results are ignored (one failed cross-check is enough).
	// The default value is 3.
	QuarantineAfter int
	// RefereeTableBytes is the table size of the coordinator's own solver,
	// made when two workers disagree. The default value is
	// solver.DefaultTableBytes.
	RefereeTableBytes int64
	// MinFreeBytes is the free space on the book's disk under which the
	// coordinator stops writing (and taking results) until space is freed:
	// Pebble stops the process when it cannot write its log, so writing
	// must stop before the disk is full. The default value (0) turns the
	// check off; the commands set it from book.min-free (256 MiB unless
	// set).
	MinFreeBytes int64
	// IdleCheck is how long the coordinator waits without a result before
	// it looks for tasks of its job that no worker will get: tasks given up
	// on whose notice it missed (it is sent once, as a plain message), and
	// tasks lost from the stream (purged, or lost with the server's
	// storage), which it publishes again. It looks again as often while
	// nothing comes. The default value is 10 seconds.
	IdleCheck time.Duration
}

// DefaultCrossCheck is the fraction of tasks the commands cross-check
// unless queue.cross-check says otherwise: the price is 2% more solving;
// a worker that lies about L tasks goes unseen with probability about
// 0.98^L (36% for 50 lies, 2% for 200), and once seen, every result it
// gave in the job is solved again (docs/reliability.md). The default of
// queue.cross-check in config is the same.
const DefaultCrossCheck = 0.02

// DefaultWindow is the default Config.Window: enough tasks for many
// workers, each with a task in hand and the next waiting.
const DefaultWindow = 4096

// Progress is where a job stands.
type Progress struct {
	Phase   book.JobState // JobPlanning, JobSolving or JobDeriving
	Done    int64         // positions done in this phase
	Total   int64         // positions of this phase, 0 if not known yet
	Elapsed time.Duration // since the phase began
}

// Summary is what a run of a job did.
type Summary struct {
	JobID         string
	AlreadyDone   bool             // the book held the whole job: nothing was done
	Positions     int64            // positions of the job
	InBook        int64            // positions the book held when the run began
	Solved        int64            // positions solved by workers in this run
	Immediate     int64            // positions scored without a search (a win at once)
	Derived       int64            // positions derived from their children
	Nodes         uint64           // nodes the workers searched for this run's results
	Rejected      int64            // results rejected
	Unsigned      int64            // results on a registered worker's subject its key did not sign: refused, not counted against it
	Ignored       int64            // results of quarantined workers, ignored
	Quarantined   []string         // workers whose results are ignored
	CrossChecked  int64            // tasks whose scores a second solver confirmed (another worker's, or the coordinator's)
	Disagreements int64            // cross-checked tasks whose answers disagreed: the coordinator solved them
	Refereed      int64            // cross-checked tasks the coordinator solved itself: disagreements, and tasks no other worker took a copy of
	CrossSkipped  int64            // cross-checked tasks whose copies one worker alone answered, no other having answered in the run: stored on its word
	Requeued      int64            // positions stored on the word of workers quarantined later, marked not done and solved again
	Overdue       int64            // tasks published again because they were out too long (overdue.go)
	Repaired      []string         // parts of the queue deleted while the job ran, set up again (queue.Conn.RepairQueue)
	ByWorker      map[string]int64 // positions solved in this run, by worker id
	// Workers counts, by worker id (the sender of the results), the
	// results accepted and rejected in this run, and the cross-checks
	// each passed and failed.
	Workers map[string]queue.WorkerResults
	Failed  []FailedTask
	Wall    time.Duration
}

// FailedTask is a task given up on after MaxDeliver deliveries.
type FailedTask struct {
	Index int      // in the plan
	Moves []string // its positions
}

// ErrTasksFailed is returned by Run when tasks of the job were given up on:
// the job is incomplete. Running it again retries them.
var ErrTasksFailed = errors.New("tasks failed")

// Run runs the job cfg.Spec to the end, or until ctx is done. Started again
// after a crash of anything, it finishes the job without redoing what the
// book holds; started on a finished job, it returns at once with
// AlreadyDone set.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	if _, err := cfg.Spec.Validate(); err != nil {
		return Summary{}, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.StatusEvery <= 0 {
		cfg.StatusEvery = 5 * time.Second
	}
	if cfg.QuarantineAfter <= 0 {
		cfg.QuarantineAfter = 3
	}
	if cfg.IdleCheck <= 0 {
		cfg.IdleCheck = 10 * time.Second
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.PlanDir == "" {
		cfg.PlanDir = PlansDir(cfg.Book.Path())
	}
	if cfg.CrossCheck < 0 || cfg.CrossCheck > 1 {
		return Summary{}, fmt.Errorf("cross-check fraction %v: must be between 0 and 1", cfg.CrossCheck)
	}
	if err := cfg.Stream.Validate(); err != nil {
		return Summary{}, err
	}
	j := &job{cfg: cfg, id: cfg.Spec.ID(), dir: filepath.Join(cfg.PlanDir, cfg.Spec.ID()), start: time.Now(), log: cfg.Log.With("job", cfg.Spec.ID()),
		secret: runSecret(rand.Uint64())}
	if err := queue.ValidJobID(j.id); err != nil {
		return Summary{}, fmt.Errorf("job id %q: %w", j.id, err)
	}
	j.summary.JobID = j.id
	j.status = &statusReporter{q: cfg.Queue, log: j.log, every: cfg.StatusEvery, jobID: j.id, start: j.start, counts: j.statusCounts}
	if cfg.MinFreeBytes > 0 {
		j.cfg.Book = &guardedBook{JobBook: cfg.Book, ctx: ctx, min: uint64(cfg.MinFreeBytes), log: j.log,
			waiting: func(on bool) { j.status.waitingForDisk(ctx, on) }}
	}
	j.trust = newTrust(j.cfg, j.secret, j.log, &j.summary, j.keepQuarantined)
	err := j.run(ctx)
	j.summary.Wall = time.Since(j.start)
	return j.summary, err
}

// job is the state of a run of a job.
type job struct {
	cfg     Config
	id      string
	dir     string // the plan's
	log     *slog.Logger
	start   time.Time
	record  book.Job
	runNo   int
	tasks   *taskTable
	stale   bool // tasks of earlier runs had another size: their results cannot be checked
	summary Summary

	secret    runSecret // drawn at each run: which tasks are cross-checked, and the copy ids
	malformed int64     // malformed results dropped in this run

	dispatch *dispatcher // set once the plan is open
	*trust               // embedded: its quarantined workers and rejections read as the job's
	status   *statusReporter
}

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
	leaves, err := keyfile.Open(leavesFile(j.dir))
	if err != nil {
		return err
	}
	defer leaves.Close()
	j.tasks = newTaskTable(leaves, j.cfg.Spec.TaskSize)
	j.dispatch = newDispatcher(j.cfg, j.id, j.runNo, j.secret, j.log, &j.summary, j.tasks)
	j.trust.run, j.trust.tasks = j.runNo, j.tasks
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
	j.log.Info("planned", "positions", st.Positions, "in_book", st.InBook, "to_solve", st.Leaves,
		"scored_at_once", st.Immediate, "took", time.Since(start).Round(time.Millisecond))
	j.progress(book.JobPlanning, st.Positions, st.Positions, start)
	return j.save(book.JobSolving, "")
}

// solve publishes the tasks not done, a window of them at a time, and
// collects results until every task is done or failed.
func (j *job) solve(ctx context.Context) error {
	q := j.cfg.Queue
	if err := j.save(book.JobSolving, ""); err != nil {
		return err
	}
	// Tasks left in the stream by an earlier run are replaced: an earlier
	// run's task that exhausted its deliveries while nobody watched would
	// otherwise never be delivered nor reported. Then the results that came
	// in while no coordinator ran are stored, so that their tasks are not
	// published again: only tasks still in a worker's hands are solved
	// twice.
	if err := retry(ctx, j.log, "removing old tasks", func() error { return q.PurgeTasks(ctx, j.id) }); err != nil {
		return err
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
		return err
	}
	if err := j.drain(ctx, results); err != nil {
		return err
	}
	failures := make(chan uint64, 64)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := retry(ctx, j.log, "watching failed tasks", func() error {
		return q.WatchMaxDeliveries(watchCtx, func(seq uint64) {
			select {
			case failures <- seq:
			case <-watchCtx.Done():
			}
		})
	}); err != nil {
		return err
	}
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
	j.status.put(ctx, book.JobSolving, doneLeaves, total)

	lastResult := time.Now() // or the last look for stranded tasks
	for j.tasks.pending > 0 {
		select {
		case seq := <-failures:
			j.dispatch.taskFailed(ctx, seq)
			if err := j.dispatch.publishMore(ctx); err != nil {
				return err
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
			j.status.put(context.WithoutCancel(ctx), book.JobStopped, doneLeaves, total)
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
	j.record.Solved = doneLeaves
	j.summary.Failed = j.dispatch.appendFailed(j.summary.Failed[:0])
	if failed := len(j.summary.Failed); failed > 0 {
		msg := fmt.Sprintf("%d of %d tasks failed after %d deliveries each; run the same command again to retry them", failed, j.tasks.Len(), j.cfg.Stream.MaxDeliver)
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
		j.summary.Rejected++
		j.malformed++
		if floodLogged(j.malformed) {
			j.log.Warn("malformed result dropped", "sender", d.Sender, "subject", d.Subject, "error", d.Err, "dropped so far", j.malformed)
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
// done. Rejected results are terminated. A task the job still needs always
// has a copy out: when the result of its last copy is rejected, ignored or
// not enough (a cross-check awaiting a second worker), a new copy is
// published (the worker that took the task may have acked it).
func (j *job) collect(ctx context.Context, msgs []*queue.ResultMsg) (int64, error) {
	var entries []book.Entry
	var good []*queue.ResultMsg
	var answered []int
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
		if j.dispatch.answered(index) {
			answered = append(answered, index)
		}
		a, err := j.trust.admit(ctx, m)
		if err != nil {
			return 0, err
		}
		if a.refused != nil {
			j.term(m)
			continue
		}
		good = append(good, m)
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
	return newly, nil
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
