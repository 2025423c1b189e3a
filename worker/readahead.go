package worker

import (
	"math"
	"time"
)

// Read-ahead. A thread asks for its next task as soon as it starts on one,
// so that the task is at hand when this one is solved: one request ahead
// is enough while a request's round trip is shorter than a task's solving.
// Over a slow link (a round trip of 200 ms) and with tasks of tens of
// milliseconds (the easy stretches of a job), one request ahead leaves
// the thread waiting a round trip for each task. So each thread measures
// both, and keeps ceil(round trip / solving) requests out, at least one and
// at most maxReadAhead: the tasks it holds ahead are about one round trip
// of work, which is what the link costs anyway, and never a hoard.
//
// The round trip is the least time a request took to bring a task, over
// the last fetchSamples requests (a request that waited for tasks to be
// published took longer than the link: the least is the link's); the
// solving, a moving average over tasks. A round trip under localLink is a
// server on this machine or its network, and one request ahead is kept.

const (
	// maxReadAhead is the most requests for tasks a thread keeps out.
	maxReadAhead = 8
	// fetchSamples is how many recent requests the round trip is the
	// least of.
	fetchSamples = 16
	// localLink is the round trip under which one request ahead is kept.
	localLink = 5 * time.Millisecond
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
	p.solve += (d - p.solve) / 8
}

// roundTrip returns the least recent request time, 0 if none is known.
func (p *pace) roundTrip() time.Duration {
	var least time.Duration
	for _, d := range p.fetches {
		if d > 0 && (least == 0 || d < least) {
			least = d
		}
	}
	return least
}

// ahead returns how many requests for tasks the thread keeps out while it
// solves one.
func (p *pace) ahead() int {
	rt := p.roundTrip()
	if rt < localLink || p.solve == 0 {
		return 1
	}
	n := math.Ceil(float64(rt) / float64(p.solve))
	return int(min(max(n, 1), maxReadAhead))
}
