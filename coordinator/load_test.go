package coordinator_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/solver"
)

// loadHeapBound bounds the Go heap in use of the process running
// TestRun_load, sampled: the coordinator's state for the job is tens of
// bytes a task, and the embedded server, the book's caches and the fake
// workers hold what they hold whatever the job's size; the heap in use
// peaks at about twice what is live (the collector's default pace), and
// the bound leaves that more than twice again. State kept for each of the
// 240,000 tasks or results until the job's end (a message is a few hundred
// bytes) would cross it.
const loadHeapBound = 256 << 20

// TestRun_load puts a job of more than 100,000 one-position tasks through
// one coordinator and four fast fake workers: no task or result is lost,
// every position of the job is in the book, and the Go heap in use, server,
// book cache and workers included, stays under loadHeapBound. Long:
// skipped with -short. Not parallel: the heap is the whole process's.
func TestRun_load(t *testing.T) {
	if testing.Short() {
		t.Skip("a job of 240,000 one-position tasks")
	}
	board := solver.Standard
	c := newCluster(t, board)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []func()
	for i := range 4 {
		waits = append(waits, c.fakeWorker(t, ctx, fmt.Sprintf("f%d", i)))
	}
	spec := coordinator.Spec{Board: board, Depth: 9, TaskSize: 1}
	var peak atomic.Uint64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for ctx.Err() == nil {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	sum, err := c.runJob(ctx, t, spec)
	cancel()
	<-sampled
	for _, w := range waits {
		w()
	}
	if err != nil {
		t.Fatal(err)
	}
	if sum.Solved < 100000 {
		t.Fatalf("only %d tasks", sum.Solved)
	}
	// Every position of the job is in the book: count them, depth by depth.
	st, err := c.book.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var entries int64
	for _, d := range st.Depths {
		entries += d.Entries
	}
	if entries != sum.Positions {
		t.Errorf("book holds %d entries, the job %d positions", entries, sum.Positions)
	}
	t.Logf("%d positions, %d tasks solved, %d rejected; peak Go heap %d MiB (%.0f bytes a position, server, book cache and workers included)",
		sum.Positions, sum.Solved, sum.Rejected, peak.Load()>>20, float64(peak.Load())/float64(sum.Positions))
	if peak.Load() > loadHeapBound {
		t.Errorf("peak Go heap in use %d MiB, over the bound of %d MiB", peak.Load()>>20, loadHeapBound>>20)
	}
}
