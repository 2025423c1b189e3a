package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// coordinatorSender names the coordinator in the sender header of tasks.
const coordinatorSender = "coordinator"

// publishWindow is the most task publishes awaiting their ack at once.
const publishWindow = 1024

// PublishTasks publishes tasks on the task stream, each with message id
// "<job>/<task>", so that publishing a task again within DuplicateWindow
// stores it once: after an error, call PublishTasks again with the same
// tasks. Tasks are validated first (an invalid task publishes nothing and
// the error wraps ErrMalformed), then published asynchronously with at most
// 1024 acks outstanding (publishWindow); PublishTasks returns when every task is
// stored. Tasks whose asynchronous publish failed are retried one by one
// until ctx is done.
func (c *Conn) PublishTasks(ctx context.Context, tasks []Task) error {
	for i := range tasks {
		if err := tasks[i].Validate(); err != nil {
			return fmt.Errorf("queue: publish tasks: task %d of %d: %w", i, len(tasks), err)
		}
	}
	if _, err := c.stream(ctx, TaskStream); err != nil {
		return err
	}

	type inflight struct {
		ack jetstream.PubAckFuture
		i   int // index in tasks
	}
	var (
		ring   [publishWindow]inflight
		head   int // oldest in ring
		n      int // in ring
		failed []int
	)
	// await waits for the oldest publish's ack.
	await := func() error {
		p := ring[head]
		head, n = (head+1)%publishWindow, n-1
		select {
		case <-p.ack.Ok():
		case err := <-p.ack.Err():
			c.log.Debug("queue: task publish failed, will retry", "task", taskMsgID(tasks[p.i].JobID, tasks[p.i].TaskID), "err", err)
			failed = append(failed, p.i)
		case <-ctx.Done():
			return fmt.Errorf("queue: publish tasks: %w", ctx.Err())
		}
		return nil
	}
	for i := range tasks {
		if n == publishWindow {
			if err := await(); err != nil {
				return err
			}
		}
		m, id, err := taskMsg(&tasks[i])
		if err != nil {
			return err
		}
		ack, err := c.js.PublishMsgAsync(m, jetstream.WithMsgID(id))
		if err != nil {
			if errors.Is(err, nats.ErrConnectionClosed) {
				return fmt.Errorf("queue: publish tasks: %w", ErrClosed)
			}
			failed = append(failed, i)
			continue
		}
		ring[(head+n)%publishWindow] = inflight{ack, i}
		n++
	}
	for n > 0 {
		if err := await(); err != nil {
			return err
		}
	}
	for _, i := range failed {
		m, id, err := taskMsg(&tasks[i])
		if err != nil {
			return err
		}
		if err := c.publish(ctx, m, id); err != nil {
			return fmt.Errorf("queue: publish tasks: %w", err)
		}
	}
	return nil
}

// taskMsg encodes t as a message and returns it with its message id.
func taskMsg(t *Task) (*nats.Msg, string, error) {
	data, err := t.MarshalBinary()
	if err != nil {
		return nil, "", fmt.Errorf("queue: publish tasks: %w", err)
	}
	m := newMsg(TaskLaneSubject(t.JobID, t.Lane), coordinatorSender, data)
	m.Header.Set(laneLeftHeader, strconv.Itoa(t.LaneLeft))
	return m, taskMsgID(t.JobID, t.TaskID), nil
}

// PurgeTasks removes every task of job from the task stream, delivered or
// not. A worker holding one of them can still ack it: the ack succeeds and
// changes nothing.
func (c *Conn) PurgeTasks(ctx context.Context, job string) error {
	if err := ValidJobID(job); err != nil {
		return fmt.Errorf("queue: purge tasks: %w", err)
	}
	s, err := c.stream(ctx, TaskStream)
	if err != nil {
		return err
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(TaskSubject(job)+".*")); err != nil {
		return c.notReady("purge tasks of "+job, err)
	}
	return nil
}

