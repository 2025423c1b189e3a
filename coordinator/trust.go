package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

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
//   - Duplicates: an answer of a task done already (a tail or overdue
//     copy, a redelivery) is compared with the scores stored, once its
//     batch is written (job.checkDuplicates, compareDuplicate): when they
//     differ the task goes to the referee, whose verdict replaces them and
//     quarantines whoever was wrong. A free cross-check of the job's last
//     tasks.
//
// The trust type is all of this, with one entry point: admit, which takes
// a result and says what to store for it, or why nothing, or that its
// task went to the referee. The job writes what admit returns, and asks
// for the tasks to solve again (toSolveAgain) once a batch is written.
// The cross-check and the coordinator's own solver, its referee, are in
// crosscheck.go: the referee solves in a goroutine of its own, and its
// verdicts, applied by the collecting goroutine (decide), decide the
// tasks it was sent.

// trust judges the workers' results of a run. It is used by the
// collecting goroutine only, but for the counts of each worker's results
// (Summary.Workers), which the status reporter reads; its referee's
// goroutine has its own solver, and sees only the keys sent to it.
type trust struct {
	// Set when the job starts; read-only after.
	board           *solver.Board
	book            JobBook // the worker registry, and the entries of the leaves' depth
	depth           int     // of the leaves
	crossFraction   float64 // Config.CrossCheck
	quarantineAfter int
	refereeBytes    int64
	gate            func(ctx context.Context, keys []uint64) error // Config.refereeGate, or nil
	onResult        func(worker string, accepted bool)             // Config.OnResult, or nil
	onQuarantine    func(worker string)                            // Config.OnQuarantine, or nil
	// keep keeps a worker quarantined in the job's record, so that a run
	// again ignores it from the start.
	keep   func(worker string) error
	log    *slog.Logger
	secret runSecret // the tasks cross-checked
	sum    *Summary  // the job's: the counts of results, cross-checks and workers

	// Set when the run's plan is open; read-only after.
	run   int        // the run of the job
	tasks *taskTable // the dispatcher's: trust reads it, and records who solved a task

	// Owned by the collecting goroutine.
	cross         crossChecks            // the cross-checks under way (crosscheck.go)
	rejections    map[string]int         // worker -> results rejected
	quarantined   map[string]bool        // workers whose results are ignored
	identities    map[string]bool        // workers with a result accepted in this run
	identityIndex map[string]int32       // workers that stored tasks on their own word in this run: taskTable.by
	identityNames []string               // by number in identityIndex, from 1
	toRequeue     []string               // workers quarantined whose results are not yet queued again
	registered    map[string]book.Worker // registered workers, by name, as looked up
	// compared holds each task done and sender whose answer was admitted
	// to be compared with the book (a duplicate): one comparison each, so
	// that a worker sending one answer again and again costs the
	// coordinator no more book reads than the task's positions once.
	compared map[taskSender]struct{}

	// countsMu guards sum.Workers, which the status reporter reads from
	// other goroutines.
	countsMu sync.Mutex
}

// newTrust returns the trust of a job of cfg, nobody quarantined yet; keep
// keeps a quarantined worker in the job's record.
func newTrust(cfg Config, secret runSecret, log *slog.Logger, sum *Summary, keep func(worker string) error) *trust {
	return &trust{board: cfg.Spec.Board, book: cfg.Book, depth: cfg.Spec.Depth, crossFraction: cfg.CrossCheck, quarantineAfter: cfg.QuarantineAfter,
		refereeBytes: cfg.RefereeTableBytes, gate: cfg.refereeGate, onResult: cfg.OnResult, onQuarantine: cfg.OnQuarantine, keep: keep, log: log, secret: secret, sum: sum,
		cross: crossChecks{firstResults: map[int]queue.Result{}}, rejections: map[string]int{}, quarantined: map[string]bool{}, identities: map[string]bool{},
		identityIndex: map[string]int32{}, registered: map[string]book.Worker{}, compared: map[taskSender]struct{}{}}
}

// taskSender names a task of the run and a worker's identity.
type taskSender struct {
	index  int
	sender string
}

