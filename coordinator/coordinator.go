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
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/c4book/c4book/book"
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
	// DefaultStatusEvery.
	StatusEvery time.Duration
	// CrossCheck is the fraction of tasks, 0 to 1, solved twice by
	// different workers and compared (see trust.go). The default value is
	// 0 (no cross-check); the commands set it from queue.cross-check
	// (DefaultCrossCheck unless set).
	CrossCheck float64
	// QuarantineAfter is the number of rejected results after which a
	// worker's results are ignored (one failed cross-check is enough).
	// The default value is DefaultQuarantineAfter.
	QuarantineAfter int
	// RefereeTableBytes is the table size of the coordinator's own solver,
	// the referee's, made at its first solve (two workers disagree): it
	// solves in a goroutine of its own, beside the collecting one. The
	// default value is solver.DefaultTableBytes.
	RefereeTableBytes int64
	// MinFreeBytes is the free space on the book's disk under which the
	// coordinator stops writing (and taking results) until space is freed:
	// Pebble stops the process when it cannot write its log, so writing
	// must stop before the disk is full. The default value (0) turns the
	// check off; the commands set it from book.min-free
	// (DefaultMinFreeBytes unless set).
	MinFreeBytes int64
	// IdleCheck is how long the coordinator waits without a result before
	// it looks for tasks of its job that no worker will get: tasks given up
	// on whose notice it missed (it is sent once, as a plain message), and
	// tasks lost from the stream (purged, or lost with the server's
	// storage), which it publishes again. It looks again as often while
	// nothing comes. The default value is DefaultIdleCheck.
	IdleCheck time.Duration

	// refereeGate, if not nil, is called by the referee before each of its
	// solves, with the task's keys: its error is the solve's. For tests
	// (SetRefereeGate in export_test.go), which hold a solve with it.
	refereeGate func(ctx context.Context, keys []uint64) error

	// noTailCopies turns tail copies off (overdue.go), so that a test
	// of the overdue path sees tasks held to the job's end go overdue
	// (DisableTailCopies in export_test.go).
	noTailCopies bool
}

// DefaultCrossCheck is the fraction of tasks the commands cross-check
// unless queue.cross-check says otherwise: the price is 2% more solving;
// a worker that lies about L tasks goes unseen with probability about
// 0.98^L (36% for 50 lies, 2% for 200), and once seen, every result it
// gave in the job is solved again (docs/reliability.md). It is the
// default of queue.cross-check.
const DefaultCrossCheck = 0.02

// DefaultQuarantineAfter is the default Config.QuarantineAfter and of
// queue.quarantine-after: a worker's odd wrong result (a task solved by
// a bad machine) is forgiven twice, a third is not.
const DefaultQuarantineAfter = 3

// DefaultMinFreeBytes is the default of book.min-free, which the commands
// give Config.MinFreeBytes: room for a few of Pebble's flushes and
// compactions of a large book.
const DefaultMinFreeBytes = 256 << 20

// DefaultStatusEvery is the default Config.StatusEvery: a status a few
// seconds old is fresh enough to watch a job by, and storing it costs
// next to nothing. c4book status --watch reports as often by default.
const DefaultStatusEvery = 5 * time.Second

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

// DefaultIdleCheck is the default Config.IdleCheck: a result comes every
// few seconds on a job that runs, and a look for lost tasks costs a
// request to the server.
const DefaultIdleCheck = 10 * time.Second

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
	Rejected      int64            // results of workers rejected, each counted against its worker (Workers)
	Malformed     int64            // messages on the result subjects that are no result (do not decode): dropped, counted against no worker
	Unsigned      int64            // results on a registered worker's subject its key did not sign: refused, not counted against it
	Ignored       int64            // results of quarantined workers, ignored
	Quarantined   []string         // workers whose results are ignored
	CrossChecked  int64            // tasks whose scores a second solver confirmed (another worker's, or the coordinator's)
	Disagreements int64            // cross-checked tasks whose answers disagreed: the coordinator solved them
	Refereed      int64            // cross-checked tasks the coordinator solved itself: disagreements, and tasks no other worker took a copy of
	CrossSkipped  int64            // cross-checked tasks no other identity came to check: stored on the first answer (parked tasks, taskTable.parked)
	Requeued      int64            // positions stored on the word of workers quarantined later, marked not done and solved again
	Overdue       int64            // tasks published again because they were out too long (overdue.go)
	TailCopies    int64            // copies of tasks out for long at the job's end, for idle workers: stragglers (overdue.go)
	Duplicates    int64            // results accepted of tasks already decided or being refereed: tasks solved twice (redelivered, overdue, a worker that came back late)
	Compared      int64            // of the Duplicates, those of tasks done compared with the scores stored: each one that differs goes to the coordinator's solver (a Disagreement)
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
		cfg.StatusEvery = DefaultStatusEvery
	}
	if cfg.QuarantineAfter <= 0 {
		cfg.QuarantineAfter = DefaultQuarantineAfter
	}
	if cfg.IdleCheck <= 0 {
		cfg.IdleCheck = DefaultIdleCheck
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
