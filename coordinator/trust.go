package coordinator

import (
	"context"
	"fmt"
	"slices"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// Trust. Workers may be wrong (a bad machine, a bug) or lie (anyone who
// can publish on the server). A result is checked against the task the
// coordinator issued (checkResult); beyond that, every result is counted
// for its sender's identity: the worker its subject names, which the
// server chose for a worker with a key (the key's name), and which a
// worker without a key (a shared token, no authentication) names itself.
//
//   - Quarantine: a worker whose results were rejected QuarantineAfter
//     times, or that failed one cross-check, is quarantined for the job:
//     its results are ignored from then on (and the tasks they were for
//     published again), the job's record keeps it (a coordinator run again
//     ignores it from the start), and its results stored earlier in the job
//     are solved again by others (requeue).
//   - Cross-checking: a fraction of the tasks (CrossCheck), chosen by a
//     secret drawn at each run, is solved twice, and their scores are
//     stored only once two different identities agree. A task is published
//     once; the second copy of a checked one is published when its first
//     answer comes. So when a worker answers, no copy of the task is
//     anywhere it could see: a checked task looks like any other, and a
//     worker that holds many tasks at once, looking for pairs, finds none
//     (TestRun_crossCheckHoarder); each task it lies about is checked with
//     probability CrossCheck, however it takes its tasks. When they disagree,
//     the coordinator solves the task itself (the third solve), stores its
//     scores, and the worker that was wrong fails the cross-check. Copies
//     answered by one identity never make a cross-check: when another
//     identity has answered in this run, the task is published again for
//     it, and after maxCrossCopies copies the coordinator checks the
//     result itself; when no other identity has answered yet (a single
//     worker), the cross-check is skipped and counted
//     (Summary.CrossSkipped): the scores are stored on one worker's word.

// checkResult returns the book entries of result r of a task of the
// running job, or an error saying why the result is rejected: a task this
// job never issued, positions other than the task's, a score no position
// of that depth can have, or a win at once (a leaf that makes four at once
// is scored while planning, never solved). run is the current run.
func checkResult(b *solver.Board, tasks *taskTable, run int, r *queue.Result) ([]book.Entry, error) {
	taskRun, _, index := splitTaskID(r.TaskID)
	if taskRun < 1 || taskRun > run || index >= tasks.Len() {
		return nil, fmt.Errorf("task %d (run %d, index %d) was not issued", r.TaskID, taskRun, index)
	}
	if err := tasks.checkKeys(index, r.Keys); err != nil {
		return nil, err
	}
	if len(r.Scores) != len(r.Keys) {
		return nil, fmt.Errorf("task %d: %d scores for %d positions", index, len(r.Scores), len(r.Keys))
	}
	entries := make([]book.Entry, len(r.Keys))
	for i, k := range r.Keys {
		p, err := b.PositionFromKey(k)
		if err != nil {
			return nil, fmt.Errorf("task %d: %w", index, err) // not from this plan: cannot happen
		}
		score := int(r.Scores[i])
		lo, hi := b.ScoreRange(p.Moves())
		if hi = b.WinNowScore(p.Moves()) - 1; score < lo || score > hi {
			return nil, fmt.Errorf("task %d: position %d scored %d, outside [%d, %d] for %d stones that do not make four at once", index, i, score, lo, hi, p.Moves())
		}
		entries[i] = book.EntryOf(p, book.Value{Score: score, Origin: book.OriginSolved})
	}
	return entries, nil
}

// maxCrossCopies is how many copies of a cross-checked task are published
// in one run before the coordinator checks the result itself.
const maxCrossCopies = 4

// mix is splitmix64's finaliser: a well spread 64-bit hash of x.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	return x ^ x>>31
}

// runSecret is drawn at each run, and kept from the workers: it chooses
// the tasks cross-checked and the copy ids.
type runSecret uint64

// checks reports whether task index is one of the cross-checked fraction:
// a well spread choice by index, keyed by the run's secret so that a
// worker cannot tell which tasks are checked.
func (s runSecret) checks(index int, fraction float64) bool {
	if fraction <= 0 {
		return false
	}
	h := mix(uint64(index) ^ uint64(s))
	return float64(h>>11)/(1<<53) < fraction
}

