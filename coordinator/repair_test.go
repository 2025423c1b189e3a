package coordinator_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

// TestRun_queueDeleted: a client with the operator's token deletes, while
// a job runs, the workers' consumer, then the task stream and the job's
// result consumer. The coordinator sets each up again, says so, publishes
// again the tasks that were out, and the job ends with an exact book.
// Before, the job waited until its coordinator was started again.
func TestRun_queueDeleted(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	c, raw := newOperatorCluster(t, b, queue.StreamConfig{AckWait: 2 * time.Second, MaxDeliver: 3})
	js, err := jetstream.New(raw)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	spec := coordinator.Spec{Board: b, Root: "33", Depth: 8, TaskSize: 2}
	done := make(chan struct{})
	var sum coordinator.Summary
	var runErr error
	go func() {
		defer close(done)
		sum, runErr = coordinator.Run(ctx, coordinator.Config{Spec: spec, Book: c.book, Queue: c.conn, Stream: c.stream, Log: logger(t), StatusEvery: time.Second})
	}()
	// The worker solves this job in well under a second: it publishes only
	// the results the test allows, so that the job is still running when
	// each part of its queue is deleted. The test counts the results
	// published, not those the coordinator takes: a task delivered again
	// (its ack lost with the consumer) is solved and published again, and
	// the coordinator drops the copy.
	var allowed, results atomic.Int64
	allowed.Store(5)
	step := make(chan struct{}, 1)
	wait := c.goWorker(t, ctx, "worker w", func(conn *queue.Conn, tasks *queue.TaskSource) {
		pub := budgetPublisher{Publisher: conn, allowed: &allowed, published: &results, step: step}
		if err := worker.Run(ctx, tasks, pub, worker.Config{ID: "w", Concurrency: 1, TableBytes: 4 << 20, Heartbeat: time.Second, Log: logger(t)}); err != nil {
			t.Errorf("worker w: %v", err)
		}
	})
	defer func() { cancel(); wait() }()
	waitResults := func(n int64) {
		t.Helper()
		for results.Load() < n {
			select {
			case <-step:
			case <-ctx.Done():
				t.Fatalf("waited in vain for %d results, %d came", n, results.Load())
			}
		}
	}
	waitResults(3)
	if err := js.DeleteConsumer(ctx, queue.TaskStream, queue.LaneConsumer(0)); err != nil {
		t.Fatal(err)
	}
	t.Log("deleted the workers' consumer")
	// Only the coordinator makes it again.
	for {
		if _, err := js.Consumer(ctx, queue.TaskStream, queue.LaneConsumer(0)); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the workers' consumer was not set up again")
		}
		time.Sleep(10 * time.Millisecond)
	}
	allowed.Add(5)
	waitResults(results.Load() + 3)
	if err := js.DeleteStream(ctx, queue.TaskStream); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteConsumer(ctx, queue.ResultStream, queue.ResultConsumer(spec.ID())); err != nil {
		t.Fatal(err)
	}
	t.Log("deleted the task stream and the job's result consumer")
	allowed.Store(1 << 40)
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the job did not end after parts of its queue were deleted")
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
	for _, part := range []string{queue.PartLaneConsumers, queue.PartTaskStream, queue.PartResultConsumer} {
		if !slices.Contains(sum.Repaired, part) {
			t.Errorf("repaired %q, want %s among them", sum.Repaired, part)
		}
	}
	checkBook(t, b, c.book, spec.Root, spec.Depth)
}

// budgetPublisher publishes a worker's results while allowed is above
// zero, taking one from it each time, and otherwise waits; it counts the
// results published, and signals step after each.
type budgetPublisher struct {
	worker.Publisher
	allowed   *atomic.Int64
	published *atomic.Int64
	step      chan struct{}
}

func (p budgetPublisher) PublishResult(ctx context.Context, r queue.Result) error {
	for p.allowed.Add(-1) < 0 {
		p.allowed.Add(1)
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := p.Publisher.PublishResult(ctx, r); err != nil {
		return err
	}
	p.published.Add(1)
	select {
	case p.step <- struct{}{}:
	default:
	}
	return nil
}
