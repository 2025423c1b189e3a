package book

import (
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Revocation. A worker found lying (or broken) after its results were
// stored is revoked: RevokeWorker takes out of the book every entry it
// solved (the entries whose value records its number, format.go) and
// every derived entry whose score may depend on one of them, and marks
// the jobs of the book that held any of these so that their next run
// solves the removed leaves again and derives the rest.
//
// Which derived entries: a derived score is the negamax of its children,
// so it may depend on any solved entry deeper than it, through any chain
// of derived entries between. RevokeWorker removes every derived entry
// shallower than the deepest entry the worker solved, except those scored
// by the rules alone (the player to move wins with the next stone, or the
// board is full), which depend on no child. This removes more than the
// ancestors of the worker's entries (finding those needs the parents of a
// position, which the solver does not give), but it is simple and
// correct; a job run again derives what was removed.
//
// Order, so that an interruption is undone by running RevokeWorker again:
// the book is read first (nothing changes); then the jobs are marked;
// then the derived entries are removed, then the worker's entries, depth
// by depth from the shallowest, in synced batches. Interrupted while
// removing, the book still holds the worker's deepest entries, so running
// RevokeWorker again finds the same depth and finishes.

// revokeBatch is how many entries RevokeWorker removes in one synced batch.
const revokeBatch = 10000

// RevokeReport is what RevokeWorker did.
type RevokeReport struct {
	Worker  Worker // zero for RevokeUnkeyed
	Unkeyed bool   // the entries of no registered worker were revoked (RevokeUnkeyed)
	// Solved and Derived are the entries removed, by depth (index: the
	// depth; as long as the book's board has depths): those the worker
	// solved, and the derived entries shallower than its deepest one.
	Solved, Derived []int64
	// Deepest is the depth of the deepest entry the worker solved, -1 if
	// the book holds none.
	Deepest int
	// Jobs are the jobs marked to be run again (Job.Replan): each one whose
	// depths, from its root's to its own, reach Deepest or above.
	Jobs []string
}

// Total returns the entries removed.
func (r *RevokeReport) Total() (solved, derived int64) {
	for _, n := range r.Solved {
		solved += n
	}
	for _, n := range r.Derived {
		derived += n
	}
	return solved, derived
}

// RevokeWorker removes the entries solved by the registered worker name
// (active or removed), and every derived entry whose score may depend on
// them (see above); it marks the jobs that held any so that their next
// run makes their plan again (Job.Replan), and quarantines the worker in
// every job of the book (Job.Quarantined), so that its results still in
// a queue are ignored. A book holding no entry of the worker is left as
// it is. The error wraps ErrNoWorker when the book registers no worker of
// that name.
func (b *Book) RevokeWorker(name string) (RevokeReport, error) {
	if err := b.check(true); err != nil {
		return RevokeReport{}, err
	}
	w, ok, err := b.Worker(name)
	if err != nil {
		return RevokeReport{}, err
	}
	if !ok {
		return RevokeReport{}, fmt.Errorf("worker %q: %w: the book %s registers no worker of that name (c4book worker list shows those it does)", name, ErrNoWorker, b.path)
	}
	return b.revoke(RevokeReport{Worker: w}, w.Number)
}

// RevokeUnkeyed is RevokeWorker of the entries solved by no registered
// worker (worker number 0): those of workers that connected with the
// operator's token or without credentials, a job's own local worker's,
// and any result the token's holder forged under a name the book does not
// register. Such workers have no identity to quarantine.
func (b *Book) RevokeUnkeyed() (RevokeReport, error) {
	if err := b.check(true); err != nil {
		return RevokeReport{}, err
	}
	return b.revoke(RevokeReport{Unkeyed: true}, 0)
}

// revoke removes the entries solved by the worker of number n, and the
// derived entries that may depend on them, into r (see RevokeWorker).
func (b *Book) revoke(r RevokeReport, n uint32) (RevokeReport, error) {
	depths := b.board.Cells() + 1
	r.Solved, r.Derived, r.Deepest = make([]int64, depths), make([]int64, depths), -1
	solvedBy := func(v Value) bool { return v.Origin == OriginSolved && v.Worker == n }

	// 1. Read: the depths of the worker's entries.
	for e, err := range b.Entries(0, depths-1) {
		if err != nil {
			return r, err
		}
		if solvedBy(e.Value) {
			r.Deepest = max(r.Deepest, e.Depth)
		}
	}
	if r.Deepest < 0 {
		return r, nil
	}

	// 2. Mark the jobs.
	var err error
	if r.Jobs, err = b.markRevoked(r.Worker.Name, r.Deepest); err != nil {
		return r, err
	}

	// 3. Remove the derived entries shallower than the deepest solved by
	// the worker, then 4. the worker's entries.
	if r.Deepest > 0 {
		err := b.deleteEntries(0, r.Deepest-1, r.Derived, func(e Entry) (bool, error) {
			if e.Origin != OriginDerived {
				return false, nil
			}
			p, err := b.entryPosition(e.Depth, e.Key)
			if err != nil {
				return false, err
			}
			_, ruled := p.RuleScore() // a score the rules give stays
			return !ruled, nil
		})
		if err != nil {
			return r, err
		}
	}
	err = b.deleteEntries(0, r.Deepest, r.Solved, func(e Entry) (bool, error) { return solvedBy(e.Value), nil })
	return r, err
}

// markRevoked marks the jobs whose positions reach depth deepest or above
// to make their plan again, and quarantines worker in every job (none for
// ""); it returns the ids of the jobs marked.
func (b *Book) markRevoked(worker string, deepest int) ([]string, error) {
	jobs, err := b.Jobs()
	if err != nil {
		return nil, err
	}
	var marked []string
	for _, j := range jobs {
		root, err := b.board.Parse(j.Root)
		if err != nil {
			return nil, fmt.Errorf("job %q: root: %w", j.ID, err)
		}
		if worker != "" && !slices.Contains(j.Quarantined, worker) {
			j.Quarantined = append(j.Quarantined, worker)
		}
		who := "worker " + worker
		if worker == "" {
			who = "the results without a key"
		}
		// A job holds positions of depths root.Moves() to j.Depth: the
		// derived entries removed are all shallower than deepest.
		if root.Moves() <= deepest {
			j.Replan = true
			j.State = JobPlanning
			j.Message = fmt.Sprintf("%s revoked: run the job again to solve and derive the positions removed", who)
			marked = append(marked, j.ID)
		}
		if _, err := b.PutJob(j); err != nil {
			return nil, err
		}
	}
	return marked, nil
}

// deleteEntries removes, in synced batches, the entries of depths lo..hi
// for which remove is true, counting them by depth in counts.
func (b *Book) deleteEntries(lo, hi int, counts []int64, remove func(Entry) (bool, error)) error {
	batch := b.db.NewBatch()
	defer func() { batch.Close() }()
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		if err := batch.Commit(pebble.Sync); err != nil {
			return err
		}
		batch.Reset()
		n = 0
		return nil
	}
	var key [positionKeyLen]byte
	// The iterator reads the book as it was when it was made: the
	// deletions committed meanwhile do not disturb it.
	for e, err := range b.Entries(lo, hi) {
		if err != nil {
			return err
		}
		ok, err := remove(e)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := batch.Delete(AppendKey(key[:0], e.Depth, e.Key), nil); err != nil {
			return err
		}
		counts[e.Depth]++
		if n++; n == revokeBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