// admission is what trust makes of a result.
type admission struct {
	// refused says why the result is not taken; it is then terminated.
	// When nil, the result passed the checks, and is acked once the batch
	// is written.
	refused error
	// decided says that entries are the task's, to store: the sender's.
	// A result that passed is not decided when its task is done or being
	// refereed already (a duplicate), when it awaits another worker's
	// answer (a cross-check), or when its task goes to the referee.
	decided bool
	entries []book.Entry
	// referred says that the task went to the referee (crosscheck.go): it
	// is being refereed until its verdict, which decides it.
	referred bool
	// parked says that the task's first answer awaits another identity
	// than its sender's, none having answered (taskTable.parked).
	parked bool
	// duplicate says that the result answers a task done already: its
	// entries are compared with the scores the book holds, once the
	// batch is written (job.checkDuplicates), never stored.
	duplicate bool
}

// Why results are refused, besides the checks' own errors.
var (
	errIgnored  = errors.New("sent by a quarantined worker")
	errUnsigned = errors.New("not signed by the key of the worker whose subject it is on")
)

// admit judges result m of a task of this run: it checks who sent it and
// what it holds, counts it for its sender, cross-checks it when its task
// is one of the fraction, and credits the task to its sender when it is
// decided.
func (t *trust) admit(m *queue.ResultMsg) admission {
	r := &m.Result
	_, _, index := splitTaskID(r.TaskID)
	needed := t.tasks.needed(index) || index < t.tasks.Len() && (t.tasks.parked[index] || t.tasks.failed[index] && !t.tasks.done[index])
	sender := sender(m)
	if t.quarantined[sender] {
		t.sum.Ignored++
		t.log.Debug("result of a quarantined worker ignored", "worker", sender, "task", r.TaskID)
		return admission{refused: errIgnored}
	}
	if w, ok := t.registeredWorker(sender); ok && !m.SignedBy(w.PublicKey) {
		// Not sent by the worker: a reply another worker had the server
		// write on its subject, or a token holder's forgery.
		t.unsigned(sender, r.TaskID)
		return admission{refused: errUnsigned}
	}
	if sender != r.WorkerID {
		// A result claiming another worker's name is forged, and counts
		// against its real sender.
		err := fmt.Errorf("forged: published by %s, claims to be %s's", sender, r.WorkerID)
		t.reject(sender, r.TaskID, err)
		return admission{refused: err}
	}
	es, err := checkResult(t.board, t.tasks, t.run, r)
	if err != nil {
		t.reject(r.WorkerID, r.TaskID, err)
		return admission{refused: err}
	}
	// Each entry records its solver: the sender's number if it is a
	// registered worker.
	if n := t.workerNumber(sender); n != 0 {
		for i := range es {
			es[i].Worker = n
		}
	}
	if !t.identities[sender] {
		t.identities[sender] = true
		t.unparkFor(sender)
	}
	t.count(r.WorkerID, func(c *queue.WorkerResults) { c.Accepted++ })
	if t.onResult != nil {
		t.onResult(r.WorkerID, true)
	}
	if !needed {
		// A duplicate: the task was solved twice, or is being refereed.
		// The answer of a task done is a free cross-check of its scores.
		// Each sender's first answer of a task done is compared; the
		// same sender's answers after it are counted, not compared again.
		t.sum.Duplicates++
		if index < t.tasks.Len() && t.tasks.done[index] && !t.tasks.refereeing[index] {
			ts := taskSender{index, sender}
			if _, ok := t.compared[ts]; !ok {
				t.compared[ts] = struct{}{}
				return admission{duplicate: true, entries: es}
			}
		}
		return admission{}
	}
	oneWord := true // stored on the sender's word alone
	if t.secret.checks(index, t.crossFraction) {
		var outcome crossOutcome
		es, outcome = t.crossCheck(index, r, es)
		switch outcome {
		case crossAwaiting:
			return admission{}
		case crossParked:
			return admission{parked: true}
		case crossReferred:
			return admission{referred: true}
		case crossConfirmed:
			oneWord = false
		}
	}
	t.credit(index, sender, int64(len(es)), oneWord)
	return admission{decided: true, entries: es}
}

