package coordinator

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator/keyfile"
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
// returns the number of entries written; progress, if set, is called with
// it every so often.
func Derive(ctx context.Context, spec Spec, bk DeriveBook, dir string, progress func(derived int64)) (int64, error) {
	root, err := spec.Validate()
	if err != nil {
		return 0, err
	}
	var written atomic.Int64
	for d := spec.Depth - 1; d >= root.Moves(); d-- {
		kf, err := keyfile.Open(levelFile(dir, d))
		if err != nil {
			return written.Load(), err
		}
		err = deriveLevel(ctx, spec.Board, bk, kf, &written, progress)
		kf.Close()
		if err != nil {
			return written.Load(), err
		}
	}
	return written.Load(), nil
}

// deriveMinRange is the fewest positions a goroutine derives: below, the
// level is not split.
const deriveMinRange = 1 << 12

// deriveLevel derives the positions of the level file kf.
func deriveLevel(ctx context.Context, b *solver.Board, bk DeriveBook, kf *keyfile.File, written *atomic.Int64, progress func(int64)) error {
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
			if err := deriveRange(ctx, b, bk, kf.Scan(from, to), written, progress); err != nil {
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
func deriveRange(ctx context.Context, b *solver.Board, bk DeriveBook, sc *keyfile.Scanner, written *atomic.Int64, progress func(int64)) error {
	// Two readers, each seeking forward only: one for the positions of
	// the level, one for their children, a level below.
	held, err := bk.NewReader()
	if err != nil {
		return err
	}
	defer held.Close()
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
		n := written.Add(int64(len(batch)))
		batch = batch[:0]
		if progress != nil {
			progress(n)
		}
		return nil
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
		if _, ok, err := held.GetEntry(p.Moves(), sc.Key()); err != nil || ok {
			if err != nil {
				return err
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
		if p.CanWinNext() || p.IsFull() {
			continue // scored by the rules
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
	b := p.Board()
	switch {
	case p.CanWinNext():
		return b.WinNowScore(p.Moves())
	case p.IsFull():
		return 0
	}
	// No child is terminal: the player to move cannot make four.
	score := solver.MinScore
	for _, child := range p.Children() {
		i, _ := slices.BinarySearch(c.keys, child.CanonicalKey())
		score = max(score, -int(c.scores[i]))
	}
	return score
}
