package coordinator_test

import (
	"testing"
	"time"

	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// TestRun_junkOnResults: messages on the results subjects that are no
// result are dropped and counted as such, against no worker: the
// summary's rejected results are the workers' alone.
func TestRun_junkOnResults(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c, nc := newOperatorCluster(t, b, queue.StreamConfig{AckWait: 30 * time.Second, MaxDeliver: 3})
	ctx := testCtx(t)
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 7, TaskSize: 16}
	type outcome struct {
		sum coordinator.Summary
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		sum, err := c.runJob(ctx, t, spec)
		done <- outcome{sum, err}
	}()
	waitUntil(t, "the job solving", func() bool {
		s, err := c.conn.JobStatus(ctx, spec.ID())
		return err == nil && s.State == "solving"
	})
	const junk = 3
	for i := range junk {
		if err := nc.Publish(queue.WorkerResultSubject(spec.ID(), "w1"), []byte{byte(i), 'x'}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	c.startWorker(t, ctx, "w1")
	out := <-done
	sum, err := out.sum, out.err
	if err != nil {
		t.Fatal(err)
	}
	if sum.Malformed != junk || sum.Rejected != 0 || sum.Workers["w1"].Rejected != 0 || sum.Workers["w1"].Accepted == 0 {
		t.Errorf("%d messages dropped, %d results rejected, w1's %+v; want %d dropped, none rejected", sum.Malformed, sum.Rejected, sum.Workers["w1"], junk)
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
}
