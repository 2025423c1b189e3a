package status

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/c4book/c4book/queue"
)

// fakeConn is a Conn whose statuses are fixed.
type fakeConn struct {
	jobs    []queue.JobStatus
	workers []queue.WorkerStatus
}

var _ Conn = (*fakeConn)(nil)

func (c *fakeConn) Workers(context.Context) ([]queue.WorkerStatus, error) { return c.workers, nil }
func (c *fakeConn) Jobs(context.Context) ([]queue.JobStatus, error)       { return c.jobs, nil }
func (c *fakeConn) ConnectedURL() string                                  { return "nats://fake:4222" }

func (c *fakeConn) JobStatus(_ context.Context, id string) (queue.JobStatus, error) {
	for _, j := range c.jobs {
		if j.JobID == id {
			return j, nil
		}
	}
	return queue.JobStatus{}, queue.ErrNotFound
}

// lockedBuffer is a strings.Builder safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestWatch_terminal: on a terminal, each report clears the screen and is
// drawn from its top; the watch ends with nil when its context does.
func TestWatch_terminal(t *testing.T) {
	t.Parallel()
	now := time.Now()
	conn := &fakeConn{
		jobs:    []queue.JobStatus{{JobID: "5x4-d10", State: "solving", Done: 1000, Total: 11000, Started: now, Updated: now}},
		workers: []queue.WorkerStatus{{WorkerID: "w1", Host: "h", Started: now, Seen: now}},
	}
	out := new(lockedBuffer)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Watch(ctx, out, true, conn, nil, 50*time.Millisecond) }()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(out.String(), clearScreen) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than two reports after 10 s:\n%q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Watch = %v, want nil on cancellation", err)
	}
	for i, rep := range strings.Split(out.String(), clearScreen)[1:] {
		if !strings.HasPrefix(rep, "Status of nats://fake:4222") || strings.Contains(rep, "\n\n\n") || !strings.Contains(rep, "w1") {
			t.Errorf("screen %d: %q, want one report from the top", i+1, rep)
		}
	}
}
