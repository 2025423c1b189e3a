package coordinator

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// Dispatch. The dispatcher puts a run's tasks on the queue, and sees to it
// that a task the job still needs always has a copy out, whatever happens
// to the copies:
//
//   - Lanes: the plan's order is cut into stretches, one per lane of the
//     task stream (queue.TaskLane), so that a worker takes a whole stretch
//     and its table sees every neighbour of its tasks (queue/lanes.go).
//   - A window: each lane's tasks are published a first time in the
//     plan's order (next), at most Config.Window of them published and
//     still needed at a time, and at most an equal share of it in each
//     lane (open), so that the stream holds a bounded number of messages
//     whatever the job's size; each task done or failed makes room for
//     the next of its lane (publishMore).
//   - Copies: a task answered and still needed (its result refused, or a
//     cross-check awaiting a second worker), overdue (overdue.go), or lost
//     from the stream is published again, a new copy with a new message id
//     (taskid.go), in the lane of another worker than the one that
//     answered it (copyLane); a task that ran out of copies is given up
//     on.
//   - Failures: a task the server delivered MaxDeliver times without a
//     result is given up on (taskFailed), as is one found in the stream
//     once the queue is idle, whose notice was missed (recoverStranded).
//   - The referee: a task being refereed (crosscheck.go) needs no copy,
//     and is neither given up on nor published again, until its verdict;
//     it keeps its place in the window.
//
// What a result is worth is not the dispatcher's to judge (trust.go): the
// job tells it which tasks were answered and which are done.

// dispatcher publishes a run's tasks. It is used by the collecting
// goroutine only.
type dispatcher struct {
	// Set when the run's plan is open; read-only after.
	q          Queue
	log        *slog.Logger
	jobID      string
	run        int
	board      *solver.Board
	window     int
	maxDeliver int
	secret     runSecret // the copy ids
	sum        *Summary  // the job's: Overdue

	// The run's tasks, owned by the dispatcher: trust reads them, and
	// records who solved a task (taskTable.by).
	tasks *taskTable
	watch *overdueWatch

	// The lanes and their windows, by lane of the job.
	lanes      int   // lanes of the job: queue.JobLanes
	laneWindow int   // most tasks of a lane open at a time
	next       []int // the next task of each lane to publish a first time
	open       []int // tasks of each lane published a first time and still needed
	openAll    int   // of every lane

	// Where the workers are: the lane each worker (numbered in order of
	// its first answer, from 1) answered from last, and who answered each
	// task last (0: nobody), so that a copy goes where another worker
	// takes it (copyLane).
	workerNo   map[string]int32
	workerLane []seenIn // by worker number - 1
	answerer   []int32  // by task

	// atEnd: no lane had a task waiting when last looked at
	// (republishOverdue), the job's end: look for stragglers often.
	atEnd        bool
	noTailCopies bool // Config.noTailCopies
}

// seenIn is the lane a worker answered from last, and when.
type seenIn struct {
	lane int
	at   time.Time
}

// newDispatcher returns the dispatcher of tasks for run run of the job of
// cfg, nothing published yet.
func newDispatcher(cfg Config, jobID string, run int, secret runSecret, log *slog.Logger, sum *Summary, tasks *taskTable) *dispatcher {
	d := &dispatcher{q: cfg.Queue, log: log, jobID: jobID, run: run, board: cfg.Spec.Board, window: cfg.Window,
		maxDeliver: cfg.Stream.MaxDeliver, secret: secret, sum: sum, tasks: tasks, watch: newOverdueWatch(tasks.Len(), cfg.Stream.AckWait),
		noTailCopies: cfg.noTailCopies}
	d.workerNo, d.answerer = map[string]int32{}, make([]int32, tasks.Len())
	d.lanes = queue.JobLanes(tasks.Len())
	d.laneWindow = max(1, cfg.Window/d.lanes)
	d.next, d.open = make([]int, d.lanes), make([]int, d.lanes)
	for l := range d.lanes {
		d.next[l], _ = d.laneBounds(l)
	}
	return d
}

