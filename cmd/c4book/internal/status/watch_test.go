package status

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/queue"
)

// fakeConn is a Conn whose statuses are fixed.
type fakeConn struct {
	jobs    []queue.JobStatus
	workers []queue.WorkerStatus
	junk    []string
}

var _ Conn = (*fakeConn)(nil)

func (c *fakeConn) Workers(context.Context) ([]queue.WorkerStatus, error) { return c.workers, nil }
func (c *fakeConn) Jobs(context.Context) ([]queue.JobStatus, error)       { return c.jobs, nil }
func (c *fakeConn) ConnectedURL() string                                  { return "nats://fake:4222" }
func (c *fakeConn) Junk(context.Context) ([]string, error)                { return c.junk, nil }

func (c *fakeConn) JobStatus(_ context.Context, id string) (queue.JobStatus, error) {
	for _, j := range c.jobs {
		if j.JobID == id {
			return j, nil
		}
	}
	return queue.JobStatus{}, queue.ErrNotFound
}

// writes is an io.Writer that sends what each Write writes.
type writes chan string

func (w writes) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
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
	out := make(writes)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Watch(ctx, out, true, conn, nil, 50*time.Millisecond) }()
	// Two reports: each the clearing of the screen, then the report.
	var got []string
	timeout := time.After(10 * time.Second)
	for len(got) < 4 {
		select {
		case w := <-out:
			got = append(got, w)
		case <-timeout:
			t.Fatalf("fewer than two reports after 10 s: %q", got)
		}
	}
	cancel()
	for stopped := false; !stopped; {
		select {
		case <-out: // a report under way when ctx ended
		case err := <-done:
			if err != nil {
				t.Fatalf("Watch = %v, want nil on cancellation", err)
			}
			stopped = true
		}
	}
	for i := 0; i < len(got); i += 2 {
		rep := got[i+1]
		if got[i] != clearScreen || !strings.HasPrefix(rep, "Status of nats://fake:4222") || strings.Contains(rep, "\n\n\n") || !strings.Contains(rep, "w1") {
			t.Errorf("screen %d: %q then %q, want the screen cleared, then one report from the top", i/2+1, got[i], rep)
		}
	}
}
