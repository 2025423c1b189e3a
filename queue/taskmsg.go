package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// MinNakDelay is the least delay of TaskMsg.Nak: a task handed back
// without delay would come straight back, to a worker that may fail it
// again at once.
const MinNakDelay = time.Second

// TaskMsg is a task delivered to a worker. The worker answers it with
// exactly one of Ack (done), Nak (give it back) or Term (never deliver it
// again), and calls InProgress while solving.
type TaskMsg struct {
	Task Task
	// Seq is the task's stream sequence, by which the coordinator finds a
	// failed task (TaskBySeq) and drops it (DeleteTask).
	Seq uint64
	// Delivered is how many times the server has delivered this task,
	// this delivery included: 1 the first time.
	Delivered uint64

	reply Replier
}

// NewTaskMsg returns a task message that no server delivered: its replies
// go to r. It is for fakes of a task source in tests of workers.
func NewTaskMsg(t Task, seq, delivered uint64, r Replier) *TaskMsg {
	return &TaskMsg{Task: t, Seq: seq, Delivered: delivered, reply: r}
}

// InProgress tells the server that the worker is still on the task: its
// AckWait starts again. Send it well within AckWait (every AckWait/3).
func (m *TaskMsg) InProgress() error {
	if err := m.reply.InProgress(); err != nil {
		return fmt.Errorf("queue: in progress %s: %w", m.id(), err)
	}
	return nil
}

// Ack tells the server that the task is done, and waits for the server to
// confirm, so that a nil error means the task is off the queue. Publish
// the result first.
func (m *TaskMsg) Ack(ctx context.Context) error {
	if err := m.reply.Ack(ctx); err != nil {
		return fmt.Errorf("queue: ack %s: %w", m.id(), err)
	}
	return nil
}

// Nak gives the task back, to be delivered again after delay (at least
// MinNakDelay). It counts as a delivery toward MaxDeliver.
func (m *TaskMsg) Nak(delay time.Duration) error {
	if err := m.reply.Nak(max(delay, MinNakDelay)); err != nil {
		return fmt.Errorf("queue: nak %s: %w", m.id(), err)
	}
	return nil
}

// Term tells the server never to deliver the task again; it leaves the
// stream.
func (m *TaskMsg) Term() error {
	if err := m.reply.Term(); err != nil {
		return fmt.Errorf("queue: term %s: %w", m.id(), err)
	}
	return nil
}

// id names the task in errors: "<job>/<task>".
func (m *TaskMsg) id() string { return taskMsgID(m.Task.JobID, m.Task.TaskID) }

// Replier is where the replies to a delivered message go. For messages
// from a server it is the server; NewTaskMsg and NewResultMsg take another
// one, for fakes in tests.
type Replier interface {
	InProgress() error             // the message's handler is still on it
	Ack(ctx context.Context) error // done; returns once the ack is confirmed
	Nak(delay time.Duration) error // deliver again after delay
	Term() error                   // never deliver again
}

// jsReplier replies to a JetStream message m delivered on c, and calls
// answered, if set, after an ack, nak or term: back is true for a nak
// (the message is to be delivered again).
type jsReplier struct {
	c        *Conn
	m        jetstream.Msg
	answered func(back bool)
}

// ackConfirmWait bounds the wait for the server to confirm an ack. The
// server confirms at once the ack of a message its consumer delivered, and
// never one for a consumer deleted and made again since (the new consumer
// ignores deliveries it did not make): without a bound, the worker or the
// coordinator acking would wait there until it is stopped. An ack in
// flight when the connection is lost is not confirmed either; its wait
// ends then (failOnLoss). An ack left unconfirmed is harmless: the
// message, if the ack was lost, is delivered again, and its handler finds
// it done. A variable for tests.
var ackConfirmWait = 10 * time.Second

func (r jsReplier) InProgress() error { return r.m.InProgress() }
func (r jsReplier) Ack(ctx context.Context) error {
	defer r.done(false)
	actx, cancel := context.WithTimeout(ctx, ackConfirmWait)
	defer cancel()
	actx, release := r.c.failOnLoss(actx)
	defer release()
	return lossErr(actx, r.m.DoubleAck(actx))
}
func (r jsReplier) Nak(delay time.Duration) error { defer r.done(true); return r.m.NakWithDelay(delay) }
func (r jsReplier) Term() error                   { defer r.done(false); return r.m.Term() }

// done calls answered, if set.
func (r jsReplier) done(back bool) {
	if r.answered != nil {
		r.answered(back)
	}
}