// credit credits the n positions of task index, decided, to worker
// (Summary.ByWorker), unless it is quarantined (it failed the task's
// cross-check: the coordinator's scores are stored, not its own), and
// records whether they were stored on its word alone.
func (t *trust) credit(index int, worker string, n int64, alone bool) {
	if t.quarantined[worker] {
		return
	}
	if t.sum.ByWorker == nil {
		t.sum.ByWorker = map[string]int64{}
	}
	t.sum.ByWorker[worker] += n
	t.count(worker, func(c *queue.WorkerResults) { c.Positions += uint64(n) })
	t.solvedBy(index, worker, alone)
}

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
		lo, _ := b.ScoreRange(p.Moves())
		if hi := b.WinNowScore(p.Moves()) - 1; score < lo || score > hi {
			return nil, fmt.Errorf("task %d: position %d scored %d, outside [%d, %d] for %d stones that do not make four at once", index, i, score, lo, hi, p.Moves())
		}
		entries[i] = book.EntryOf(p, book.Value{Score: score, Origin: book.OriginSolved})
	}
	return entries, nil
}

// reject counts a rejected result against worker, and quarantines the
// worker when it has been rejected too often.
func (t *trust) reject(worker string, task uint64, reason error) {
	t.sum.Rejected++
	t.rejections[worker]++
	t.count(worker, func(c *queue.WorkerResults) { c.Rejected++ })
	if t.onResult != nil {
		t.onResult(worker, false)
	}
	t.log.Warn("result rejected", "worker", worker, "task", task, "reason", reason)
	if t.rejections[worker] >= t.quarantineAfter {
		t.quarantineForJob(worker, fmt.Sprintf("%d results rejected", t.rejections[worker]))
	}
}

// quarantineForJob quarantines worker for the job, if it is not yet: its
// results are ignored from now on, the job's record keeps it, and its
// results stored earlier in the job are solved again (at the end of the
// collect under way: see toSolveAgain).
func (t *trust) quarantineForJob(worker, why string) {
	if t.quarantined[worker] {
		return
	}
	t.quarantine(worker)
	t.toRequeue = append(t.toRequeue, worker)
	t.log.Error("worker quarantined: its results are ignored from now on, and those it gave in this job are solved again by others", "worker", worker, "why", why)
	if err := t.keep(worker); err != nil {
		t.log.Warn("storing the quarantine in the job record", "worker", worker, "error", err)
	} else if t.onQuarantine != nil {
		t.onQuarantine(worker)
	}
	// A first result of a cross-check awaiting a second one is void, and
	// so is a case in line for the referee with an answer of the worker.
	for i, r := range t.cross.firstResults {
		if r.WorkerID == worker {
			delete(t.cross.firstResults, i)
			t.cross.requeued = append(t.cross.requeued, i)
		}
	}
	t.voidCases(worker)
}

// listensTo reports whether the job takes worker's results: worker is
// not quarantined.
func (t *trust) listensTo(worker string) bool { return !t.quarantined[worker] }

// quarantine ignores worker's results from now on: quarantineForJob, or a
// worker the job's record holds quarantined by an earlier run.
func (t *trust) quarantine(worker string) {
	t.quarantined[worker] = true
	t.sum.Quarantined = append(t.sum.Quarantined, worker)
}

// count updates the counts of worker's results (Summary.Workers).
func (t *trust) count(worker string, update func(*queue.WorkerResults)) {
	t.countsMu.Lock()
	defer t.countsMu.Unlock()
	if t.sum.Workers == nil {
		t.sum.Workers = map[string]queue.WorkerResults{}
	}
	c := t.sum.Workers[worker]
	update(&c)
	t.sum.Workers[worker] = c
}

// workerCounts returns a copy of the counts of each worker's results:
// safe from any goroutine.
func (t *trust) workerCounts() map[string]queue.WorkerResults {
	t.countsMu.Lock()
	defer t.countsMu.Unlock()
	return maps.Clone(t.sum.Workers)
}

// workerNumber returns the number of the registered worker name (active
// or removed), or 0 if name is not a registered worker's: a worker with
// a key has its name for its subject, so the number is the key's; a
// worker without a key names itself, and only a registered name gets a
// number. A number found is kept for the run; a name not found is looked
// up again at its next result (it may be registered meanwhile).
func (t *trust) workerNumber(name string) uint32 {
	w, _ := t.registeredWorker(name)
	return w.Number
}

