package queue

import (
	"testing"
	"time"

	"github.com/c4book/c4book/solver"
)

// BenchmarkConn_PublishTasks publishes b.N tasks of 64 positions, in
// calls of up to 10,000 tasks, on an in-process server. Run with
// -benchtime=100000x for the figure of a depth-12 job's first wave.
func BenchmarkConn_PublishTasks(b *testing.B) {
	_, c := setupQueue(b, testStreams)
	keys := positionKeys(b, solver.Standard, 64)
	tasks := make([]Task, b.N)
	for i := range tasks {
		tasks[i] = Task{JobID: "bench", TaskID: uint64(i), Width: 7, Height: 6, Keys: keys}
	}
	ctx := testCtx(b, 10*time.Minute)
	b.ResetTimer()
	for start := 0; start < len(tasks); start += 10_000 {
		if err := c.PublishTasks(ctx, tasks[start:min(start+10_000, len(tasks))]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkTaskSource_Next takes and acks b.N tasks one at a time, as a
// single worker thread does.
func BenchmarkTaskSource_Next(b *testing.B) {
	s, c := setupQueue(b, testStreams)
	keys := positionKeys(b, solver.Standard, 64)
	tasks := make([]Task, b.N)
	for i := range tasks {
		tasks[i] = Task{JobID: "bench", TaskID: uint64(i), Width: 7, Height: 6, Keys: keys}
	}
	ctx := testCtx(b, 10*time.Minute)
	if err := c.PublishTasks(ctx, tasks); err != nil {
		b.Fatal(err)
	}
	src := taskSource(b, connectTo(b, s, "worker"))
	b.ResetTimer()
	for range b.N {
		m, err := src.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Ack(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}