// laneBounds returns the tasks [from, to) of lane l of the job.
func (d *dispatcher) laneBounds(l int) (from, to int) {
	n, lanes := int64(d.tasks.Len()), int64(d.lanes)
	bound := func(l int64) int { return int((l*n + lanes - 1) / lanes) } // the first task i with queue.TaskLane(i, n) >= l
	return bound(int64(l)), bound(int64(l) + 1)
}

// lane returns the lane of task i.
func (d *dispatcher) lane(i int) int { return queue.TaskLane(i, d.tasks.Len()) }

// publishMore publishes a first copy of each of the next tasks not done of
// each lane, up to the lane's window, in one call. A cross-checked task
// gets its second copy when the first is answered (collect publishes again
// a task still needed with no copy out): see trust.go.
func (d *dispatcher) publishMore(ctx context.Context) error {
	var batch []queue.Task
	for l := range d.lanes {
		_, to := d.laneBounds(l)
		for d.open[l] < d.laneWindow && d.openAll < d.window && d.next[l] < to {
			i := d.next[l]
			d.next[l]++
			if !d.tasks.needed(i) {
				if d.tasks.refereeing[i] && !d.tasks.failed[i] {
					d.open[l]++ // an earlier run's results sent it to the referee: it keeps its place until done
					d.openAll++
				}
				continue
			}
			t, err := d.taskMsg(i)
			if err != nil {
				return err
			}
			batch = append(batch, t)
			d.open[l]++
			d.openAll++
		}
	}
	return d.publish(ctx, batch)
}

// issued reports whether task i has been published a first time in this
// run: a task not issued yet is published in its turn, never again.
func (d *dispatcher) issued(i int) bool { return i < d.tasks.Len() && i < d.next[d.lane(i)] }

// closed counts task i, published, as no longer needed: done or failed.
func (d *dispatcher) closed(i int) {
	if l := d.lane(i); d.issued(i) && d.open[l] > 0 {
		d.open[l]--
		d.openAll--
	}
}

// answered records an answer of worker to a copy of task index, whatever
// it is worth, and reports whether index is a task of the plan. The
// answer of a quarantined worker (trusted false) counts against the
// task's copies out, but not as a copy (taskTable.answered); copies are
// not sent where it works (copyLane), and its answers are not timed
// (overdue.go).
func (d *dispatcher) answered(index int, worker string, trusted bool) bool {
	if index >= d.tasks.Len() {
		return false
	}
	d.tasks.answered(index, trusted)
	if !trusted {
		return true
	}
	now := time.Now()
	d.watch.answered(index, now)
	no, ok := d.workerNo[worker]
	if !ok {
		d.workerLane = append(d.workerLane, seenIn{lane: -1})
		no = int32(len(d.workerLane))
		d.workerNo[worker] = no
	}
	if d.watch.sentAt[index] != 0 {
		d.workerLane[no-1] = seenIn{int(d.watch.laneOf[index]), now}
	}
	d.answerer[index] = no
	return true
}

// done marks task index done: its entries are stored. A failed task's late
// result is welcome; it made room in the window when it failed.
func (d *dispatcher) done(index int) {
	if d.tasks.setParked(index, false) {
		d.tasks.setDone(index) // it gave up its place in the window when parked
		return
	}
	if !d.tasks.failed[index] {
		d.closed(index)
	}
	d.tasks.setDone(index)
}

// park parks task index (see taskTable.parked): it gives up its place in
// its lane's window until unparked.
func (d *dispatcher) park(index int) {
	if d.tasks.setParked(index, true) {
		d.closed(index)
	}
}

// unpark unparks task index, if parked, taking a place in its lane's
// window again, and reports whether it is to be published again now.
func (d *dispatcher) unpark(index int) bool {
	if !d.tasks.setParked(index, false) || !d.issued(index) {
		return false
	}
	d.open[d.lane(index)]++
	d.openAll++
	return d.tasks.needed(index)
}

// refereeing marks task index as being refereed (on), or no longer (off:
// decided, or its case void): see taskTable.refereeing.
func (d *dispatcher) refereeing(index int, on bool) { d.tasks.refereeing[index] = on }

