package queue

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestConn_EnsureStreams(t *testing.T) {
	t.Parallel()
	_, c := setupQueue(t, StreamConfig{AckWait: 10 * time.Second, MaxDeliver: 3})
	ctx := testCtx(t, 30*time.Second)
	publishTasks(t, c, testTask(t, "keep", 1, 2))

	// Again with another configuration: the consumer is updated, the
	// tasks stay.
	if err := c.EnsureStreams(ctx, StreamConfig{AckWait: 20 * time.Second, MaxDeliver: 6}); err != nil {
		t.Fatalf("EnsureStreams again: %v", err)
	}
	cons, err := c.js.Consumer(ctx, TaskStream, LaneConsumer(0))
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	wantBackOff := []time.Duration{20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second}
	if cfg.AckWait != 20*time.Second || cfg.MaxDeliver != 6 || !slices.Equal(cfg.BackOff, wantBackOff) ||
		cfg.AckPolicy != jetstream.AckExplicitPolicy || cfg.MaxAckPending != taskMaxAckPending || cfg.MaxWaiting != taskMaxWaiting {
		t.Errorf("consumer config %+v", cfg)
	}
	if n := streamMsgs(t, c, TaskStream); n != 1 {
		t.Errorf("task stream holds %d messages after EnsureStreams, want 1", n)
	}
	for _, name := range []string{TaskStream, ResultStream} {
		s, err := c.stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if sc := info.Config; sc.Retention != jetstream.WorkQueuePolicy || sc.Storage != jetstream.FileStorage || sc.Duplicates != DuplicateWindow {
			t.Errorf("stream %s config %+v", name, sc)
		}
	}
	if _, err := c.js.KeyValue(ctx, StatusBucket); err != nil {
		t.Errorf("status bucket: %v", err)
	}

	for _, bad := range []StreamConfig{{AckWait: 999 * time.Millisecond, MaxDeliver: 1}, {AckWait: time.Second}} {
		if err := c.EnsureStreams(ctx, bad); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("EnsureStreams(%+v) = %v, want ErrInvalidOptions", bad, err)
		}
	}
}

func TestTaskBackOff(t *testing.T) {
	cases := []struct {
		cfg  StreamConfig
		want []time.Duration
	}{
		{StreamConfig{AckWait: time.Second, MaxDeliver: 1}, []time.Duration{time.Second}},
		{StreamConfig{AckWait: time.Second, MaxDeliver: 2}, []time.Duration{time.Second, 2 * time.Second}},
		{StreamConfig{AckWait: 30 * time.Second, MaxDeliver: 10}, []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute}},
	}
	for _, c := range cases {
		if got := taskBackOff(c.cfg); !slices.Equal(got, c.want) {
			t.Errorf("taskBackOff(%+v) = %v, want %v", c.cfg, got, c.want)
		}
	}
}

// TestConn_EnsureStreams_replicas: replicas a single server cannot keep
// are refused at once, with the server's reason, not waited for.
func TestConn_EnsureStreams_replicas(t *testing.T) {
	t.Parallel()
	s := startServer(t, ServerOptions{})
	c := connectTo(t, s, "coordinator")
	err := c.EnsureStreams(testCtx(t, 10*time.Second), StreamConfig{AckWait: time.Second, MaxDeliver: 1, Replicas: 3})
	if err == nil {
		t.Fatal("EnsureStreams with 3 replicas on one server succeeded")
	}
	if Transient(err) {
		t.Errorf("the error passes (%v): a coordinator would wait for it forever", err)
	}
	if !strings.Contains(err.Error(), "replicas") {
		t.Errorf("the error does not say replicas: %v", err)
	}
	if err := c.EnsureStreams(testCtx(t, 10*time.Second), StreamConfig{AckWait: time.Second, MaxDeliver: 1, Replicas: 9}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Replicas 9: %v, want ErrInvalidOptions", err)
	}
}
