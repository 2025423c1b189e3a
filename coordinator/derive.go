package coordinator

import (
	"context"
	"fmt"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// Book is the part of a book the coordinator uses.
type Book interface {
	BookReader
	PutBatch(entries []book.Entry) error
}

// deriveBatch is how many derived entries are written in one synced batch.
const deriveBatch = 10000

// ErrMissingLeaf is returned by Derive when a position of the job's last
// depth is not in the book: the leaves must be solved first.
var ErrMissingLeaf = fmt.Errorf("position of the job's depth missing from the book")

// Derive scores every position of the job spec that the book does not
// hold from the scores of its children: a position's score is the best of
// minus its children's scores. Every leaf (position at the job's depth)
// must be in the book. It visits the positions of the job depth first,
// children before parents, and writes the entries in synced batches, so a
// crash leaves a book that Derive completes when run again. It returns the
// number of entries written. Like MakePlan, it keeps a set of the job's
// positions: about 16 bytes each.
func Derive(ctx context.Context, spec Spec, bk Book, progress func(derived int64)) (int64, error) {
	root, err := spec.Validate()
	if err != nil {
		return 0, err
	}
	d := &deriver{spec: spec, book: bk, ctx: ctx, seen: newKeySet(1 << 10), pending: map[uint64]int{}, progress: progress}
	if err := d.visit(root); err != nil {
		return d.written, err
	}
	err = d.flush()
	return d.written, err
}

// deriver is the state of Derive.
type deriver struct {
	spec     Spec
	book     Book
	ctx      context.Context
	seen     *keySet        // canonical keys visited
	batch    []book.Entry   // entries to write
	pending  map[uint64]int // canonical key -> score, of the entries in batch
	written  int64
	progress func(int64)
}

// visit derives p, a non-terminal position of the job, and the positions
// after it, if not done yet.
func (d *deriver) visit(p solver.Position) error {
	if !d.seen.add(p.CanonicalKey()) {
		return nil
	}
	b := d.spec.Board
	if p.Moves() < d.spec.Depth {
		for _, child := range p.Children() {
			if child.LastMoveWon() {
				continue
			}
			if err := d.visit(child); err != nil {
				return err
			}
		}
	}
	if _, known, err := d.score(p); err != nil || known {
		return err
	}
	var score int
	switch {
	case p.CanWinNext():
		score = b.WinNowScore(p.Moves())
	case p.IsFull():
		score = 0
	case p.Moves() >= d.spec.Depth:
		return fmt.Errorf("%w:\n%v", ErrMissingLeaf, p.String())
	default:
		// No child is terminal (the player to move cannot make four), and
		// every child was visited: each is in the book or the batch.
		score = solver.MinScore
		for _, child := range p.Children() {
			v, known, err := d.score(child)
			if err != nil {
				return err
			}
			if !known {
				return fmt.Errorf("derive: child of a visited position has no score:\n%v", child.String())
			}
			score = max(score, -v)
		}
	}
	d.pending[p.CanonicalKey()] = score
	d.batch = append(d.batch, book.EntryOf(p, book.Value{Score: score, Origin: book.OriginDerived}))
	if len(d.batch) >= deriveBatch {
		return d.flush()
	}
	return nil
}

// score returns the score of p from the batch being built or the book, and
// whether either holds it.
func (d *deriver) score(p solver.Position) (int, bool, error) {
	ck := p.CanonicalKey()
	if v, ok := d.pending[ck]; ok {
		return v, true, nil
	}
	v, ok, err := d.book.GetEntry(p.Moves(), ck)
	return v.Score, ok, err
}

// flush writes the batch.
func (d *deriver) flush() error {
	if len(d.batch) == 0 {
		return nil
	}
	if err := d.ctx.Err(); err != nil {
		return err
	}
	if err := d.book.PutBatch(d.batch); err != nil {
		return err
	}
	d.written += int64(len(d.batch))
	d.batch = d.batch[:0]
	clear(d.pending)
	if d.progress != nil {
		d.progress(d.written)
	}
	return nil
}
