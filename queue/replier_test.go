package queue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeReplier records the replies to a message.
type fakeReplier struct {
	replies []string
	nak     time.Duration
	err     error
}

func (f *fakeReplier) InProgress() error {
	f.replies = append(f.replies, "progress")
	return f.err
}

func (f *fakeReplier) Ack(ctx context.Context) error {
	f.replies = append(f.replies, "ack")
	return f.err
}

func (f *fakeReplier) Nak(delay time.Duration) error {
	f.replies, f.nak = append(f.replies, "nak"), delay
	return f.err
}

func (f *fakeReplier) Term() error {
	f.replies = append(f.replies, "term")
	return f.err
}

var _ Replier = (*fakeReplier)(nil)

func TestNewTaskMsg(t *testing.T) {
	var r fakeReplier
	m := NewTaskMsg(Task{JobID: "j", TaskID: 4}, 10, 2, &r)
	if m.Seq != 10 || m.Delivered != 2 || m.Task.TaskID != 4 {
		t.Errorf("NewTaskMsg = %+v", m)
	}
	m.InProgress()
	m.Nak(0)
	m.Term()
	m.Ack(context.Background())
	if got := strings.Join(r.replies, " "); got != "progress nak term ack" {
		t.Errorf("replies %q", got)
	}
	if r.nak != MinNakDelay {
		t.Errorf("Nak(0) asked for a delay of %v, want MinNakDelay", r.nak)
	}
	m.Nak(time.Minute)
	if r.nak != time.Minute {
		t.Errorf("Nak(1m) asked for a delay of %v", r.nak)
	}
	r.err = errors.New("gone")
	if err := m.Ack(context.Background()); err == nil || !strings.Contains(err.Error(), "ack j/4: gone") {
		t.Errorf("Ack = %v, want the error naming the task", err)
	}
}

func TestNewResultMsg(t *testing.T) {
	var r fakeReplier
	m := NewResultMsg(Result{JobID: "j", TaskID: 4, WorkerID: "w"}, 3, 1, &r)
	m.Ack(context.Background())
	m.Term()
	if got := strings.Join(r.replies, " "); got != "ack term" || m.Seq != 3 || m.Delivered != 1 {
		t.Errorf("replies %q, message %+v", got, m)
	}
}
