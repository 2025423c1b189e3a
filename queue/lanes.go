package queue

import (
	"fmt"
	"strconv"
	"strings"
)

// Lanes. A worker's table helps a task as far as the task's positions
// share descendants with the positions the table saw before: a worker
// that solves a whole stretch of a job's order is far faster than two
// workers that take its tasks in turn, each seeing every other
// neighbour (docs/benchmarks.md, "Locality across workers"). So the task
// stream is cut into Lanes lanes, each with a durable consumer of its
// own (LaneConsumer), and a coordinator puts the tasks of a stretch of
// its job's order in one lane: task i of n in lane i*Lanes/n (fewer
// lanes for a job of fewer tasks), on subject "c4book.tasks.<job>.<lane>"
// (TaskLaneSubject).
//
// A worker takes its tasks from one lane at a time (TaskSource), and
// picks its lanes as range splitting does (chooseLane): the next lane
// after its own when nobody works there, so that it goes on through the
// job's order; else the middle of the longest run of lanes nobody works
// on, so that two workers split what is left in two stretches; and, once
// every lane with tasks has a worker, the lane with the most tasks
// waiting, so that the tail of a job spreads over every worker. A worker
// that leaves hands its tasks back to their lane, where the next worker
// looking for work finds them; one that joins late takes the middle of
// the largest stretch nobody works on, at once.
//
// Each task says, in the header C4book-Lane-Left, how many tasks of its
// lane the coordinator has still to publish: a worker stays in a lane
// that is empty for the moment but will get more (its coordinator
// publishes a lane's tasks a window at a time), and leaves one that said
// it has no more at once.

// Lanes is the number of lanes of the task stream, each with its
// consumer. It is part of the protocol between coordinators and workers.
const Lanes = 64

// laneConsumerPrefix starts the name of a lane's consumer.
const laneConsumerPrefix = "c4book-lane-"

// laneLeftHeader carries, on a task, the number of tasks of its lane the
// coordinator has still to publish.
const laneLeftHeader = "C4book-Lane-Left"

// LaneConsumer returns the name of the durable consumer of lane:
// "c4book-lane-07".
func LaneConsumer(lane int) string { return laneConsumerPrefix + laneToken(lane) }

// laneToken returns lane as the last token of a task subject: two digits.
func laneToken(lane int) string { return fmt.Sprintf("%02d", lane) }

// TaskLaneSubject returns the subject of job's tasks in lane:
// "c4book.tasks.<job>.<lane>", the lane in two digits.
func TaskLaneSubject(job string, lane int) string {
	return TaskSubject(job) + "." + laneToken(lane)
}

// laneFilter returns the filter of lane's consumer: the lane's tasks of
// every job.
func laneFilter(lane int) string { return taskSubjectPrefix + "*." + laneToken(lane) }

// parseTaskSubject returns the job and the lane of a task subject, ok
// false if subject is not one.
func parseTaskSubject(subject string) (job string, lane int, ok bool) {
	rest, ok := strings.CutPrefix(subject, taskSubjectPrefix)
	if !ok {
		return "", 0, false
	}
	job, token, ok := strings.Cut(rest, ".")
	if !ok || len(token) != 2 {
		return "", 0, false
	}
	lane, err := strconv.Atoi(token)
	if err != nil || lane < 0 || lane >= Lanes || laneToken(lane) != token {
		return "", 0, false
	}
	return job, lane, true
}

// JobLanes returns the number of lanes a job of n tasks uses: Lanes, or
// n when fewer.
func JobLanes(n int) int { return max(1, min(n, Lanes)) }

// TaskLane returns the lane of task i of a job of n tasks: the job's
// order cut into JobLanes(n) stretches of (nearly) equal length.
func TaskLane(i, n int) int {
	return int(int64(i) * int64(JobLanes(n)) / int64(max(n, 1)))
}

// laneState is what a worker choosing a lane sees of it: from the lane's
// consumer, and of its own part in it.
type laneState struct {
	pending uint64 // tasks in the lane not delivered yet
	others  int    // tasks delivered and pull requests waiting, of other workers
	out     int    // tasks delivered and not answered, this worker's too
}

// busy reports whether another worker works in the lane.
func (s laneState) busy() bool { return s.others > 0 }

// free reports whether the lane has tasks waiting and nobody working on
// it.
func (s laneState) free() bool { return s.pending > 0 && !s.busy() }

// chooseLane returns the lane a worker takes next, given every lane's
// state and the lane it leaves (cur, -1 for none), or -1 when no lane has
// a task waiting:
//
//  1. the first free lane after cur, when no busy lane lies between them:
//     the worker goes on through the job's order (over lanes finished);
//  2. else the free lane farthest from the busy lanes on both sides, the
//     middle of the longest run of free and finished lanes: the worker
//     behind the run goes on into its first half, this one takes the
//     second (with no busy lane, the first free lane after cur);
//  3. else, every lane with tasks having a worker, the one with the most
//     tasks waiting: the tail of the job is shared.
func chooseLane(lanes []laneState, cur int) int {
	n := len(lanes)
	if n == 0 {
		return -1
	}
	start := cur + 1
	if cur < 0 {
		start = 0
	}
	anyBusy := false
	for _, s := range lanes {
		anyBusy = anyBusy || s.busy()
	}
	// 1.
	for k := range n {
		l := (start + k) % n
		if l == cur && cur >= 0 {
			break
		}
		if lanes[l].busy() {
			break
		}
		if lanes[l].free() {
			return l
		}
	}
	// 2.
	if anyBusy {
		best, bestNear, bestRun := -1, 0, 0
		for l := range n {
			if !lanes[l].free() {
				continue
			}
			back, fwd := 1, 1 // distances to the nearest busy lane behind and ahead
			for !lanes[(l-back+n)%n].busy() {
				back++
			}
			for !lanes[(l+fwd)%n].busy() {
				fwd++
			}
			if near, run := min(back, fwd), back+fwd; near > bestNear || near == bestNear && run > bestRun {
				best, bestNear, bestRun = l, near, run
			}
		}
		if best >= 0 {
			return best
		}
	}
	// 3.
	best := -1
	for l, s := range lanes {
		if s.pending > 0 && (best < 0 || s.pending > lanes[best].pending) {
			best = l
		}
	}
	return best
}