// copyID returns the copy field of the id of the copy-th copy of task
// index: the copies counted from an offset drawn from the run's secret,
// so that a worker cannot tell a first copy from a second one (and lie on
// first copies only). Ids stay distinct for maxCopies copies.
func (s runSecret) copyID(index, copy int) int {
	return int((uint64(copy) + mix(mix(uint64(index)^uint64(s)))) & taskCopyMask)
}

// crossChecked reports whether task index is cross-checked.
func (j *job) crossChecked(index int) bool { return j.secret.checks(index, j.cfg.CrossCheck) }

// reject counts a rejected result against worker, and quarantines the
// worker when it has been rejected too often.
func (j *job) reject(worker string, task uint64, reason error) {
	j.summary.Rejected++
	j.rejections[worker]++
	j.count(worker, func(c *queue.WorkerResults) { c.Rejected++ })
	if j.cfg.OnResult != nil {
		j.cfg.OnResult(worker, false)
	}
	j.log.Warn("result rejected", "worker", worker, "task", task, "reason", reason)
	if j.rejections[worker] >= j.cfg.QuarantineAfter {
		j.quarantineForJob(worker, fmt.Sprintf("%d results rejected", j.rejections[worker]))
	}
}

// quarantineForJob quarantines worker for the job, if it is not yet: its
// results are ignored from now on, the job's record keeps it, and its
// results stored earlier in the job are solved again (at the end of the
// collect under way: see requeueQuarantined).
func (j *job) quarantineForJob(worker, why string) {
	if j.quarantined[worker] {
		return
	}
	j.quarantine(worker)
	j.toRequeue = append(j.toRequeue, worker)
	j.log.Error("worker quarantined: its results are ignored from now on, and those it gave in this job are solved again by others", "worker", worker, "why", why)
	// The job's record keeps it: a coordinator run again ignores the
	// worker from the start.
	j.record.Quarantined = append(j.record.Quarantined, worker)
	if err := j.save(j.record.State, j.record.Message); err != nil {
		j.log.Warn("storing the quarantine in the job record", "worker", worker, "error", err)
	} else if j.cfg.OnQuarantine != nil {
		j.cfg.OnQuarantine(worker)
	}
	// A first result of a cross-check awaiting a second one is void.
	for i, r := range j.firstResults {
		if r.WorkerID == worker {
			delete(j.firstResults, i)
			j.requeued = append(j.requeued, i)
		}
	}
}

// count updates the counts of worker's results (Summary.Workers).
func (j *job) count(worker string, update func(*queue.WorkerResults)) {
	j.countsMu.Lock()
	defer j.countsMu.Unlock()
	if j.summary.Workers == nil {
		j.summary.Workers = map[string]queue.WorkerResults{}
	}
	c := j.summary.Workers[worker]
	update(&c)
	j.summary.Workers[worker] = c
}

// crossResult counts a cross-check of a result of worker: passed, or
// failed, and then the result, accepted when it came, is rejected, and
// the worker quarantined: the coordinator's own solver found its scores
// wrong.
func (j *job) crossResult(worker string, task uint64, passed bool, reason error) {
	if passed {
		j.count(worker, func(c *queue.WorkerResults) { c.CrossPassed++ })
		return
	}
	j.count(worker, func(c *queue.WorkerResults) {
		c.CrossFailed++
		if c.Accepted > 0 {
			c.Accepted--
		}
	})
	j.reject(worker, task, reason)
	j.quarantineForJob(worker, "failed a cross-check: "+reason.Error())
}

// workerNumber returns the number of the registered worker name (active
// or removed), or 0 if name is not a registered worker's: a worker with
// a key has its name for its subject, so the number is the key's; a
// worker without a key names itself, and only a registered name gets a
// number. A number found is kept for the run; a name not found is looked
// up again at its next result (it may be registered meanwhile).
func (j *job) workerNumber(name string) uint32 {
	w, _ := j.registeredWorker(name)
	return w.Number
}