// numbers returns the numbers of the registered workers among workers.
func (t *trust) numbers(workers []string) map[uint32]bool {
	numbers := map[uint32]bool{}
	for _, w := range workers {
		if n := t.workerNumber(w); n != 0 {
			numbers[n] = true
		}
	}
	return numbers
}

// registeredWorker returns the registered worker name (active or removed)
// and true, or false if name is not a registered worker's (or the
// registry cannot be read: that is logged). A worker found is kept for
// the run; a name not found is looked up again next time.
func (t *trust) registeredWorker(name string) (book.Worker, bool) {
	if w, ok := t.registered[name]; ok {
		return w, true
	}
	w, ok, err := t.book.Worker(name)
	if err != nil {
		t.log.Warn("looking up a worker in the registry: its results are taken as an unregistered worker's", "worker", name, "error", err)
		return book.Worker{}, false
	}
	if ok {
		t.registered[name] = w
	}
	return w, ok
}

// unsigned counts a result refused for its signature, on worker's
// subject, and logs the first ones and then one in 1,000: a flood of them
// must not flood the log.
func (t *trust) unsigned(worker string, task uint64) {
	t.sum.Unsigned++
	if floodLogged(t.sum.Unsigned) {
		t.log.Warn("result refused: not signed by the key of the worker whose subject it is on (a reply another worker had the server write there, or a forgery); not counted against the worker",
			"worker", worker, "task", task, "refused so far", t.sum.Unsigned)
	}
}

// floodLogged reports whether the n-th message of a kind anyone can send
// in floods is logged: the first ten, then one in 1,000 (each saying how
// many so far).
func floodLogged(n int64) bool { return n <= 10 || n%1000 == 0 }

// solvedBy records that task index, done in this run, is credited to
// worker (Summary.ByWorker), and whether it was stored on its word alone.
func (t *trust) solvedBy(index int, worker string, alone bool) {
	k, ok := t.identityIndex[worker]
	if !ok {
		t.identityNames = append(t.identityNames, worker)
		k = int32(len(t.identityNames))
		t.identityIndex[worker] = k
	}
	t.tasks.by[index], t.tasks.alone[index] = k, alone
}

// uncredit takes back the n positions of task index, about to be solved
// again, from the worker credited with them in this run, and reports
// whether there was one (the task was stored in this run).
func (t *trust) uncredit(index int, n int64) bool {
	k := t.tasks.by[index]
	if k == 0 {
		return false
	}
	t.sum.ByWorker[t.identityNames[k-1]] -= n
	return true
}

// toSolveAgain returns what the workers quarantined since the last call
// gave in this job, so that the finished book holds none of it: the tasks
// stored on such a worker's word in this run, and, for a registered
// worker, every task of the job whose entries in the book record its
// number (earlier runs' included), some perhaps not done; and the tasks
// whose first result of a cross-check, or case in line for the referee,
// a quarantine voided.
func (t *trust) toSolveAgain() (workers []string, tasks, voided []int, err error) {
	workers, voided = t.toRequeue, t.cross.requeued
	t.toRequeue, t.cross.requeued = nil, nil
	for _, w := range workers {
		if k, ok := t.identityIndex[w]; ok {
			for i, by := range t.tasks.by {
				if by == k && t.tasks.alone[i] {
					tasks = append(tasks, i)
				}
			}
		}
	}
	if numbers := t.numbers(workers); len(numbers) > 0 {
		of, err := t.tasks.tasksWith(t.book.Entries(t.depth, t.depth), func(e book.Entry) bool { return numbers[e.Worker] })
		if err != nil {
			return nil, nil, nil, fmt.Errorf("finding a quarantined worker's results: %w", err)
		}
		tasks = append(tasks, of...)
	}
	slices.Sort(tasks)
	return workers, slices.Compact(tasks), voided, nil
}

// sender returns who sent result m: the worker its subject names, which
// the server let publish there (workers with keys may use their own
// subject only); the result's own claim only on the per-job subject of
// older workers.
func sender(m *queue.ResultMsg) string {
	if m.Publisher != "" {
		return m.Publisher
	}
	return m.Result.WorkerID
}
