package coordinator

import (
	"context"
	"iter"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
)

// The parts of a book and of the queue the coordinator uses: a
// *book.Book and a *queue.Conn, or fakes in tests.

// PlanBook is the part of a book the planner uses.
type PlanBook interface {
	Entries(minDepth, maxDepth int) iter.Seq2[book.Entry, error]
	PutBatch(entries []book.Entry) error
}

// DeriveBook is the part of a book derivation uses.
type DeriveBook interface {
	NewReader() (*book.Reader, error)
	PutBatch(entries []book.Entry) error
}

// JobBook is the part of a book a coordinator uses: entries, the job
// record, and the worker registry (whose numbers the solved entries
// record); GetEntry reads the scores stored of a task answered again.
type JobBook interface {
	PlanBook
	DeriveBook
	Job(id string) (book.Job, bool, error)
	PutJob(j book.Job) (book.Job, error)
	Worker(name string) (book.Worker, bool, error)
	GetEntry(depth int, key uint64) (book.Value, bool, error)
	Path() string
}

// Queue is the part of the queue a coordinator uses.
type Queue interface {
	EnsureStreams(ctx context.Context, cfg queue.StreamConfig) error
	PurgeTasks(ctx context.Context, job string) error
	PublishTasks(ctx context.Context, tasks []queue.Task) error
	Results(ctx context.Context, job string) (*queue.ResultSource, error)
	WatchMaxDeliveries(ctx context.Context, fn func(streamSeq uint64)) error
	TaskBySeq(ctx context.Context, seq uint64) (queue.Task, error)
	DeleteTask(ctx context.Context, seq uint64) error
	StrandedTasks(ctx context.Context, job string) (seqs []uint64, idle bool, err error)
	RemoveJob(ctx context.Context, job string) error
	RepairQueue(ctx context.Context, cfg queue.StreamConfig, job string) ([]string, error)
	LanesWaiting(ctx context.Context) ([]uint64, error)
	PutJobStatus(ctx context.Context, s queue.JobStatus) error
}

// The book and the queue the commands give a coordinator.
var (
	_ JobBook = (*book.Book)(nil)
	_ Queue   = (*queue.Conn)(nil)
)

// Results is where a coordinator takes the results of its job: a
// *queue.ResultSource.
type Results interface {
	Fetch(ctx context.Context, max int) ([]*queue.ResultMsg, []*queue.DecodeError, error)
}

var _ Results = (*queue.ResultSource)(nil)
