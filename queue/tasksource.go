package queue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

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
// the server does not answer, it returns the last value read. The reading
// is a round trip to the server, made without holding the source's lock:
// over a slow link, the threads taking tasks meanwhile do not wait for it.
func (s *TaskSource) AckWait() time.Duration {
	s.mu.Lock()
	ackWait := s.ackWait
	cons := s.cons[max(s.lane, 0)]
	stale := time.Since(s.readAt) > ackWaitFresh && cons != nil
	if stale {
		s.readAt = time.Now() // one reading at a time
	}
	s.mu.Unlock()
	if !stale {
		return ackWait
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := cons.Info(ctx)
	if err != nil {
		return ackWait
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ackWait = info.Config.AckWait
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