// registeredWorker returns the registered worker name (active or removed)
// and true, or false if name is not a registered worker's (or the
// registry cannot be read: that is logged). A worker found is kept for
// the run; a name not found is looked up again next time.
func (j *job) registeredWorker(name string) (book.Worker, bool) {
	if w, ok := j.registered[name]; ok {
		return w, true
	}
	w, ok, err := j.cfg.Book.Worker(name)
	if err != nil {
		j.log.Warn("looking up a worker in the registry: its results are taken as an unregistered worker's", "worker", name, "error", err)
		return book.Worker{}, false
	}
	if ok {
		j.registered[name] = w
	}
	return w, ok
}

// unsigned counts a result refused for its signature, on worker's
// subject, and logs the first ones and then one in 1,000: a flood of them
// must not flood the log.
func (j *job) unsigned(worker string, task uint64) {
	j.summary.Unsigned++
	if floodLogged(j.summary.Unsigned) {
		j.log.Warn("result refused: not signed by the key of the worker whose subject it is on (a reply another worker had the server write there, or a forgery); not counted against the worker",
			"worker", worker, "task", task, "refused so far", j.summary.Unsigned)
	}
}

// floodLogged reports whether the n-th message of a kind anyone can send
// in floods is logged: the first ten, then one in 1,000 (each saying how
// many so far).
func floodLogged(n int64) bool { return n <= 10 || n%1000 == 0 }

// quarantine ignores worker's results from now on.
func (j *job) quarantine(worker string) {
	j.quarantined[worker] = true
	j.summary.Quarantined = append(j.summary.Quarantined, worker)
}

// otherIdentity reports whether an identity other than worker, and not
// quarantined, has had a result accepted in this run.
func (j *job) otherIdentity(worker string) bool {
	for id := range j.identities {
		if id != worker && !j.quarantined[id] {
			return true
		}
	}
	return false
}

// crossCheck decides a result r, with entries es, of cross-checked task
// index: the entries to store and decided once two identities agree (or
// the coordinator has decided, or the check is skipped), not decided while
// a second opinion is awaited. oneWord is true when the entries are stored
// on the word of r's sender alone (a skipped check).
func (j *job) crossCheck(ctx context.Context, index int, r *queue.Result, es []book.Entry) (entries []book.Entry, decided, oneWord bool, err error) {
	first, ok := j.firstResults[index]
	if !ok {
		j.firstResults[index] = queue.Result{WorkerID: r.WorkerID, TaskID: r.TaskID, Scores: slices.Clone(r.Scores)}
		return nil, false, false, nil
	}
	if first.WorkerID == r.WorkerID {
		// Two copies answered by one identity: no cross-check.
		if !j.otherIdentity(r.WorkerID) {
			// No other worker has answered in this run: there is nobody
			// to check against.
			delete(j.firstResults, index)
			j.summary.CrossSkipped++
			j.log.Debug("cross-check skipped: no other worker has answered in this run", "task", index, "worker", r.WorkerID)
			return es, true, true, nil
		}
		if j.tasks.copies[index] < maxCrossCopies {
			return nil, false, false, nil // another worker must solve a new copy
		}
		// Other workers answer, but none took a copy of this task: the
		// coordinator checks.
		truth, err := j.referee(ctx, index)
		if err != nil {
			return nil, false, false, err
		}
		j.summary.Refereed++
		delete(j.firstResults, index)
		if sameScores(truth, r.Scores) {
			j.summary.CrossChecked++
			j.crossResult(r.WorkerID, r.TaskID, true, nil)
		} else {
			j.summary.Disagreements++
			j.crossResult(r.WorkerID, r.TaskID, false, fmt.Errorf("task %d: scores differ from the coordinator's", index))
		}
		return truth, true, false, nil
	}
	delete(j.firstResults, index)
	if slices.Equal(first.Scores, r.Scores) {
		j.summary.CrossChecked++
		j.crossResult(first.WorkerID, first.TaskID, true, nil)
		j.crossResult(r.WorkerID, r.TaskID, true, nil)
		return es, true, false, nil
	}
	j.summary.Disagreements++
	j.log.Warn("cross-check: two workers disagree; the coordinator solves the task", "task", index, "workers", []string{first.WorkerID, r.WorkerID})
	truth, err := j.referee(ctx, index)
	if err != nil {
		return nil, false, false, err
	}
	j.summary.Refereed++
	for _, res := range []*queue.Result{&first, r} {
		ok := sameScores(truth, res.Scores)
		var reason error
		if !ok {
			reason = fmt.Errorf("task %d: cross-check: scores differ from the coordinator's", index)
		}
		j.crossResult(res.WorkerID, res.TaskID, ok, reason)
	}
	return truth, true, false, nil
}