// RemoveJob removes what the queue holds for job once it is complete: its
// tasks and results left in the streams (copies of cross-checked tasks,
// results that came late) and the consumer of its results, and makes the
// result stream store its results no more. Removing a job the queue does
// not know is not an error.
func (c *Conn) RemoveJob(ctx context.Context, job string) error {
	if err := ValidJobID(job); err != nil {
		return fmt.Errorf("queue: remove job: %w", err)
	}
	if err := c.PurgeTasks(ctx, job); err != nil {
		return err
	}
	s, err := c.stream(ctx, ResultStream)
	if err != nil {
		return err
	}
	if err := s.DeleteConsumer(ctx, ResultConsumer(job)); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return c.notReady("delete consumer "+ResultConsumer(job), err)
	}
	for _, subject := range jobResultSubjects(job) {
		if err := s.Purge(ctx, jetstream.WithPurgeSubject(subject)); err != nil {
			return c.notReady("purge results of "+job, err)
		}
	}
	return c.closeJobSubjects(ctx, s, job)
}

// maxDeliveriesEvent is the part of the server's max-deliveries advisory
// that we read (io.nats.jetstream.advisory.v1.max_deliver).
type maxDeliveriesEvent struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// WatchMaxDeliveries calls fn with the stream sequence of every task that
// reaches MaxDeliver deliveries without an ack, until ctx is done. Such a
// task stays in the stream, never delivered again, until DeleteTask; find
// its positions with TaskBySeq. fn runs on one goroutine, one call at a
// time. WatchMaxDeliveries returns once the subscription is in place.
//
// The server gives up on a task when it would deliver it once more, that
// is while some worker asks for a task: with every worker gone, a task
// that timed out MaxDeliver times waits for the next worker's request.
// The server announces each such task once, as a plain NATS message: a
// task that fails while nobody watches is not announced again.
func (c *Conn) WatchMaxDeliveries(ctx context.Context, fn func(streamSeq uint64)) error {
	sub, err := c.nc.Subscribe(maxDeliveriesAdvisory, func(m *nats.Msg) {
		var ev maxDeliveriesEvent
		if err := json.Unmarshal(m.Data, &ev); err != nil || ev.StreamSeq == 0 {
			c.log.Warn("queue: unreadable max-deliveries advisory", "data", string(m.Data), "err", err)
			return
		}
		fn(ev.StreamSeq)
	})
	if err != nil {
		return fmt.Errorf("queue: watch max deliveries: %w", err)
	}
	// FlushWithContext wants a deadline.
	flushCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.nc.FlushWithContext(flushCtx); err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("queue: watch max deliveries: %w", err)
	}
	context.AfterFunc(ctx, func() { _ = sub.Unsubscribe() })
	return nil
}

// StrandedTasks returns the stream sequences of job's tasks that are in
// the task stream but will not be delivered again: tasks given up on
// after MaxDeliver deliveries. It can tell only while the task consumer is
// idle, every task delivered and none in a worker's hands; otherwise idle
// is false and seqs is nil. With the consumer idle, a task of the stream
// is stranded, and a task that is neither in the stream nor answered was
// lost (purged, or lost with the server's storage).
//
// This is how a coordinator recovers what WatchMaxDeliveries announces
// once only: it asks when no result came for a while.
func (c *Conn) StrandedTasks(ctx context.Context, job string) (seqs []uint64, idle bool, err error) {
	s, err := c.stream(ctx, TaskStream)
	if err != nil {
		return nil, false, err
	}
	infos, err := c.taskConsumers(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, info := range infos {
		if info.NumPending > 0 || info.NumAckPending > 0 {
			return nil, false, nil
		}
	}
	for seq := uint64(1); ; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(TaskSubject(job)+".*"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return seqs, true, nil
		}
		if err != nil {
			return nil, false, c.notReady("tasks of job "+job, err)
		}
		seqs = append(seqs, m.Sequence)
		seq = m.Sequence + 1
	}
}

// LanesWaiting returns, for each lane, the number of its tasks, of any
// job, not delivered to any worker yet.
func (c *Conn) LanesWaiting(ctx context.Context) ([]uint64, error) {
	infos, err := c.taskConsumers(ctx)
	if err != nil {
		return nil, err
	}
	waiting := make([]uint64, Lanes)
	for _, info := range infos {
		if l, ok := parseLaneConsumer(info.Name); ok {
			waiting[l] = info.NumPending
		}
	}
	return waiting, nil
}