// reopen marks task i, done or failed, as needing a result again, and
// reports whether it is to be published again now (an issued task; the
// others are published in their turn).
func (d *dispatcher) reopen(i int) bool {
	d.tasks.reopen(i)
	if d.issued(i) {
		d.open[d.lane(i)]++
		d.openAll++
		return true
	}
	return false
}

// outstanding returns the tasks issued and still needed with a copy out.
func (d *dispatcher) outstanding() []int {
	var out []int
	for l := range d.lanes {
		from, _ := d.laneBounds(l)
		for i := from; i < d.next[l]; i++ {
			if d.tasks.needed(i) && d.tasks.out[i] > 0 {
				out = append(out, i)
			}
		}
	}
	return out
}

// lost records that the copies out of tasks indexes are lost: none will be
// answered.
func (d *dispatcher) lost(indexes []int) {
	for _, i := range indexes {
		d.tasks.out[i] = 0
	}
}

// publishAnswered publishes again the tasks of answered, issued and still
// needed, that have no copy out: a task the job still needs always has a
// copy out, and the worker that answered may have acked its copy.
func (d *dispatcher) publishAnswered(ctx context.Context, answered []int) error {
	var short []int
	for _, i := range answered {
		if d.issued(i) && d.tasks.needed(i) && d.tasks.out[i] == 0 {
			short = append(short, i)
		}
	}
	if len(short) == 0 {
		return nil
	}
	return d.publishAgain(ctx, short)
}

// publishAgain publishes a new copy of each task of indexes that is not
// done, in one call. A task that ran out of copies is given up on.
func (d *dispatcher) publishAgain(ctx context.Context, indexes []int) error {
	slices.Sort(indexes)
	indexes = slices.Compact(indexes)
	var tasks []queue.Task
	for _, i := range indexes {
		if !d.tasks.needed(i) {
			continue
		}
		if d.tasks.copies[i] >= maxCopies {
			d.closed(i)
			d.tasks.setFailed(i)
			d.log.Error("task given up on: published the most times without an accepted result", "task", i, "positions", d.moves(i))
			continue
		}
		t, err := d.taskMsg(i)
		if err != nil {
			return err
		}
		tasks = append(tasks, t)
	}
	return d.publish(ctx, tasks)
}

// taskMsg returns the next copy of task index of this run, ready to
// publish, and counts it published. The first copy goes in the task's
// lane, in its turn; a later one in a lane half the lanes away (and one
// further for each copy more), where another worker takes it than the one
// that answered or holds the copy before.
func (d *dispatcher) taskMsg(index int) (queue.Task, error) {
	keys, err := d.tasks.publishedKeys(index)
	if err != nil {
		return queue.Task{}, err
	}
	copies := int(d.tasks.serial[index])
	lane := d.lane(index)
	if copies > 0 {
		lane = d.copyLane(index, copies)
	}
	left := 0 // the tasks of lane still to publish a first time
	if lane < d.lanes {
		_, to := d.laneBounds(lane)
		left = to - d.next[lane]
	}
	t := queue.Task{JobID: d.jobID, TaskID: taskID(d.run, d.secret.copyID(index, d.tasks.published(index)), index),
		Width: uint8(d.board.Width()), Height: uint8(d.board.Height()), Keys: keys, Lane: lane, LaneLeft: left}
	d.watch.sent(index, lane, time.Now())
	return t, nil
}

// workerSeenFor is how recently a worker must have answered from a lane
// for a copy to be sent to that lane for it.
const workerSeenFor = time.Minute

