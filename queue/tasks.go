package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
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

// TaskSource hands tasks to a worker, from one lane at a time (lanes.go):
// the lane it is in while that lane has tasks, then the lane chooseLane
// picks. It is safe for concurrent use: each worker thread calls Next when
// it is ready for a task, and the threads of a worker share its lane.
type TaskSource struct {
	c *Conn

	mu        sync.Mutex
	lane      int                       // the lane the worker is in; -1 for none yet
	laneOpen  bool                      // the last task of lane said more will come
	idle      bool                      // no lane had a task when last looked at
	cons      [Lanes]jetstream.Consumer // bound lanes
	held      [Lanes]int                // tasks delivered and not answered yet, by lane
	waiting   [Lanes]int                // pull requests of this source waiting, by lane
	lookedAt  time.Time                 // when the lanes were last looked at
	lookEvery time.Duration             // laneLookEvery; shorter in tests

	// Counts, by lane, of the tasks answered and the pull requests ended
	// since the source began: what left held and waiting while the
	// server's view of the lanes was on its way (laneStates).
	answers, pullsEnded [Lanes]uint64
	// sharedLooks counts the looks in a row that saw another worker in
	// the source's lane: it moves on the second.
	sharedLooks int
	ackWait     time.Duration // as last read from a lane's consumer
	readAt      time.Time     // when

	choosing sync.Mutex // held by the thread looking at the lanes
}

// Timing of TaskSource's lanes.
const (
	// ackWaitFresh is how long TaskSource.AckWait trusts the AckWait it
	// read.
	ackWaitFresh = 5 * time.Second
	// laneLookEvery is how often a worker looks whether another worker
	// works in its lane while a lane nobody works in has tasks (two
	// workers that chose at the same moment), and moves if so.
	laneLookEvery = 2 * time.Second
	// idleLookEvery is how often a worker with no task in any lane looks
	// at the lanes again.
	idleLookEvery = time.Second
)

// Tasks binds to the task lanes. The error wraps ErrNotReady when the
// coordinator has not created them yet (EnsureStreams); a worker retries
// later.
func (c *Conn) Tasks(ctx context.Context) (*TaskSource, error) {
	s := &TaskSource{c: c, lane: -1, lookEvery: laneLookEvery}
	if _, err := s.consumer(ctx, 0); err != nil {
		return nil, err
	}
	return s, nil
}

// consumer returns the consumer of lane, bound on first use.
func (s *TaskSource) consumer(ctx context.Context, lane int) (jetstream.Consumer, error) {
	s.mu.Lock()
	cons := s.cons[lane]
	s.mu.Unlock()
	if cons != nil {
		return cons, nil
	}
	cons, err := s.c.js.Consumer(ctx, TaskStream, LaneConsumer(lane))
	if err != nil {
		return nil, s.c.notReady("bind consumer "+LaneConsumer(lane), err)
	}
	s.mu.Lock()
	s.cons[lane] = cons
	if s.readAt.IsZero() {
		s.ackWait, s.readAt = cons.CachedInfo().Config.AckWait, time.Now()
	}
	s.mu.Unlock()
	return cons, nil
}

// AckWait returns the task consumers' AckWait, as the last coordinator to
// start set it, read again when the last reading is over a few seconds
// old: a worker must report progress on a task more often than that. While
// the server does not answer, it returns the last value read.
func (s *TaskSource) AckWait() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.readAt) > ackWaitFresh {
		s.readAt = time.Now()
		cons := s.cons[max(s.lane, 0)]
		if cons == nil {
			return s.ackWait
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if info, err := cons.Info(ctx); err == nil {
			s.ackWait = info.Config.AckWait
		}
	}
	return s.ackWait
}

// Lane returns the lane the source takes its tasks from, -1 before its
// first task.
func (s *TaskSource) Lane() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lane
}

