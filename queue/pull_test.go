package queue

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPullWithin_losesNothing: pulls that end at their deadline lose no
// message, even on a loaded machine. Tasks come in one lane a few
// milliseconds apart while a puller asks for them with waits of a few
// tens of milliseconds, each ending about when a task may come, and
// spinning goroutines keep every core busy: a message the server sends
// as a request ends must still reach the puller, not be dropped by it and
// come back after the AckWait. So every task is delivered once. (Before
// the pulls waited for the server's end of a request, two runs of 400
// tasks here lost 1 and 2.)
func TestPullWithin_losesNothing(t *testing.T) {
	tasks := 400 // about 10 s
	if testing.Short() {
		tasks = 150
	}
	s, coord := setupQueue(t, StreamConfig{AckWait: 2 * time.Second, MaxDeliver: 10})
	openJob(t, coord, "pull")
	puller := connectTo(t, s, "puller")
	cons, err := puller.js.Consumer(testCtx(t, 10*time.Second), TaskStream, LaneConsumer(0))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var spin atomic.Bool
	spin.Store(true)
	var spinners sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		spinners.Go(func() {
			for x := uint64(1); spin.Load(); x = x*6364136223846793005 + 1 {
			}
		})
	}
	defer func() { spin.Store(false); spinners.Wait() }()
	published := make(chan error, 1)
	go func() {
		for i := range tasks {
			if err := coord.PublishTasks(ctx, []Task{testTask(t, "pull", uint64(i+1), 1)}); err != nil {
				published <- err
				return
			}
			time.Sleep(time.Duration(rand.IntN(8)) * time.Millisecond)
		}
		published <- nil
	}()

	seen := map[uint64]bool{}
	redelivered := 0
	for len(seen) < tasks && ctx.Err() == nil {
		m, err := puller.pullWithin(ctx, cons, "test pull", time.Duration(20+rand.IntN(30))*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if m == nil {
			continue
		}
		md, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		if md.NumDelivered > 1 {
			redelivered++
		}
		seen[md.Sequence.Stream] = true
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	if len(seen) < tasks || redelivered > 0 {
		t.Errorf("%d of %d tasks taken; %d of them delivered more than once: deliveries lost at the end of a pull", len(seen), tasks, redelivered)
	}
}
