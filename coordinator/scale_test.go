package coordinator_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// standInScore is the stand-in for a worker's solver in the scale
// benchmark and its test: a cheap deterministic score, -2 to 2, made from
// a leaf's key. It is not the leaf's score. It lets the coordinator's own
// share of a job (planning, publishing, storing results, deriving) be
// measured on jobs whose real solving would take weeks; it lives in this
// test file only, and writes only to the books of tests.
func standInScore(key uint64) int8 {
	h := key * 0x9E3779B97F4A7C15 // Fibonacci hashing: neighbouring keys spread
	return int8(h>>61)%5 - 2
}

// standInWorker answers every task at once with standInScore.
func (c *cluster) standInWorker(tb testing.TB, ctx context.Context, id string) (wait func()) {
	return c.liar(tb, ctx, id, func(t *queue.Task) []int8 {
		s := make([]int8, len(t.Keys))
		for i, k := range t.Keys {
			s[i] = standInScore(k)
		}
		return s
	})
}

// TestRun_standIn runs a job whose leaves are scored by standInScore and
// checks every position of the book against a plain minimax over the same
// leaf scores: what the scale benchmark measures is a whole, right job.
func TestRun_standIn(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c := newCluster(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	wait1, wait2 := c.standInWorker(t, ctx, "s1"), c.standInWorker(t, ctx, "s2")
	spec := coordinator.Spec{Board: b, Depth: 9, TaskSize: 64}
	sum, err := coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t),
		PlanMemKeys: 4000}) // spilled runs: the path of large jobs
	cancel()
	wait1()
	wait2()
	if err != nil {
		t.Fatal(err)
	}

	memo := map[uint64]int{}
	var minimax func(p solver.Position) int
	minimax = func(p solver.Position) int {
		k := p.CanonicalKey()
		if v, ok := memo[k]; ok {
			return v
		}
		best := -solver.MaxScore - 1
		if p.Moves() < spec.Depth {
			// Every child is a position of the job, also below a
			// position won at once.
			for _, child := range p.Children() {
				if !child.LastMoveWon() {
					best = max(best, -minimax(child))
				}
			}
		}
		var v int
		switch {
		case p.CanWinNext():
			v = b.WinNowScore(p.Moves())
		case p.IsFull():
			v = 0
		case p.Moves() == spec.Depth:
			v = int(standInScore(k))
		default:
			v = best
		}
		memo[k] = v
		return v
	}
	root, _ := b.Parse("")
	minimax(root)
	if int64(len(memo)) != sum.Positions {
		t.Errorf("minimax saw %d positions, the job %d", len(memo), sum.Positions)
	}
	for k, want := range memo {
		p, err := b.PositionFromKey(k)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := c.book.Get(p)
		if err != nil || !ok || int(got.Score) != want {
			t.Fatalf("book %d (held %v, %v), minimax %d:\n%v", got.Score, ok, err, want, p)
		}
	}
}

// BenchmarkRun_scale measures the coordinator's share of the book of the
// whole 7x6 board to a depth: planning, publishing every task and storing
// its result, and deriving, with two stand-in workers that answer at once
// (standInScore), so that no solving is measured. It reports each phase's
// seconds and the peak resident memory of the process (which also holds
// the embedded NATS server and the stand-ins). The book and the server
// are opened as `c4book generate` opens them. Run one depth at a time:
//
//	go test -run '^$' -bench 'Run_scale/depth=12$' -benchtime 1x ./coordinator
func BenchmarkRun_scale(b *testing.B) {
	for _, depth := range []int{8, 10, 12, 13, 14} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			for b.Loop() {
				benchScale(b, depth)
			}
		})
	}
}