// Next waits for the next task until ctx is done. It pulls exactly one
// message from the server, so the task's AckWait starts now: call Next only
// when ready to work on the task, and report progress with InProgress
// while solving.
//
// It pulls from the worker's lane; from a lane that said it has no more
// tasks, without waiting; and from a lane that will get more, waiting for
// them up to pullWait. A lane that gives nothing is left for the one
// chooseLane picks; with no task in any lane, Next waits on the lane after
// its own and looks at every lane again every idleLookEvery.
//
// A message that does not decode is terminated (never delivered again) and
// returned as a *DecodeError, which wraps ErrMalformed; the source keeps
// working, and the worker logs the error and calls Next again. Other errors:
// ctx's error, ErrClosed, ErrNotReady (a lane's consumer was deleted).
//
// A task that the server delivers just as ctx ends is not lost: nobody
// receives it, and it is delivered again after AckWait.
func (s *TaskSource) Next(ctx context.Context) (*TaskMsg, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.lookAgain(ctx); err != nil {
			return nil, err
		}
		s.mu.Lock()
		lane, open, idle := s.lane, s.laneOpen, s.idle
		s.mu.Unlock()
		wait := time.Duration(0) // a lane with no more to come: only what it has
		switch {
		case idle:
			wait = idleLookEvery
		case open || lane < 0:
			wait = pullWait
		}
		m, err := s.pull(ctx, max(lane, 0), wait)
		if err != nil {
			return nil, err
		}
		if m != nil {
			return s.take(max(lane, 0), m)
		}
		// Nothing in the lane: another, if one has tasks.
		s.mu.Lock()
		if s.lane == lane {
			s.laneOpen = false
			s.lookedAt = time.Time{}
		}
		s.mu.Unlock()
	}
}

// lookAgain chooses the worker's lane when it has none with tasks to come,
// or when it is time to look whether another worker shares it
// (laneLookEvery). One thread looks; the others wait for its choice.
func (s *TaskSource) lookAgain(ctx context.Context) error {
	s.mu.Lock()
	due := !s.laneOpen || time.Since(s.lookedAt) > s.lookEvery
	s.mu.Unlock()
	if !due {
		return nil
	}
	s.choosing.Lock()
	defer s.choosing.Unlock()
	s.mu.Lock()
	cur, open, lookedAt := s.lane, s.laneOpen, s.lookedAt
	s.mu.Unlock()
	if open && time.Since(lookedAt) <= s.lookEvery {
		return nil // another thread looked meanwhile
	}
	lanes, err := s.laneStates(ctx)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrClosed) || errors.Is(err, ErrNotReady) {
			return err
		}
		// The server did not answer: wait on the lane we are in, and
		// look again later.
		s.c.log.Debug("queue: looking at the task lanes", "err", err)
		s.mu.Lock()
		s.lane, s.laneOpen, s.lookedAt = max(cur, 0), true, time.Now()
		s.mu.Unlock()
		return nil
	}
	next, idle := cur, false
	shared := cur >= 0 && lanes[cur].busy()
	s.mu.Lock()
	if shared {
		s.sharedLooks++
	} else {
		s.sharedLooks = 0
	}
	sharedAgain := s.sharedLooks >= 2
	s.mu.Unlock()
	switch {
	case !open || cur < 0:
		// A lane with tasks, or, with none anywhere, the lane after ours,
		// where the job's next task comes when its coordinator publishes
		// few at a time: either way, wait on it (open) for a while.
		if next = chooseLane(lanes, cur); next < 0 {
			next, idle = (cur+1)%Lanes, true
			if cur >= 0 && lanes[cur].out > 0 {
				next = cur // tasks out of our lane may come back to it
			}
		}
		open = true
	case sharedAgain && rand.IntN(2) == 0:
		// Another worker chose this lane too (seen twice in a row, not a
		// passing count): one of the two moves, to a lane nobody works
		// in.
		if l := chooseLane(lanes, cur); l >= 0 && lanes[l].free() {
			next = l
		}
	}
	if next != cur {
		s.c.log.Debug("queue: taking tasks from another lane", "from", cur, "to", next, "shared", shared, "idle", idle)
	}
	s.mu.Lock()
	if next != cur {
		s.sharedLooks = 0
	}
	s.lane, s.laneOpen, s.idle, s.lookedAt = next, open, idle, time.Now()
	s.mu.Unlock()
	return nil
}

// take returns the task m delivered from lane, counting it held until it
// is answered; a message that does not decode is terminated and returned
// as a *DecodeError.
func (s *TaskSource) take(lane int, m jetstream.Msg) (*TaskMsg, error) {
	tm := &TaskMsg{}
	if md, err := m.Metadata(); err == nil {
		tm.Seq, tm.Delivered = md.Sequence.Stream, md.NumDelivered
	}
	if err := decodeTask(m.Subject(), m.Data(), &tm.Task); err != nil {
		derr := decodeError(m, err)
		if terr := m.TermWithReason(err.Error()); terr != nil {
			s.c.log.Warn("queue: could not terminate malformed task", "subject", m.Subject(), "seq", tm.Seq, "err", terr)
		}
		return nil, derr
	}
	left, err := strconv.Atoi(m.Headers().Get(laneLeftHeader))
	s.mu.Lock()
	s.held[lane]++
	if s.lane == lane {
		s.laneOpen, s.idle = err == nil && left > 0, false
	}
	s.mu.Unlock()
	var once sync.Once
	tm.reply = jsReplier{c: s.c, m: m, answered: func(back bool) {
		once.Do(func() {
			s.mu.Lock()
			s.held[lane]--
			s.answers[lane]++
			if back && s.lane == lane {
				s.laneOpen, s.idle = true, false // it comes back to the lane
			}
			s.mu.Unlock()
		})
	}}
	return tm, nil
}