// consumerList is the server's answer to a request for the consumers of a
// stream ($JS.API.CONSUMER.LIST.<stream>), one page of it.
type consumerList struct {
	Total     int                       `json:"total"`
	Offset    int                       `json:"offset"`
	Consumers []*jetstream.ConsumerInfo `json:"consumers"`
	Error     *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

// taskConsumers returns the state of the consumers of the task stream:
// the lanes', in one request (a page of the server's list holds them
// all), which a worker may make (WorkerPermissions).
func (c *Conn) taskConsumers(ctx context.Context) ([]*jetstream.ConsumerInfo, error) {
	var all []*jetstream.ConsumerInfo
	for {
		req, _ := json.Marshal(struct {
			Offset int `json:"offset"`
		}{len(all)})
		rctx, cancel := context.WithTimeout(ctx, publishAttemptWait)
		rctx, release := c.failOnLoss(rctx)
		m, err := c.nc.RequestWithContext(rctx, "$JS.API.CONSUMER.LIST."+TaskStream, req)
		err = lossErr(rctx, err)
		release()
		cancel()
		if err != nil {
			if errors.Is(err, nats.ErrConnectionClosed) {
				return nil, fmt.Errorf("queue: task lanes: %w", ErrClosed)
			}
			return nil, fmt.Errorf("queue: task lanes: %w", err)
		}
		var page consumerList
		if err := json.Unmarshal(m.Data, &page); err != nil {
			return nil, fmt.Errorf("queue: task lanes: the server's answer: %w", err)
		}
		if page.Error != nil {
			if page.Error.ErrCode == int(jetstream.JSErrCodeStreamNotFound) {
				return nil, c.notReady("task lanes", jetstream.ErrStreamNotFound)
			}
			return nil, fmt.Errorf("queue: task lanes: %s (%d)", page.Error.Description, page.Error.ErrCode)
		}
		all = append(all, page.Consumers...)
		if len(page.Consumers) == 0 || len(all) >= page.Total {
			return all, nil
		}
	}
}

// parseLaneConsumer returns the lane whose consumer is named name.
func parseLaneConsumer(name string) (int, bool) {
	token, ok := strings.CutPrefix(name, laneConsumerPrefix)
	if !ok {
		return 0, false
	}
	lane, err := strconv.Atoi(token)
	if err != nil || lane < 0 || lane >= Lanes || laneToken(lane) != token {
		return 0, false
	}
	return lane, true
}

// TaskBySeq returns the task at stream sequence seq. The error wraps
// ErrNotFound if there is none (acked, deleted or purged), ErrMalformed if
// it does not decode.
func (c *Conn) TaskBySeq(ctx context.Context, seq uint64) (Task, error) {
	s, err := c.stream(ctx, TaskStream)
	if err != nil {
		return Task{}, err
	}
	raw, err := s.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Task{}, fmt.Errorf("queue: task at sequence %d: %w", seq, ErrNotFound)
	}
	if err != nil {
		return Task{}, c.notReady(fmt.Sprintf("task at sequence %d", seq), err)
	}
	var t Task
	if err := decodeTask(raw.Subject, raw.Data, &t); err != nil {
		return Task{}, fmt.Errorf("queue: task at sequence %d: %w", seq, err)
	}
	return t, nil
}

// DeleteTask removes the task at stream sequence seq from the stream.
// Deleting a task that is not there is not an error.
func (c *Conn) DeleteTask(ctx context.Context, seq uint64) error {
	s, err := c.stream(ctx, TaskStream)
	if err != nil {
		return err
	}
	if err := s.DeleteMsg(ctx, seq); err != nil && !isNoMessage(err) {
		return c.notReady(fmt.Sprintf("delete task at sequence %d", seq), err)
	}
	return nil
}

// isNoMessage reports whether err says that a stream has no message at the
// sequence asked for. jetstream's DeleteMsg flattens the server's error
// (code 10057, "no message found") into text, so the text is what is left
// to test.
func isNoMessage(err error) bool {
	return errors.Is(err, jetstream.ErrMsgNotFound) ||
		errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) && strings.Contains(err.Error(), "no message found")
}