func benchScale(b *testing.B, depth int) {
	board := solver.Standard
	c := newClusterWith(b, board, nil) // the book's default options, as generate opens it
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait1, wait2 := c.standInWorker(b, ctx, "s1"), c.standInWorker(b, ctx, "s2")
	defer func() { cancel(); wait1(); wait2() }()
	resetPeakRSS(b)
	heapPeak := sampleHeapPeak(ctx)

	var mu sync.Mutex
	start := time.Now()
	var planned, solving, deriving, derived time.Time
	spec := coordinator.Spec{Board: board, Depth: depth, TaskSize: 64}
	cfg := coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(b),
		Progress: func(p coordinator.Progress) {
			mu.Lock()
			defer mu.Unlock()
			now := time.Now()
			switch {
			case p.Phase == book.JobPlanning && p.Total > 0 && p.Done == p.Total:
				planned = now
			case p.Phase == book.JobSolving && solving.IsZero():
				solving = now
			case p.Phase == book.JobDeriving && deriving.IsZero():
				deriving = now
			case p.Phase == book.JobDeriving && p.Total > 0 && p.Done == p.Total:
				derived = now
			}
		}}
	sum, err := coordinator.Run(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(sum.Positions), "positions")
	b.ReportMetric(float64(sum.Solved), "leaves")
	b.ReportMetric(planned.Sub(start).Seconds(), "plan-s")
	b.ReportMetric(deriving.Sub(solving).Seconds(), "publish+store-s")
	b.ReportMetric(derived.Sub(deriving).Seconds(), "derive-s")
	b.ReportMetric(sum.Wall.Seconds(), "job-s")
	b.ReportMetric(float64(peakRSS(b))/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(heapPeak())/(1<<20), "peak-heap-MiB")
}

// sampleHeapPeak samples the bytes of live and not yet swept Go heap
// objects every 50 ms until ctx is done or peak is called; peak returns
// the most seen. The Go heap holds the coordinator's state, the embedded
// server's and the stand-ins'; Pebble's cache and memtables are outside
// it when cgo is on.
func sampleHeapPeak(ctx context.Context) (peak func() uint64) {
	var most atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > most.Load() {
				most.Store(v)
			}
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return most.Load()
	}
}

// resetPeakRSS resets the peak resident memory the kernel keeps for this
// process (Linux: 5 written to /proc/self/clear_refs).
func resetPeakRSS(tb testing.TB) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		tb.Skipf("cannot measure peak memory here: %v", err)
	}
}

// peakRSS returns the peak resident memory of this process since the last
// resetPeakRSS, in bytes (VmHWM of /proc/self/status).
func peakRSS(tb testing.TB) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb << 10
		}
	}
	tb.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// TestStandInWorkerProcess is not a test of its own: it is the stand-in
// worker of scripts/tools/coordinator-memory.sh --stand-in, run as a process
// of its own beside a real `c4book coordinator` on a scratch book, so that
// the coordinator's memory on a deep job can be measured without solving.
// It runs only when C4BOOK_STANDIN_NATS names the coordinator's server
// (token in C4BOOK_NATS_TOKEN), answers every task with standInScore, and
// ends once no task came for 30 seconds after the first.
func TestStandInWorkerProcess(t *testing.T) {
	url := os.Getenv("C4BOOK_STANDIN_NATS")
	if url == "" {
		t.Skip("the stand-in worker of scripts/tools/coordinator-memory.sh: runs when C4BOOK_STANDIN_NATS is set")
	}
	ctx := context.Background()
	conn, err := queue.Connect(ctx, queue.Options{URL: url, Name: "stand-in", Token: os.Getenv("C4BOOK_NATS_TOKEN")})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var tasks *queue.TaskSource
	for tasks == nil {
		if tasks, err = conn.Tasks(ctx); err != nil {
			time.Sleep(time.Second) // the coordinator has not set up the queue yet
		}
	}
	var n int
	for {
		next, cancel := ctx, context.CancelFunc(func() {})
		if n > 0 { // the first task waits for the coordinator's plan
			next, cancel = context.WithTimeout(ctx, 30*time.Second)
		}
		m, err := tasks.Next(next)
		cancel()
		if err != nil {
			t.Logf("stand-in: %d tasks answered; stopping: %v", n, err)
			return
		}
		s := make([]int8, len(m.Task.Keys))
		for i, k := range m.Task.Keys {
			s[i] = standInScore(k)
		}
		res := queue.Result{JobID: m.Task.JobID, TaskID: m.Task.TaskID, WorkerID: "stand-in", Keys: m.Task.Keys, Scores: s}
		if err := conn.PublishResult(ctx, res); err != nil {
			t.Fatal(err)
		}
		_ = m.Ack(ctx)
		n++
	}
}
