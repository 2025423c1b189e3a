package worker

import "time"

// Fetching ahead. A thread that asks for its next task only once it has
// solved one waits a round trip for each task: over a link of 200 ms and
// tasks solved in a second, a sixth of its time. So it asks as it starts
// on a task, and the next is at hand when this one is solved. But a task
// taken ahead is held, unsolved, for as long as the task before takes: on
// a slow machine (one whose owner is using it, a tenth of the others'
// speed) that is long, and at a job's end, the task held ahead (or the copy
// of the thread's own task that the coordinator publishes for an idle
// worker, which the waiting request takes at once) holds the job. So a
// thread fetches ahead only while a round trip is more than a tenth of a
// task's solving: where it is less, asking after solving costs at most a
// tenth of the time, and the thread holds only the task it is at.

const (
	// fetchSamples is how many recent requests the round trip is the
	// least of.
	fetchSamples = 8
	// aheadRatio: a thread fetches ahead while its tasks take less than
	// aheadRatio round trips to solve.
	aheadRatio = 10
)

// pace is what a thread knows of its link and its tasks. It is used by the
// thread's goroutine only.
type pace struct {
	fetches [fetchSamples]time.Duration // recent requests' times, a ring; 0 for none yet
	next    int                         // the ring's next slot
	solve   time.Duration               // moving average of the time a task took; 0 for none yet
}

// fetched records a request that brought a task after d.
func (p *pace) fetched(d time.Duration) {
	p.fetches[p.next] = max(d, 1)
	p.next = (p.next + 1) % fetchSamples
}

// solved records a task that took d, from its start to its delivery's
// start.
func (p *pace) solved(d time.Duration) {
	d = max(d, 1)
	if p.solve == 0 {
		p.solve = d
		return
	}
	p.solve += (d - p.solve) / 4
}

// roundTrip returns the least recent request time: a request that waited
// for tasks to be published took longer than the link, so the least is
// the link's. 0 if none is known.
func (p *pace) roundTrip() time.Duration {
	var least time.Duration
	for _, d := range p.fetches {
		if d > 0 && (least == 0 || d < least) {
			least = d
		}
	}
	return least
}

// fetchAhead reports whether the thread asks for its next task as it
// starts on one: until it knows both times, and while a task takes less
// than aheadRatio round trips.
func (p *pace) fetchAhead() bool {
	rt := p.roundTrip()
	return rt == 0 || p.solve == 0 || p.solve < aheadRatio*rt
}
