package queue

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/c4book/c4book/solver"
)

// positionKeys returns the keys of the first n positions of board b in
// the order of a breadth-first walk from the empty board.
func positionKeys(tb testing.TB, b *solver.Board, n int) []uint64 {
	tb.Helper()
	keys := make([]uint64, 0, n)
	level := []solver.Position{b.NewPosition()}
	for len(keys) < n && len(level) > 0 {
		var next []solver.Position
		for _, p := range level {
			if len(keys) == n {
				break
			}
			keys = append(keys, p.Key())
			for col := 0; col < b.Width(); col++ {
				if p.CanPlay(col) && !p.IsWinningMove(col) {
					q := p
					q.Play(col)
					next = append(next, q)
				}
			}
		}
		level = next
	}
	if len(keys) < n {
		tb.Fatalf("board %v has fewer than %d positions", b, n)
	}
	return keys
}

// testTask returns task id of job with n positions of the 7x6 board.
func testTask(tb testing.TB, job string, id uint64, n int) Task {
	tb.Helper()
	return Task{JobID: job, TaskID: id, Width: 7, Height: 6, Keys: positionKeys(tb, solver.Standard, n)}
}

// resultFor returns worker's result of t, every score 1.
func resultFor(t Task, worker string) Result {
	scores := make([]int8, len(t.Keys))
	for i := range scores {
		scores[i] = 1
	}
	return Result{JobID: t.JobID, TaskID: t.TaskID, WorkerID: worker, Scores: scores, Keys: t.Keys, Nodes: 1000, Elapsed: time.Millisecond}
}

// testCtx returns a context that ends with the test, and at the latest
// after d: the generous deadline of a wait for an event.
func testCtx(tb testing.TB, d time.Duration) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// startServer starts an embedded server with a store in a temporary
// directory (unless o has one) and shuts it down when the test ends.
func startServer(tb testing.TB, o ServerOptions) *Server {
	tb.Helper()
	if o.StoreDir == "" {
		o.StoreDir = tb.TempDir()
	}
	s, err := StartServer(o)
	if err != nil {
		tb.Fatalf("StartServer: %v", err)
	}
	tb.Cleanup(s.Shutdown)
	return s
}

// connectTo connects in-process to s and closes the connection when the
// test ends.
func connectTo(tb testing.TB, s *Server, name string) *Conn {
	tb.Helper()
	c, err := s.Connect(name)
	if err != nil {
		tb.Fatalf("Connect(%s): %v", name, err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// testStreams is the stream configuration of tests that do not wait for
// redeliveries.
var testStreams = StreamConfig{AckWait: 30 * time.Second, MaxDeliver: 3}

// setupQueue starts an in-process server, connects a coordinator to it and
// creates the streams with cfg.
func setupQueue(tb testing.TB, cfg StreamConfig) (*Server, *Conn) {
	tb.Helper()
	s := startServer(tb, ServerOptions{})
	c := connectTo(tb, s, "coordinator")
	if err := c.EnsureStreams(testCtx(tb, 30*time.Second), cfg); err != nil {
		tb.Fatalf("EnsureStreams: %v", err)
	}
	return s, c
}

// taskSource binds c to the task consumer.
func taskSource(tb testing.TB, c *Conn) *TaskSource {
	tb.Helper()
	src, err := c.Tasks(testCtx(tb, 30*time.Second))
	if err != nil {
		tb.Fatalf("Tasks: %v", err)
	}
	return src
}

// publishTasks opens the jobs of tasks (each once) and publishes tasks,
// or fails the test.
func publishTasks(tb testing.TB, c *Conn, tasks ...Task) {
	tb.Helper()
	opened := map[string]bool{}
	for _, t := range tasks {
		if !opened[t.JobID] {
			openJob(tb, c, t.JobID)
			opened[t.JobID] = true
		}
	}
	if err := c.PublishTasks(testCtx(tb, 60*time.Second), tasks); err != nil {
		tb.Fatalf("PublishTasks: %v", err)
	}
}

// openJob makes the result stream store job's results, as a coordinator
// does (Conn.Results) before it publishes the job's tasks.
func openJob(tb testing.TB, c *Conn, job string) {
	tb.Helper()
	if _, err := c.openJobSubjects(testCtx(tb, 30*time.Second), job); err != nil {
		tb.Fatalf("opening job %s: %v", job, err)
	}
}

// nextTask waits up to a generous deadline for a task.
func nextTask(tb testing.TB, src *TaskSource) *TaskMsg {
	tb.Helper()
	m, err := src.Next(testCtx(tb, 30*time.Second))
	if err != nil {
		tb.Fatalf("Next: %v", err)
	}
	return m
}

// streamMsgs returns the number of messages in stream name.
func streamMsgs(tb testing.TB, c *Conn, name string) uint64 {
	tb.Helper()
	ctx := testCtx(tb, 10*time.Second)
	s, err := c.stream(ctx, name)
	if err != nil {
		tb.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		tb.Fatalf("stream info %s: %v", name, err)
	}
	return info.State.Msgs
}

// logBuffer is a slog handler's output, safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was logged so far.
func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logger returns a logger writing text lines into b.
func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// eventually polls cond every 50ms until it holds, failing the test if it
// still does not after d (a generous deadline, not a timing check).
func eventually(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: still not %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