// copyLane returns the lane of the copy-th copy (from 1) of task index:
// where another worker than its last answerer, and than the one likely to
// hold its last copy, takes it soon (a cross-check needs another
// identity; an overdue or tail copy another pair of hands): the lane that
// worker answered from last (the most recent of such workers), or, when
// that lane has no task of the job left to answer but the ones in its
// hands, the next of the job's lanes that has, where it goes on. A worker
// last seen in the lane of the task's last copy is taken for its holder.
// With no other worker seen in the last workerSeenFor, half the lanes
// away from the task's own (one further for each copy more).
func (d *dispatcher) copyLane(index, copies int) int {
	avoid := d.answerer[index]
	holders := int(d.watch.laneOf[index]) // the lane of its last copy
	best := seenIn{lane: -1}
	for k, seen := range d.workerLane {
		if int32(k+1) != avoid && seen.lane >= 0 && seen.lane != holders && time.Since(seen.at) < workerSeenFor && seen.at.After(best.at) {
			best = seen
		}
	}
	if best.lane < 0 {
		return (d.lane(index) + queue.Lanes/2 + copies - 1) % queue.Lanes
	}
	if best.lane >= d.lanes {
		return best.lane // a lane of copies only
	}
	for k := range d.lanes {
		l := (best.lane + k) % d.lanes
		if _, to := d.laneBounds(l); d.next[l] < to || d.open[l] > 1 {
			return l
		}
	}
	return best.lane
}

// publish publishes tasks, waiting for the server if it does not answer.
// Publishing again is harmless: message ids make it idempotent.
func (d *dispatcher) publish(ctx context.Context, tasks []queue.Task) error {
	if len(tasks) == 0 {
		return nil
	}
	return retry(ctx, d.log, "publishing tasks", func() error { return d.q.PublishTasks(ctx, tasks) })
}

// taskFailed records the task at stream sequence seq as given up on.
func (d *dispatcher) taskFailed(ctx context.Context, seq uint64) {
	t, err := d.q.TaskBySeq(ctx, seq)
	if err != nil {
		d.log.Warn("a task exhausted its deliveries but cannot be read", "seq", seq, "error", err)
		return
	}
	if t.JobID != d.jobID {
		return // another job's: its coordinator reports it
	}
	run, _, index := splitTaskID(t.TaskID)
	if run != d.run || !d.tasks.needed(index) {
		_ = d.q.DeleteTask(ctx, seq)
		return
	}
	d.closed(index)
	d.tasks.setFailed(index)
	d.log.Error("task failed: delivered the most times without a result", "task", index, "deliveries", d.maxDeliver, "positions", d.moves(index))
	if err := d.q.DeleteTask(ctx, seq); err != nil {
		d.log.Warn("deleting a failed task", "seq", seq, "error", err)
	}
}

// recoverStranded looks for the tasks of the job that no worker will get,
// once the task queue is idle (see queue.Conn.StrandedTasks): a task still
// in the stream was given up on, and is failed as if its notice had come;
// a task published and not answered that is not in the stream was lost,
// and is published again. Passing queue errors leave it for the next look.
func (d *dispatcher) recoverStranded(ctx context.Context) error {
	seqs, idle, err := d.q.StrandedTasks(ctx, d.jobID)
	if err != nil || !idle {
		if err != nil && ctx.Err() == nil {
			d.log.Debug("looking for stranded tasks", "error", err)
		}
		return nil
	}
	for _, seq := range seqs {
		d.taskFailed(ctx, seq)
	}
	lost := d.outstanding()
	if len(lost) == 0 {
		return nil
	}
	d.log.Warn("tasks lost from the queue (purged, or lost with the server's storage): publishing them again", "tasks", len(lost))
	d.lost(lost)
	err = d.publishAgain(ctx, lost)
	if err == nil {
		err = d.publishMore(ctx) // given up on, some may have closed
	}
	return err
}

// appendFailed appends to failed the tasks given up on and not done since.
func (d *dispatcher) appendFailed(failed []FailedTask) []FailedTask {
	for i := range d.tasks.Len() {
		if d.tasks.failed[i] && !d.tasks.done[i] {
			failed = append(failed, FailedTask{Index: i, Moves: d.moves(i)})
		}
	}
	return failed
}

// moves returns the move strings of the positions of task index.
func (d *dispatcher) moves(index int) []string {
	var moves []string
	keys, _ := d.tasks.keys(index)
	for _, k := range keys {
		if p, err := d.board.PositionFromKey(k); err == nil {
			s, _ := p.MoveString()
			moves = append(moves, s)
		}
	}
	return moves
}
