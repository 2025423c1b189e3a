package coordinator

import (
	"context"
	"slices"
	"time"

	"github.com/c4book/c4book/queue"
)

// Overdue tasks. A worker holds a task while it solves it, and tells the
// server it is still at it (InProgress), which restarts the task's
// AckWait: the server never takes back a task a worker keeps reporting
// on, and a task a worker acks without answering leaves the queue. A
// hostile key can so hold hundreds of tasks for as long as it likes, or
// make them vanish while it holds one more, so that the queue is never
// idle and recoverStranded never runs; an honest job would wait for ever.
// So the coordinator watches its tasks itself: a task in a worker's hands
// for longer than overdueAfter is published again. Any worker may take the
// new copy; the first answer is stored, a later one is a harmless
// duplicate.
//
// The coordinator does not see a task delivered, but it knows once it has
// been: a lane delivers its tasks in the order they were published, so a
// copy is in a worker's hands (or lost) once a copy published after it in
// its lane has been answered, or once its lane has no task waiting; a copy
// that only waits in its lane, for a worker to come to the lane, is not
// overdue however long it waits. overdueAfter is ten times the 90th
// percentile of how long the answered tasks took, from the answer before
// in their lane (or their publishing, if later) to theirs, and never less
// than four AckWaits: an honest slow task is at worst solved twice.

// Stragglers. At a job's end the lanes run dry, and the last tasks are in
// the hands of whoever took them: a task held by a slow worker (a machine
// whose owner is using it, at a tenth of the others' speed) holds the whole
// job for the time that worker takes, while the others wait with nothing
// to do. So once no lane has a task waiting, a task in a worker's hands for
// longer than tailAfter (three times the 90th percentile of the answer
// times, at least minTailAfter) gets one copy more, in another worker's
// lane (copyLane): the first answer is stored, the other is a harmless
// duplicate. It is MapReduce's backup task: at most one copy a task, so at
// most one task a worker is solved twice, and only at the end. Once the
// lanes are seen dry the coordinator looks every second (tailLookEvery),
// not only at its status ticks.

// overdueSamples is how many recent answer times overdueAfter is taken
// from.
const overdueSamples = 512

// minTailAfter is the least time a task is out at a job's end before it
// gets a copy: a worker on a slow link takes a round trip or two to
// answer.
const minTailAfter = 2 * time.Second

// tailLookEvery is how often the coordinator looks for stragglers once it
// has seen the lanes dry.
const tailLookEvery = time.Second

// overdueWatch is what the coordinator knows of the time its tasks take.
// It is used by the collecting goroutine only.
type overdueWatch struct {
	sentAt []int64 // when the last copy of each task was published, unix ns; 0 for none
	laneOf []uint8 // the lane of that copy
	outAt  []int64 // when the coordinator first knew that copy out of its lane, unix ns; 0 until then

	took       []time.Duration
	next       int                // where the next answer time goes in took
	lastSent   [queue.Lanes]int64 // by lane: the latest sentAt of a copy answered
	lastAnswer [queue.Lanes]int64 // by lane: when a copy was last answered; 0 for none in this run
	minAfter   time.Duration
}

func newOverdueWatch(tasks int, ackWait time.Duration) *overdueWatch {
	return &overdueWatch{sentAt: make([]int64, tasks), laneOf: make([]uint8, tasks), outAt: make([]int64, tasks), minAfter: 4 * ackWait}
}

// sent records that a copy of task i was published at now in lane.
func (w *overdueWatch) sent(i, lane int, now time.Time) {
	w.sentAt[i], w.laneOf[i], w.outAt[i] = now.UnixNano(), uint8(lane), 0
}

// answered records an answer of task i at now.
func (w *overdueWatch) answered(i int, now time.Time) {
	if i >= len(w.sentAt) || w.sentAt[i] == 0 {
		return
	}
	l, t := w.laneOf[i], now.UnixNano()
	if w.lastAnswer[l] != 0 {
		took := time.Duration(t - max(w.sentAt[i], w.lastAnswer[l]))
		if len(w.took) < overdueSamples {
			w.took = append(w.took, took)
		} else {
			w.took[w.next] = took
			w.next = (w.next + 1) % overdueSamples
		}
	}
	w.lastSent[l] = max(w.lastSent[l], w.sentAt[i])
	w.lastAnswer[l] = max(w.lastAnswer[l], t)
}

