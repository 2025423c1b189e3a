package coordinator

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/internal/keyfile"
	"github.com/c4book/c4book/solver"
)

// writeBatch is how many entries the planner and the derivation write in
// one synced batch.
const writeBatch = 10000

// ErrMissingLeaf is returned by Derive when a child of a position to
// derive is not in the book: the leaves must be solved first.
var ErrMissingLeaf = fmt.Errorf("position of the job missing from the book")

// Derive scores every position of the plan in dir (see MakePlan) that the
// book does not hold from the scores of its children: a position's score
// is the best of minus its children's scores. Every leaf must be in the
// book. It goes bottom-up, one level at a time: the positions of a level
// are read in key order from the plan, split in key ranges over the CPUs,
// and their children looked up with one book.Reader a range; a level's
// entries are all written, in synced batches, before the level above is
// read. A crash leaves a book that Derive completes when run again. It
// returns the number of entries written.
//
// Progress, if set, is called every so often with the positions of the
// levels above the leaves gone through (derived, or found in the book)
// and their total: the work of a derivation is a pass over those levels,
// and how many of their positions the book already holds (scored at once
// by the plan, or derived by a run cut short) is not known until the pass
// reads them. Done never decreases from one call to the next, and the
// last call has done equal to total.
func Derive(ctx context.Context, spec Spec, bk DeriveBook, dir string, progress func(done, total int64)) (int64, error) {
	root, err := spec.Validate()
	if err != nil {
		return 0, err
	}
	var levels []*keyfile.File
	defer func() {
		for _, kf := range levels {
			kf.Close()
		}
	}()
	var total int64
	for d := spec.Depth - 1; d >= root.Moves(); d-- {
		kf, err := keyfile.Open(levelFile(dir, d))
		if err != nil {
			return 0, err
		}
		levels = append(levels, kf)
		total += kf.Len()
	}
	t := &deriveTally{report: progress, total: total, reported: -1}
	if total > 0 {
		t.add(0) // the total, before the first level is read
	}
	for _, kf := range levels {
		if err := deriveLevel(ctx, spec.Board, bk, kf, t); err != nil {
			return t.written.Load(), err
		}
	}
	return t.written.Load(), nil
}

// deriveTally counts what the goroutines of Derive did, and reports it.
type deriveTally struct {
	written atomic.Int64 // entries written
	done    atomic.Int64 // positions gone through: written, or found in the book
	total   int64
	report  func(done, total int64) // nil: none

	mu       sync.Mutex // one report at a time, none older than the last
	reported int64      // done of the last report; -1 before the first
}

// deriveReportEvery is how many positions a goroutine of Derive goes
// through between reports.
const deriveReportEvery = 1 << 12

// add counts n more positions gone through and reports where Derive
// stands. Goroutines add concurrently: the count reported is read under
// the lock, so a report never goes back below one made before it.
func (t *deriveTally) add(n int64) {
	t.done.Add(n)
	if t.report == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if done := t.done.Load(); done > t.reported {
		t.reported = done
		t.report(done, t.total)
	}
}

// deriveMinRange is the fewest positions a goroutine derives: below, the
// level is not split.
const deriveMinRange = 1 << 12

// deriveLevel derives the positions of the level file kf.
func deriveLevel(ctx context.Context, b *solver.Board, bk DeriveBook, kf *keyfile.File, t *deriveTally) error {
	n := int64(runtime.GOMAXPROCS(0))
	n = max(1, min(n, kf.Len()/deriveMinRange))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for i := range n {
		from, to := kf.Len()*i/n, kf.Len()*(i+1)/n
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := deriveRange(ctx, b, bk, kf.Scan(from, to), t); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && err != context.Canceled {
		return err
	}
	return ctx.Err()
}

// deriveChunk is how many positions deriveRange reads before it looks up
// their children. The children's keys are sorted first, so that the
// lookups go forward through the book (Pebble then steps on from where
// the last one ended) instead of jumping about it: as the book outgrows
// the block cache, that is what keeps derivation from slowing down.
const deriveChunk = 1 << 14

// deriveRange derives the positions sc reads.
func deriveRange(ctx context.Context, b *solver.Board, bk DeriveBook, sc *keyfile.Scanner, t *deriveTally) error {
	// Two readers, each seeking forward only: one for the positions of
	// the level, one for their children, a level below.
	inBook, err := bk.NewReader()
	if err != nil {
		return err
	}
	defer inBook.Close()
	kids, err := bk.NewReader()
	if err != nil {
		return err
	}
	defer kids.Close()
	var batch []book.Entry
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := bk.PutBatch(batch); err != nil {
			return err
		}
		t.written.Add(int64(len(batch)))
		t.add(int64(len(batch)))
		batch = batch[:0]
		return nil
	}
	// Positions found in the book are counted as they are read, a few
	// thousand at a time; those derived when their batch is written.
	var held int64
	countHeld := func() {
		if held > 0 {
			t.add(held)
			held = 0
		}
	}
	var chunk []solver.Position
	var ch children
	scoreChunk := func() error {
		if err := ch.read(kids, chunk); err != nil {
			return err
		}
		for _, p := range chunk {
			batch = append(batch, book.EntryOf(p, book.Value{Score: ch.score(p), Origin: book.OriginDerived}))
			if len(batch) >= writeBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		chunk = chunk[:0]
		return nil
	}
	for sc.Next() {
		p, err := b.PositionFromKey(sc.Key())
		if err != nil {
			return err
		}
		if _, ok, err := inBook.GetEntry(p.Moves(), sc.Key()); err != nil || ok {
			if err != nil {
				return err
			}
			if held++; held == deriveReportEvery {
				countHeld()
			}
			continue
		}
		chunk = append(chunk, p)
		if len(chunk) == deriveChunk {
			if err := scoreChunk(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	countHeld()
	if err := scoreChunk(); err != nil {
		return err
	}
	return flush()
}

// children holds the book's scores of the children of a chunk of
// positions of one depth, read in key order.
type children struct {
	keys   []uint64 // canonical keys, sorted, each once
	scores []int8   // the book's score of each
}

// read reads the children of positions from the book with r. A child not
// in the book is an error wrapping ErrMissingLeaf.
func (c *children) read(r *book.Reader, positions []solver.Position) error {
	c.keys, c.scores = c.keys[:0], c.scores[:0]
	if len(positions) == 0 {
		return nil
	}
	for _, p := range positions {
		if _, ruled := p.RuleScore(); ruled {
			continue
		}
		for _, child := range p.Children() {
			c.keys = append(c.keys, child.CanonicalKey())
		}
	}
	slices.Sort(c.keys)
	c.keys = slices.Compact(c.keys)
	depth := positions[0].Moves() + 1
	b := positions[0].Board()
	for _, k := range c.keys {
		v, ok, err := r.GetEntry(depth, k)
		if err != nil {
			return err
		}
		if !ok {
			child, _ := b.PositionFromKey(k)
			return fmt.Errorf("%w:\n%v", ErrMissingLeaf, child.String())
		}
		c.scores = append(c.scores, int8(v.Score))
	}
	return nil
}

// score returns the score of p, one of the positions read: from the rules
// (a win with the next stone, a full board), or the best of minus its
// children's scores.
func (c *children) score(p solver.Position) int {
	if s, ruled := p.RuleScore(); ruled {
		return s
	}
	// No child is terminal: the player to move cannot make four.
	score := solver.MinScore
	for _, child := range p.Children() {
		i, _ := slices.BinarySearch(c.keys, child.CanonicalKey())
		score = max(score, -int(c.scores[i]))
	}
	return score
}