// pull returns the next task message of lane, waiting up to wait for one
// (none: only one waiting already), or nil if none came.
func (s *TaskSource) pull(ctx context.Context, lane int, wait time.Duration) (jetstream.Msg, error) {
	cons, err := s.consumer(ctx, lane)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.waiting[lane]++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.waiting[lane]--
		s.pullsEnded[lane]++
		s.mu.Unlock()
	}()
	return s.c.pullWithin(ctx, cons, "next task", wait)
}

// laneStates returns the state of every lane, from its consumer, with this
// source's own tasks and pull requests taken out.
//
// The server counts a lane's tasks delivered and not acked and its pull
// requests waiting at some instant while the request is on its way; the
// source's own counts are read when the answer is back. What left them
// meanwhile (a task acked by the worker's delivery goroutine, a pull
// request ended) is still in the server's counts, and taken out as the
// source's too: else a worker alone in its lane would see another worker
// there now and then, and leave its stretch of the job for nothing (as
// the first depth-14 run showed: a move every few seconds to a minute).
// What came in meanwhile (a task delivered) is not in the server's counts
// and makes the source's own larger: the others are then counted at
// least 0, at worst one look late.
func (s *TaskSource) laneStates(ctx context.Context) ([]laneState, error) {
	s.mu.Lock()
	answers, pullsEnded := s.answers, s.pullsEnded
	s.mu.Unlock()
	infos, err := s.c.taskConsumers(ctx)
	if err != nil {
		return nil, err
	}
	lanes := make([]laneState, Lanes)
	found := 0 // lanes' consumers
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, info := range infos {
		l, ok := parseLaneConsumer(info.Name)
		if !ok {
			continue
		}
		found++
		ownHeld := s.held[l] + int(s.answers[l]-answers[l])
		ownWaiting := s.waiting[l] + int(s.pullsEnded[l]-pullsEnded[l])
		held := max(info.NumAckPending-ownHeld, 0)    // by other workers, or left
		waiting := max(info.NumWaiting-ownWaiting, 0) // other workers' pulls
		if waiting == 0 && held > 0 && abandoned(info) {
			// Nobody works in the lane: its tasks delivered and not
			// answered wait for a worker to pull, to be delivered again
			// (or given up on, after MaxDeliver deliveries).
			lanes[l] = laneState{pending: info.NumPending + uint64(held), out: info.NumAckPending}
			continue
		}
		lanes[l] = laneState{pending: info.NumPending, others: held + waiting, out: info.NumAckPending}
	}
	if found == 0 {
		return nil, fmt.Errorf("queue: task lanes: no consumer: %w", ErrNotReady)
	}
	return lanes, nil // a lane not found (not made yet, or deleted and not made again yet) has no task
}

// abandoned reports whether the lane of consumer info has delivered
// nothing for two of its AckWaits, by the server's clock: the tasks it
// delivered and that are not answered are in the hands of no worker that
// works there (one that dies leaves them so, and one that hands a task
// back and moves on), and wait for a worker to pull. A worker on a task
// longer than that looks gone too, and another may join its lane: both
// then take its tasks, which is harmless.
func abandoned(info *jetstream.ConsumerInfo) bool {
	last := info.Delivered.Last
	return last == nil || info.TimeStamp.Sub(*last) > 2*info.Config.AckWait
}

// decodeTask decodes the task in data, published on subject, into t; the
// task's job must be the subject's, whose lane it takes.
func decodeTask(subject string, data []byte, t *Task) error {
	if err := t.UnmarshalBinary(data); err != nil {
		return err
	}
	job, lane, ok := parseTaskSubject(subject)
	if !ok || job != t.JobID {
		return malformed("task %s/%d published on %s, not on a lane of %s", t.JobID, t.TaskID, subject, TaskSubject(t.JobID))
	}
	t.Lane = lane
	return nil
}

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