// requeueQuarantined solves again the results that the workers
// quarantined since the last call gave in this job, so that the finished
// book holds none of them: the tasks stored on such a worker's word in
// this run, and, for a registered worker, every task of the job whose
// entries in the book record its number (earlier runs' included). Each
// is marked not done and published again. It returns the positions of
// the tasks that were done and no longer are.
func (j *job) requeueQuarantined(ctx context.Context) (int64, error) {
	if len(j.toRequeue) == 0 && len(j.requeued) == 0 {
		return 0, nil
	}
	workers := j.toRequeue
	j.toRequeue = nil
	voided := j.requeued
	j.requeued = nil
	var tasks []int
	numbers := map[uint32]bool{}
	for _, w := range workers {
		if k, ok := j.identityIndex[w]; ok {
			for i, by := range j.tasks.by {
				if by == k && j.tasks.alone[i] {
					tasks = append(tasks, i)
				}
			}
		}
		if n := j.workerNumber(w); n != 0 {
			numbers[n] = true
		}
	}
	if len(numbers) > 0 {
		of, err := j.tasks.tasksWith(j.cfg.Book.Entries(j.cfg.Spec.Depth, j.cfg.Spec.Depth), func(e book.Entry) bool { return numbers[e.Worker] })
		if err != nil {
			return 0, fmt.Errorf("finding a quarantined worker's results: %w", err)
		}
		tasks = append(tasks, of...)
	}
	slices.Sort(tasks)
	tasks = slices.Compact(tasks)
	var undone int64
	var again []int
	for _, i := range tasks {
		if !j.tasks.done[i] {
			continue // not solved yet, or given up on
		}
		n := j.tasks.positions(i)
		undone += n
		j.summary.Requeued += n
		if k := j.tasks.by[i]; k != 0 {
			// Stored in this run: no longer solved by it.
			j.summary.Solved -= n
			j.summary.ByWorker[j.identityNames[k-1]] -= n
		}
		if j.dispatch.reopen(i) {
			again = append(again, i)
		}
	}
	if undone > 0 {
		j.log.Warn("results of quarantined workers: their tasks are solved again", "workers", workers, "tasks", len(again), "positions", undone)
	}
	for _, i := range voided {
		if j.dispatch.issued(i) && j.tasks.needed(i) {
			again = append(again, i)
		}
	}
	return undone, j.dispatch.publishAgain(ctx, again)
}

// solvedBy records that task index, done in this run, is credited to
// worker (Summary.ByWorker), and whether it was stored on its word alone.
func (j *job) solvedBy(index int, worker string, alone bool) {
	k, ok := j.identityIndex[worker]
	if !ok {
		j.identityNames = append(j.identityNames, worker)
		k = int32(len(j.identityNames))
		j.identityIndex[worker] = k
	}
	j.tasks.by[index], j.tasks.alone[index] = k, alone
}

// referee solves task index with the coordinator's own solver.
func (j *job) referee(ctx context.Context, index int) ([]book.Entry, error) {
	b := j.cfg.Spec.Board
	if j.refereeSolver == nil {
		s, err := solver.New(b, j.cfg.RefereeTableBytes)
		if err != nil {
			return nil, err
		}
		j.refereeSolver = s
	}
	var entries []book.Entry
	keys, err := j.tasks.keys(index)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		p, err := b.PositionFromKey(k)
		if err != nil {
			return nil, err
		}
		// A value only from a finished, confirmed search
		// (solver.Solver.runSolve): an error gives no entry at all.
		v, err := j.refereeSolver.SolveContext(ctx, p)
		if err != nil {
			return nil, err
		}
		entries = append(entries, book.EntryOf(p, book.Value{Score: v, Origin: book.OriginSolved}))
	}
	return entries, nil
}

// sameScores reports whether entries hold the scores, in order.
func sameScores(entries []book.Entry, scores []int8) bool {
	if len(entries) != len(scores) {
		return false
	}
	for i, e := range entries {
		if e.Score != int(scores[i]) {
			return false
		}
	}
	return true
}
