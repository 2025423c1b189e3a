package coordinator

import (
	"cmp"
	"context"
	"errors"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// memBook is a book in memory, for unit tests of the coordinator's logic.
type memBook struct {
	mu      sync.Mutex
	entries map[[2]uint64]book.Value // depth, canonical key
	jobs    map[string]book.Job
	writes  int // batches written
}

func newMemBook() *memBook {
	return &memBook{entries: map[[2]uint64]book.Value{}, jobs: map[string]book.Job{}}
}

func (m *memBook) PutBatch(entries []book.Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range entries {
		m.entries[[2]uint64{uint64(e.Depth), e.Key}] = e.Value
	}
	m.writes++
	return nil
}

func (m *memBook) Entries(minDepth, maxDepth int) iter.Seq2[book.Entry, error] {
	m.mu.Lock()
	var all []book.Entry
	for k, v := range m.entries {
		if d := int(k[0]); d >= minDepth && d <= maxDepth {
			all = append(all, book.Entry{Depth: d, Key: k[1], Value: v})
		}
	}
	m.mu.Unlock()
	slices.SortFunc(all, func(a, b book.Entry) int {
		return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.Key, b.Key))
	})
	return func(yield func(book.Entry, error) bool) {
		for _, e := range all {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func (m *memBook) NewReader() (*book.Reader, error) { return nil, errors.New("memBook: no reader") }

func (m *memBook) GetEntry(depth int, key uint64) (book.Value, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.entries[[2]uint64{uint64(depth), key}]
	return v, ok, nil
}

func (m *memBook) Job(id string) (book.Job, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	return j, ok, nil
}

func (m *memBook) PutJob(j book.Job) (book.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.jobs[j.ID] = j
	return j, nil
}

func (m *memBook) Path() string { return "memBook" }

func (m *memBook) Worker(name string) (book.Worker, bool, error) { return book.Worker{}, false, nil }

// score returns the score the book holds for p.
func (m *memBook) score(p solver.Position) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.entries[[2]uint64{uint64(p.Moves()), p.CanonicalKey()}]
	return v.Score, ok
}

var _ JobBook = (*memBook)(nil)

// fakeQueue records the tasks published; its other methods do nothing.
type fakeQueue struct {
	published []queue.Task
}

func (q *fakeQueue) EnsureStreams(context.Context, queue.StreamConfig) error { return nil }
func (q *fakeQueue) PurgeTasks(context.Context, string) error                { return nil }
func (q *fakeQueue) PublishTasks(_ context.Context, tasks []queue.Task) error {
	q.published = append(q.published, tasks...)
	return nil
}
func (q *fakeQueue) Results(context.Context, string) (*queue.ResultSource, error) {
	return nil, errors.New("fakeQueue: no results")
}
func (q *fakeQueue) WatchMaxDeliveries(context.Context, func(uint64)) error { return nil }
func (q *fakeQueue) TaskBySeq(context.Context, uint64) (queue.Task, error) {
	return queue.Task{}, errors.New("fakeQueue: no task")
}
func (q *fakeQueue) DeleteTask(context.Context, uint64) error { return nil }
func (q *fakeQueue) LanesWaiting(context.Context) ([]uint64, error) {
	return make([]uint64, queue.Lanes), nil
}
func (q *fakeQueue) RepairQueue(context.Context, queue.StreamConfig, string) ([]string, error) {
	return nil, nil
}
func (q *fakeQueue) RemoveJob(context.Context, string) error { return nil }
func (q *fakeQueue) StrandedTasks(context.Context, string) ([]uint64, bool, error) {
	return nil, false, nil
}
func (q *fakeQueue) PutJobStatus(context.Context, queue.JobStatus) error { return nil }

var _ Queue = (*fakeQueue)(nil)

// replies records the replies to a result.
type replies struct{ acked, termed int }

func (r *replies) InProgress() error         { return nil }
func (r *replies) Ack(context.Context) error { r.acked++; return nil }
func (r *replies) Nak(time.Duration) error   { return nil }
func (r *replies) Term() error               { r.termed++; return nil }
func (r *replies) String() string            { return "" }
func resultMsg(r queue.Result, rep *replies) *queue.ResultMsg {
	return queue.NewResultMsg(r, 1, 1, rep)
}

// testJob returns a job of spec in its first run, with its plan made on
// a memBook, its first tasks published to a fakeQueue, and its referee
// started (stopped when tb ends): apply its verdicts with applyVerdict.
func testJob(tb testing.TB, spec Spec, cfg Config) (*job, *memBook, *fakeQueue) {
	tb.Helper()
	mb, fq := newMemBook(), &fakeQueue{}
	dir := tb.TempDir()
	if _, err := MakePlan(context.Background(), spec, mb, dir, nil); err != nil {
		tb.Fatal(err)
	}
	leaves, err := openLeaves(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { leaves.Close() })
	cfg.Spec, cfg.Book, cfg.Queue = spec, mb, fq
	cfg.Log = slog.New(slog.DiscardHandler)
	cfg.Window = max(cfg.Window, 1<<20)
	cfg.QuarantineAfter = max(cfg.QuarantineAfter, 3)
	cfg.RefereeTableBytes = 1 << 20
	j := &job{cfg: cfg, id: spec.ID(), dir: dir, log: cfg.Log, runNo: 1, secret: 1}
	j.trust = newTrust(cfg, j.secret, j.log, &j.summary, j.keepQuarantined)
	j.openTasks(newTaskTable(leaves, spec.TaskSize))
	j.dispatch.watch = newOverdueWatch(j.tasks.Len(), time.Second)
	if err := j.dispatch.publishMore(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(j.trust.startReferee(context.Background()))
	return j, mb, fq
}

// applyVerdict waits for the referee's next verdict and applies it, as
// the collecting loop does, and returns what j.verdict returns.
func applyVerdict(tb testing.TB, j *job) (int64, error) {
	tb.Helper()
	select {
	case v := <-j.trust.cross.verdicts():
		return j.verdict(context.Background(), v)
	case <-time.After(time.Minute):
		tb.Fatal("no verdict from the referee in a minute")
		return 0, nil
	}
}

// solvedResult returns the result of task index by worker, with exact
// scores.
func solvedResult(tb testing.TB, j *job, index int, worker string) queue.Result {
	tb.Helper()
	keys, err := j.tasks.keys(index)
	if err != nil {
		tb.Fatal(err)
	}
	s, _ := solver.New(j.cfg.Spec.Board, 1<<20)
	scores := make([]int8, len(keys))
	for i, k := range keys {
		p, _ := j.cfg.Spec.Board.PositionFromKey(k)
		scores[i] = int8(s.Solve(p))
	}
	return queue.Result{JobID: j.id, TaskID: taskID(j.runNo, 0, index), WorkerID: worker, Keys: slices.Clone(keys), Scores: scores}
}