// after returns how long a task may be out before it is overdue.
func (w *overdueWatch) after() time.Duration {
	if len(w.took) == 0 {
		return w.minAfter
	}
	return max(w.minAfter, 10*w.p90())
}

// tailAfter returns how long a task may be out at a job's end (no lane
// with a task waiting) before it gets a copy.
func (w *overdueWatch) tailAfter() time.Duration {
	if len(w.took) == 0 {
		return w.minAfter // nothing known of the tasks' times: as overdue
	}
	return max(minTailAfter, 3*w.p90())
}

// p90 returns the 90th percentile of the answer times sampled, of which
// there is one at least.
func (w *overdueWatch) p90() time.Duration {
	sorted := slices.Sorted(slices.Values(w.took))
	return sorted[len(sorted)*9/10]
}

// stragglers returns the tasks among out that have been in a worker's
// hands (known so by overdue) for longer than tailAfter at now.
func (w *overdueWatch) stragglers(out []int, now time.Time) []int {
	limit := now.Add(-w.tailAfter()).UnixNano()
	var slow []int
	for _, i := range out {
		if o := w.outAt[i]; o != 0 && o < limit {
			slow = append(slow, i)
		}
	}
	return slow
}

// overdue returns the tasks among out (indexes of tasks with a copy out)
// that are overdue at now; waiting is the number of tasks waiting in each
// lane, nil if unknown.
func (w *overdueWatch) overdue(out []int, now time.Time, waiting []uint64) []int {
	t := now.UnixNano()
	limit := now.Add(-w.after()).UnixNano()
	var late []int
	for _, i := range out {
		l := w.laneOf[i]
		if s := w.sentAt[i]; s != 0 && w.outAt[i] == 0 && (s < w.lastSent[l] || waiting != nil && waiting[l] == 0) {
			w.outAt[i] = t
		}
		if o := w.outAt[i]; o != 0 && o < limit {
			late = append(late, i)
		}
	}
	return late
}

// republishOverdue publishes again the tasks that are overdue, and at a
// job's end gives the stragglers a copy each.
func (d *dispatcher) republishOverdue(ctx context.Context) error {
	out := d.outstanding()
	if len(out) == 0 {
		return nil
	}
	waiting, err := d.q.LanesWaiting(ctx)
	if err != nil {
		waiting = nil // unknown: only the tasks answered after count
	}
	now := time.Now()
	late := d.watch.overdue(out, now, waiting)
	if len(late) > 0 {
		d.sum.Overdue += int64(len(late))
		d.log.Warn("tasks overdue, held by a worker that does not answer or lost from the queue: publishing them again",
			"tasks", len(late), "out for more than", d.watch.after().Round(time.Second))
		if err := d.publishAgain(ctx, late); err != nil {
			return err
		}
	}
	d.atEnd = dry(waiting)
	if !d.atEnd || d.noTailCopies {
		return nil
	}
	var slow []int
	for _, i := range d.watch.stragglers(out, now) {
		// A task just published again as overdue has two copies out.
		if d.tasks.needed(i) && d.tasks.out[i] == 1 {
			slow = append(slow, i)
		}
	}
	if len(slow) == 0 {
		return nil
	}
	d.sum.TailCopies += int64(len(slow))
	d.log.Info("the job's last tasks: a copy of each task out for long, for a worker with nothing to do",
		"tasks", len(slow), "out for more than", d.watch.tailAfter().Round(100*time.Millisecond))
	return d.publishAgain(ctx, slow)
}

// dry reports whether no lane has a task waiting: the job's end, where
// every task left is in a worker's hands. Unknown (nil) is not dry.
func dry(waiting []uint64) bool {
	if waiting == nil {
		return false
	}
	for _, n := range waiting {
		if n > 0 {
			return false
		}
	}
	return true
}
