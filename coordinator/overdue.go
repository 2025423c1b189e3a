package coordinator

import (
	"context"
	"slices"
	"time"
)

// Overdue tasks. A worker holds a task while it solves it, and tells the
// server it is still at it (InProgress), which restarts the task's
// AckWait: the server never takes back a task a worker keeps reporting
// on, and a task a worker acks without answering leaves the queue. A
// hostile key can so hold hundreds of tasks for as long as it likes, or
// make them vanish while it holds one more, so that the queue is never
// idle and recoverStranded never runs; an honest job would wait for ever.
// So the coordinator watches its tasks itself: a task out for longer than
// overdueAfter, while a task published after it has been answered (it is
// not merely waiting its turn in the queue) or while no task waits in the
// queue at all (so every task out is in a worker's hands, or lost: the end
// of a job, where a hoarder holds the last tasks), is published again. Any
// worker may take the new copy; the first answer is stored, a later one is
// a harmless duplicate. overdueAfter is ten times the 90th percentile of
// how long the answered tasks took, publish to answer, and never less than
// four AckWaits: an honest slow task is at worst solved twice.

// overdueSamples is how many recent answer times overdueAfter is taken
// from.
const overdueSamples = 512

// overdueWatch is what the coordinator knows of the time its tasks take.
// It is used by the collecting goroutine only.
type overdueWatch struct {
	sentAt   []int64 // when the last copy of each task was published, unix ns; 0 for none
	took     []time.Duration
	next     int   // where the next answer time goes in took
	lastSent int64 // the latest sentAt of a task answered
	minAfter time.Duration
}

func newOverdueWatch(tasks int, ackWait time.Duration) *overdueWatch {
	return &overdueWatch{sentAt: make([]int64, tasks), minAfter: 4 * ackWait}
}

// sent records that a copy of task i was published at now.
func (w *overdueWatch) sent(i int, now time.Time) { w.sentAt[i] = now.UnixNano() }

// answered records an answer of task i at now.
func (w *overdueWatch) answered(i int, now time.Time) {
	if i >= len(w.sentAt) || w.sentAt[i] == 0 {
		return
	}
	took := time.Duration(now.UnixNano() - w.sentAt[i])
	if len(w.took) < overdueSamples {
		w.took = append(w.took, took)
	} else {
		w.took[w.next] = took
		w.next = (w.next + 1) % overdueSamples
	}
	w.lastSent = max(w.lastSent, w.sentAt[i])
}

// after returns how long a task may be out before it is overdue.
func (w *overdueWatch) after() time.Duration {
	if len(w.took) == 0 {
		return w.minAfter
	}
	sorted := slices.Sorted(slices.Values(w.took))
	return max(w.minAfter, 10*sorted[len(sorted)*9/10])
}

// overdue returns the tasks among out (indexes of tasks with a copy out)
// that are overdue at now; idle says that no task waits in the queue.
func (w *overdueWatch) overdue(out []int, now time.Time, idle bool) []int {
	limit := now.Add(-w.after()).UnixNano()
	var late []int
	for _, i := range out {
		if s := w.sentAt[i]; s != 0 && s < limit && (idle || s < w.lastSent) {
			late = append(late, i)
		}
	}
	return late
}

// republishOverdue publishes again the tasks that are overdue.
func (d *dispatcher) republishOverdue(ctx context.Context) error {
	out := d.outstanding()
	if len(out) == 0 {
		return nil
	}
	waiting, err := d.q.TasksWaiting(ctx)
	if err != nil {
		waiting = 1 // unknown: only the tasks answered after count
	}
	late := d.watch.overdue(out, time.Now(), waiting == 0)
	if len(late) == 0 {
		return nil
	}
	d.sum.Overdue += int64(len(late))
	d.log.Warn("tasks overdue, held by a worker that does not answer or lost from the queue: publishing them again",
		"tasks", len(late), "out for more than", d.watch.after().Round(time.Second))
	return d.publishAgain(ctx, late)
}
