package jobproc

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/solver"
)

// testConfig returns the configuration of a small job: 5x4 to depth 8,
// its book in a temporary directory.
func testConfig(t *testing.T) config.Config {
	cfg := config.Default()
	cfg.Board.Width, cfg.Board.Height = 5, 4
	cfg.Generate.Depth = 8
	cfg.Queue.TaskSize = 16
	cfg.Solver.TTSize = 4 << 20
	cfg.Worker.TTSize = 4 << 20
	cfg.Book.Path = filepath.Join(t.TempDir(), "5x4.db")
	return cfg
}

// TestProcess_Run: a job with its embedded server and a local worker of
// two threads, run without a command line, completes: the summary counts
// its positions, every one is in the book with the solver's score, its
// metrics say it is done, and stopped is called once.
func TestProcess_Run(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	var reports atomic.Int64
	p, err := New(Options{Config: cfg, Command: "generate", Workers: 2,
		Progress: func(coordinator.Progress) { reports.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	ctx := context.Background()
	if err := p.Start(ctx, reg); err != nil {
		p.Close()
		t.Fatal(err)
	}
	stopped := 0
	sum, err := p.Run(ctx, func() { stopped++ })
	if err != nil {
		p.Close()
		t.Fatalf("Run: %v", err)
	}
	if err := p.WorkerErr(); err != nil {
		t.Errorf("local worker: %v", err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if stopped != 1 || reports.Load() == 0 {
		t.Errorf("stopped called %d times, %d progress reports; want 1 and some", stopped, reports.Load())
	}
	if sum.Positions == 0 || sum.Solved == 0 || sum.Solved+sum.Immediate+sum.Derived != sum.Positions {
		t.Errorf("summary: %d positions, %d solved, %d at once, %d derived", sum.Positions, sum.Solved, sum.Immediate, sum.Derived)
	}
	done := false
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == "c4book_job_phase" && m.GetLabel()[0].GetValue() == string(book.JobDone) {
				done = m.GetGauge().GetValue() == 1
			}
		}
	}
	if !done {
		t.Error("c4book_job_phase{phase=done} is not 1")
	}
	if n := len(mfs); n < 10 {
		t.Errorf("%d metric families: want the coordinator's, the worker's and the book's", n)
	}

	// The book holds every position with a score its children and the
	// solver agree with (book.Verify).
	b := solver.MustBoard(5, 4)
	bk, err := book.Open(cfg.Book.Path, &book.Options{Board: b, ReadOnly: true, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	s, err := solver.New(b, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bk.Verify(context.Background(), &book.VerifyOptions{Solver: s, Sample: 50})
	if err != nil || !rep.OK() || rep.Entries != int64(sum.Positions) || rep.Resolved == 0 {
		t.Errorf("verify: %v; %d entries (summary: %d positions), %d re-solved, problems %v", err, rep.Entries, sum.Positions, rep.Resolved, rep.Problems)
	}
}

// TestProcess_interrupted: a job whose context is cancelled while it runs
// stops, its local worker too, and closes cleanly; run again, it
// completes.
func TestProcess_interrupted(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Generate.Depth = 10
	ctx, cancel := context.WithCancel(context.Background())
	p, err := New(Options{Config: cfg, Command: "generate", Workers: 1,
		Progress: func(pr coordinator.Progress) {
			if pr.Phase == book.JobSolving {
				cancel()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, nil); err != nil {
		p.Close()
		t.Fatal(err)
	}
	p.Run(ctx, nil)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() == nil {
		t.Fatal("the job ended before it was interrupted")
	}

	p, err = New(Options{Config: cfg, Command: "generate", Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	sum, err := p.Run(context.Background(), nil)
	if err != nil || sum.AlreadyDone {
		t.Errorf("resumed: %v; already done %v", err, sum.AlreadyDone)
	}
}

// TestProcess_listening: a job that listens for workers by their keys
// announces its address only once it applies the registry's requests, so
// that "c4book worker add" run at once goes to the job (it found the job
// not yet following them when the address came first, under load).
func TestProcess_listening(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.NATS.Listen = "127.0.0.1:0"
	cfg.NATS.Token = "s3cret" // keys on, no worker registered yet
	calls, following, registered := 0, false, true
	p, err := New(Options{Config: cfg, Command: "coordinator",
		Listening: func(url string, keys bool) {
			calls++
			following, registered = book.TakesRequests(cfg.Book.Path), keys
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || !following || registered {
		t.Errorf("Listening called %d times, the job following the registry then: %v, registered workers: %v; want 1, true, false", calls, following, registered)
	}
}

// TestNew_errors: a job that cannot run is refused before anything
// starts, saying why.
func TestNew_errors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		set  func(*config.Config)
		want string
	}{
		{"url and listen", func(c *config.Config) { c.NATS.URL, c.NATS.Listen = "nats://h:4222", "127.0.0.1:0" }, "both set"},
		{"listen without auth", func(c *config.Config) { c.NATS.Listen = "127.0.0.1:0" }, "without authentication"},
		{"board", func(c *config.Config) { c.Board.Width, c.Board.Height = 9, 7 }, "board.width, board.height"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			c.set(&cfg)
			if _, err := New(Options{Config: cfg}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}
