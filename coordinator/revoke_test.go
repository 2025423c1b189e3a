package coordinator_test

import (
	"context"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

// lyingPublisher publishes a worker's results, every other one with each
// score changed into another the coordinator cannot tell from a true one:
// possible at that depth, and not a win at once.
type lyingPublisher struct {
	worker.Publisher
	board     *solver.Board
	published atomic.Int64
	lies      atomic.Int64 // positions lied about
	first     chan struct{}
}

func (p *lyingPublisher) PublishResult(ctx context.Context, r queue.Result) error {
	n := p.published.Add(1)
	if n%2 == 1 {
		r.Scores = append([]int8(nil), r.Scores...)
		for i, s := range r.Scores {
			r.Scores[i] = 0
			if s == 0 {
				r.Scores[i] = -1
			}
		}
	}
	err := p.Publisher.PublishResult(ctx, r)
	if err == nil && n%2 == 1 {
		p.lies.Add(int64(len(r.Keys)))
	}
	if n == 2 {
		close(p.first) // a lie and a true result are out
	}
	return err
}

// startLiar starts worker name of cluster k (connected under dialCtx) as
// a liar, one thread publishing through a lyingPublisher, until runCtx
// ends; the worker's error comes on the channel.
func startLiar(t *testing.T, dialCtx, runCtx context.Context, k *keyedCluster, b *solver.Board, name string) (*lyingPublisher, <-chan error) {
	t.Helper()
	lc := k.dial(t, dialCtx, name)
	ltasks, err := lc.Tasks(dialCtx)
	if err != nil {
		t.Fatal(err)
	}
	liar := &lyingPublisher{Publisher: lc, board: b, first: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- worker.Run(runCtx, ltasks, liar, worker.Config{ID: name, Concurrency: 1, TableBytes: 4 << 20, Heartbeat: time.Second, Log: logger(t)})
	}()
	return liar, done
}

// bookScores returns every entry of bk: depth and key to score.
func bookScores(t *testing.T, bk *book.Book) map[[2]uint64]int {
	t.Helper()
	m := map[[2]uint64]int{}
	for e, err := range bk.Entries(0, 64) {
		if err != nil {
			t.Fatal(err)
		}
		m[[2]uint64{uint64(e.Depth), e.Key}] = e.Score
	}
	return m
}

// TestRun_revokeLiar: a liar with a valid key, registered in the book,
// solves tasks and lies about every other result; with cross-checking off
// its lies are stored, each entry recording its number. The liar is
// revoked (book.RevokeWorker, what c4book book revoke does), the job run
// again with the honest worker alone: the book then equals, entry for
// entry, the book of an honest run.
func TestRun_revokeLiar(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}

	// The honest book.
	honest := newCluster(t, b)
	hctx, hcancel := context.WithCancel(context.Background())
	hwait := honest.startWorker(t, hctx, "honest")
	if _, err := honest.runJob(hctx, t, spec); err != nil {
		t.Fatal(err)
	}
	hcancel()
	hwait()
	want := bookScores(t, honest.book)

	k := newKeyedCluster(t, b, "honest", "liar")
	numbers := map[string]uint32{}
	for _, name := range []string{"honest", "liar"} {
		w, err := k.book.AddWorker(name, k.keys[name].PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		numbers[name] = w.Number
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The liar starts alone; the honest worker joins once the liar has
	// lied once and told the truth once.
	lctx, stopLiar := context.WithCancel(ctx)
	liar, liarDone := startLiar(t, ctx, lctx, k, b, "liar")
	runDone := make(chan struct{})
	var sum coordinator.Summary
	var runErr error
	cfg := coordinator.Config{Spec: spec, Book: k.book, Queue: k.conn, Stream: k.stream, Log: logger(t), StatusEvery: time.Second}
	go func() {
		defer close(runDone)
		sum, runErr = coordinator.Run(ctx, cfg)
	}()
	select {
	case <-liar.first:
	case <-runDone:
		t.Fatalf("the job ended before the liar published twice: %v", runErr)
	}
	hctx, stopHonest := context.WithCancel(ctx)
	honestDone := k.runWorker(t, hctx, "honest")
	<-runDone
	stopLiar()
	if err := <-liarDone; err != nil {
		t.Errorf("liar: %v", err)
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
	if sum.Rejected != 0 || sum.ByWorker["liar"] == 0 || liar.lies.Load() == 0 {
		t.Fatalf("first run: %d rejected, by worker %v, %d lies: want the liar's lies accepted", sum.Rejected, sum.ByWorker, liar.lies.Load())
	}
	if c := sum.Workers["liar"]; c.Accepted == 0 || c.Rejected != 0 {
		t.Errorf("the liar's results: %+v, want accepted, none rejected", c)
	}

	// The lies are in the book, each under the liar's number; every entry
	// solved records its solver.
	got := bookScores(t, k.book)
	wrong := 0
	for e, err := range k.book.Entries(0, 64) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Origin == book.OriginSolved && e.Worker != numbers["liar"] && e.Worker != numbers["honest"] {
			t.Fatalf("%v: solved by worker %d, want %d or %d", e, e.Worker, numbers["liar"], numbers["honest"])
		}
		if want[[2]uint64{uint64(e.Depth), e.Key}] != e.Score {
			wrong++
			if e.Origin == book.OriginSolved && e.Worker != numbers["liar"] {
				t.Errorf("%v: wrong, and not the liar's", e)
			}
		}
	}
	if wrong == 0 || len(got) != len(want) {
		t.Fatalf("%d wrong entries of %d (%d in the honest book): the lies did not land", wrong, len(got), len(want))
	}
	t.Logf("first run: %d positions solved by the liar (%d lied about), %d entries of %d wrong", sum.ByWorker["liar"], liar.lies.Load(), wrong, len(got))

	// Revoke, and run the job again with the honest worker alone.
	r, err := k.book.RevokeWorker("liar")
	if err != nil {
		t.Fatal(err)
	}
	solved, derived := r.Total()
	if solved != sum.ByWorker["liar"] || r.Deepest != spec.Depth || len(r.Jobs) != 1 || r.Jobs[0] != spec.ID() {
		t.Errorf("revocation: %d solved entries removed (the liar solved %d), %d derived, deepest %d, jobs %v", solved, sum.ByWorker["liar"], derived, r.Deepest, r.Jobs)
	}
	sum2, err := coordinator.Run(ctx, cfg)
	stopHonest()
	if err := <-honestDone; err != nil {
		t.Errorf("honest: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if sum2.AlreadyDone || sum2.Solved != solved || sum2.ByWorker["honest"] != solved || sum2.Derived == 0 {
		t.Errorf("second run: %+v; want the %d revoked leaves solved again by the honest worker, and derived", sum2, solved)
	}
	if got := bookScores(t, k.book); !maps.Equal(got, want) {
		t.Fatalf("after revocation and a second run, the book differs from the honest book (%d and %d entries)", len(got), len(want))
	}
	for e, err := range k.book.Entries(0, 64) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Worker == numbers["liar"] {
			t.Fatalf("%v: still the liar's", e)
		}
	}
	rec, _, _ := k.book.Job(spec.ID())
	if rec.State != book.JobDone || rec.Replan || rec.PlanRun != 2 {
		t.Errorf("job record after the second run: %+v", rec)
	}
	// A third run has nothing to do.
	if sum3, err := coordinator.Run(ctx, cfg); err != nil || !sum3.AlreadyDone {
		t.Errorf("third run: %+v, %v; want nothing to do", sum3, err)
	}
}
