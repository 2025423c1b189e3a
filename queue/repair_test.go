package queue

import (
	"slices"
	"testing"
	"time"
)

// TestConn_RepairQueue: the parts of the queue deleted are named and set
// up again; a deleted task stream takes the workers' consumer with it, and
// both are named.
func TestConn_RepairQueue(t *testing.T) {
	s := startServer(t, ServerOptions{})
	c := connectTo(t, s, "coordinator")
	ctx := testCtx(t, 30*time.Second)
	if err := c.EnsureStreams(ctx, testStreams); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Results(ctx, "7x6-d8"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.RepairQueue(ctx, testStreams, "7x6-d8"); err != nil || len(got) != 0 {
		t.Fatalf("RepairQueue of a whole queue = %q, %v; want nothing", got, err)
	}
	for _, tc := range []struct {
		name   string
		delete func() error
		want   []string
	}{
		{"the workers' consumer", func() error { return c.js.DeleteConsumer(ctx, TaskStream, LaneConsumer(0)) }, []string{PartLaneConsumers}},
		{"the task stream", func() error { return c.js.DeleteStream(ctx, TaskStream) }, []string{PartTaskStream, PartLaneConsumers}},
	} {
		if err := tc.delete(); err != nil {
			t.Fatalf("deleting %s: %v", tc.name, err)
		}
		got, err := c.RepairQueue(ctx, testStreams, "7x6-d8")
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("RepairQueue after deleting %s = %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if _, err := c.js.Consumer(ctx, TaskStream, LaneConsumer(0)); err != nil {
			t.Errorf("after deleting %s and RepairQueue: the workers' consumer: %v", tc.name, err)
		}
	}
}

// TestTaskMsg_ackConsumerMadeAgain: the ack of a task delivered by a
// consumer that was deleted and made again is never confirmed by the
// server; Ack gives up after ackConfirmWait instead of waiting until its
// context ends (a worker stalled so for good once the coordinator had set
// its queue up again: TestRun_queueDeleted in coordinator).
func TestTaskMsg_ackConsumerMadeAgain(t *testing.T) {
	defer func(d time.Duration) { ackConfirmWait = d }(ackConfirmWait)
	ackConfirmWait = 200 * time.Millisecond
	s, coord := setupQueue(t, testStreams)
	worker := connectTo(t, s, "worker")
	publishTasks(t, coord, testTask(t, "j1", 1, 2), testTask(t, "j1", 2, 2))
	m := nextTask(t, taskSource(t, worker))
	ctx := testCtx(t, 30*time.Second)
	if err := coord.js.DeleteConsumer(ctx, TaskStream, LaneConsumer(0)); err != nil {
		t.Fatal(err)
	}
	if got, err := coord.RepairQueue(ctx, testStreams, "j1"); err != nil || !slices.Contains(got, PartLaneConsumers) {
		t.Fatalf("RepairQueue = %q, %v; want the workers' consumer among them", got, err)
	}
	err := m.Ack(ctx)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Ack of a task of a consumer made again = %v (test context: %v); want an error before the context ends", err, ctx.Err())
	}
	t.Logf("Ack: %v", err)
}

// TestConn_setUpAgain_staleStream: a stream set up again that is not
// empty took over the files of the one deleted (see Repair): it is deleted
// and created again, new, and takes tasks.
func TestConn_setUpAgain_staleStream(t *testing.T) {
	s, coord := setupQueue(t, testStreams)
	publishTasks(t, coord, testTask(t, "j1", 1, 2))
	// As if the task stream had been found missing and created again over
	// the deleted one's files: it holds the task published before.
	ctx := testCtx(t, 30*time.Second)
	if err := coord.setUpAgain(ctx, testStreams, []string{PartTaskStream, PartLaneConsumers}); err != nil {
		t.Fatal(err)
	}
	info, err := coord.js.Stream(ctx, TaskStream)
	if err != nil {
		t.Fatal(err)
	}
	if st := info.CachedInfo().State; st.LastSeq != 0 || st.Msgs != 0 {
		t.Errorf("task stream set up again: last sequence %d, %d messages; want a new stream", st.LastSeq, st.Msgs)
	}
	publishTasks(t, coord, testTask(t, "j1", 2, 2))
	if m := nextTask(t, taskSource(t, connectTo(t, s, "worker"))); m.Task.TaskID != 2 {
		t.Errorf("the task taken from the stream set up again is %d, want 2", m.Task.TaskID)
	}
}
