package coordinator_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// fakeWorker answers every task at once with draws (a score every position
// can have), so that a benchmark measures the coordinator and NATS, not
// the solver.
func (c *cluster) fakeWorker(tb testing.TB, ctx context.Context, id string) (wait func()) {
	return c.liar(tb, ctx, id, func(t *queue.Task) []int8 { return make([]int8, len(t.Keys)) })
}

// BenchmarkRun_fakeWorkers measures how many results one coordinator
// stores a second, behind fast fake workers: where a coordinator stops
// scaling. Run with -benchtime=1x.
func BenchmarkRun_fakeWorkers(b *testing.B) {
	for _, tc := range []struct{ workers, taskSize int }{{8, 1}, {8, 16}, {8, 64}} {
		b.Run(fmt.Sprintf("workers=%d/task=%d", tc.workers, tc.taskSize), func(b *testing.B) {
			for b.Loop() {
				board := solver.Standard
				c := newCluster(b, board)
				ctx, cancel := context.WithCancel(context.Background())
				var waits []func()
				for i := range tc.workers {
					waits = append(waits, c.fakeWorker(b, ctx, fmt.Sprintf("f%d", i)))
				}
				spec := coordinator.Spec{Board: board, Depth: 8, TaskSize: tc.taskSize}
				var solveTime time.Duration
				var tasks, leaves int64
				cfg := coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(b),
					Progress: func(p coordinator.Progress) {
						if p.Phase == book.JobSolving && p.Total > 0 && p.Done == p.Total {
							solveTime, leaves = p.Elapsed, p.Total
						}
					}}
				sum, err := coordinator.Run(ctx, cfg)
				cancel()
				for _, w := range waits {
					w()
				}
				if err != nil {
					b.Fatal(err)
				}
				tasks = (leaves + int64(tc.taskSize) - 1) / int64(tc.taskSize)
				b.ReportMetric(float64(leaves)/solveTime.Seconds(), "positions/s")
				b.ReportMetric(float64(tasks)/solveTime.Seconds(), "results/s")
				b.ReportMetric(sum.Wall.Seconds(), "job-s")
			}
		})
	}
}

// BenchmarkRun_grouping compares a generation job, whose worker keeps its
// table warm over tasks of neighbouring leaves, with solving the same
// leaves one by one with a cleared table each: the ratios of nodes and of
// seconds are what task grouping and the warm table save. One worker
// thread, 64 MiB table. Run with -benchtime=1x.
func BenchmarkRun_grouping(b *testing.B) {
	board := solver.Standard
	spec := coordinator.Spec{Board: board, Root: "445344363", Depth: 14, TaskSize: 64}
	for b.Loop() {
		c := newCluster(b, board)
		ctx, cancel := context.WithCancel(context.Background())
		wait := c.startCountingWorker(b, ctx, "w", &atomic.Int64{})
		start := time.Now()
		var solveTime time.Duration
		var leaves int64
		cfg := coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(b),
			Progress: func(p coordinator.Progress) {
				if p.Phase == book.JobSolving && p.Total > 0 && p.Done == p.Total {
					solveTime, leaves = p.Elapsed, p.Total
				}
			}}
		sum, err := coordinator.Run(ctx, cfg)
		cancel()
		wait()
		if err != nil {
			b.Fatal(err)
		}
		jobTime := time.Since(start)

		// The same leaves, one by one, each with a cleared table.
		scratch := newScratchBook(b, board)
		keys, _ := coordinator.PlanTasks(b, spec, scratch)
		s, _ := solver.New(board, solver.DefaultTableBytes)
		var coldNodes uint64
		var coldTime time.Duration
		for _, k := range keys {
			p, _ := board.PositionFromKey(k)
			s.Table().Clear()
			s.ResetNodes()
			t0 := time.Now()
			s.Solve(p)
			coldTime += time.Since(t0)
			coldNodes += s.Nodes()
		}
		b.ReportMetric(float64(leaves), "leaves")
		b.ReportMetric(float64(sum.Nodes), "job-nodes")
		b.ReportMetric(solveTime.Seconds(), "job-solve-s")
		b.ReportMetric(jobTime.Seconds(), "job-s")
		b.ReportMetric(float64(coldNodes), "cold-nodes")
		b.ReportMetric(coldTime.Seconds(), "cold-s")
		b.ReportMetric(float64(coldNodes)/float64(sum.Nodes), "node-ratio")
		b.ReportMetric(coldTime.Seconds()/solveTime.Seconds(), "time-ratio")
	}
}

// BenchmarkRun_storeResults measures the coordinator alone: the results of
// every task of a job are in the result stream before it starts (as after
// a restart), and it stores them (checks, synced batches, acks) before
// publishing anything. Results a second is where one coordinator stops
// scaling, whatever the number of workers. Run with -benchtime=1x.
func BenchmarkRun_storeResults(b *testing.B) {
	for _, taskSize := range []int{1, 16} {
		b.Run(fmt.Sprintf("task=%d", taskSize), func(b *testing.B) {
			for b.Loop() {
				board := solver.Standard
				c := newCluster(b, board)
				spec := coordinator.Spec{Board: board, Depth: 8, TaskSize: taskSize}
				leaves, tasks := coordinator.PlanTasks(b, spec, newScratchBook(b, board))
				for i, keys := range tasks {
					r := queue.Result{JobID: spec.ID(), TaskID: 1<<40 | uint64(i), WorkerID: "w", Keys: keys, Scores: make([]int8, len(keys))}
					if err := c.conn.PublishResult(context.Background(), r); err != nil {
						b.Fatal(err)
					}
				}
				var storing time.Duration
				cfg := coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(b),
					Progress: func(p coordinator.Progress) {
						if p.Phase == book.JobSolving && p.Total > 0 && p.Done == p.Total {
							storing = max(storing, p.Elapsed)
						}
					}}
				start := time.Now()
				sum, err := coordinator.Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				if sum.Solved != int64(len(leaves)) {
					b.Fatalf("stored %d of %d", sum.Solved, len(leaves))
				}
				b.ReportMetric(float64(len(tasks))/storing.Seconds(), "results/s")
				b.ReportMetric(float64(len(leaves))/storing.Seconds(), "positions/s")
				b.ReportMetric(time.Since(start).Seconds(), "job-s")
			}
		})
	}
}
