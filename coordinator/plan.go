package coordinator

import (
	"context"
	"errors"
	"fmt"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// Spec is what a generation job builds: the exact score of every
// non-terminal position reachable from Root with at most Depth stones.
type Spec struct {
	Board    *solver.Board
	Root     string // move string of the root; "" is the empty board
	Depth    int    // most stones of a position of the job
	TaskSize int    // most positions a task holds
}

// ID returns the job's id: board, root and depth, a valid NATS subject
// token ("7x6-d12", "7x6-4453-d12").
func (s Spec) ID() string {
	if s.Root == "" {
		return fmt.Sprintf("%v-d%d", s.Board, s.Depth)
	}
	return fmt.Sprintf("%v-%s-d%d", s.Board, s.Root, s.Depth)
}

// Validate checks the spec and returns the root position.
func (s Spec) Validate() (solver.Position, error) {
	if s.Board == nil {
		return solver.Position{}, errors.New("job: no board")
	}
	root, err := s.Board.Parse(s.Root)
	if err != nil {
		return solver.Position{}, fmt.Errorf("job root: %w", err)
	}
	if root.Moves() > 0 && root.LastMoveWon() {
		return solver.Position{}, fmt.Errorf("job root %q: the game is over", s.Root)
	}
	if s.Depth < root.Moves() || s.Depth > s.Board.Cells() {
		return solver.Position{}, fmt.Errorf("job depth %d: must be between the root's %d stones and %d", s.Depth, root.Moves(), s.Board.Cells())
	}
	if s.TaskSize < 1 {
		return solver.Position{}, fmt.Errorf("job task size %d: must be at least 1", s.TaskSize)
	}
	return root, nil
}

// BookReader is the part of a book the planner reads.
type BookReader interface {
	GetEntry(depth int, key uint64) (book.Value, bool, error)
}

// Plan is the work a job has left: the positions to solve, and the
// positions scored without a search. Positions the book holds are left
// out; every other position of the job is derived from its children once
// they are in the book.
type Plan struct {
	Positions int64        // non-terminal positions of the job, with those in the book
	InBook    int64        // positions the book held when planned
	Interior  int64        // positions to derive from their children
	Immediate []book.Entry // positions scored without a search: a win at once, a full board
	Leaves    []uint64     // keys (Position.Key) of the positions to solve, in enumeration order
}

// MakePlan enumerates the positions of the job spec depth first, columns
// left to right, one per canonical key (a position and its mirror image
// are one book entry), and sorts them into the plan. Leaves sharing an
// ancestor come one after the other, so a run of leaves is a good task: a
// worker's table serves the whole run. progress, if not nil, is called
// with the number of positions enumerated every so often. The plan's
// memory grows with the positions of the job: about 16 bytes each for the
// enumeration, and 8 bytes a leaf.
func MakePlan(ctx context.Context, spec Spec, bk BookReader, progress func(positions int64)) (*Plan, error) {
	root, err := spec.Validate()
	if err != nil {
		return nil, err
	}
	pl := &plan{spec: spec, book: bk, ctx: ctx, seen: newKeySet(1 << 10), progress: progress}
	if err := pl.visit(root); err != nil {
		return nil, err
	}
	return &pl.Plan, nil
}

// plan is the state of MakePlan's enumeration.
type plan struct {
	Plan
	spec     Spec
	book     BookReader
	ctx      context.Context
	seen     *keySet // canonical keys enumerated
	progress func(int64)
}

// planProgressEvery is how many positions MakePlan enumerates between
// progress calls and context checks.
const planProgressEvery = 1 << 16

// visit enumerates p, a non-terminal position new to the plan, and the
// positions after it.
func (pl *plan) visit(p solver.Position) error {
	ck := p.CanonicalKey()
	if !pl.seen.add(ck) {
		return nil
	}
	pl.Positions++
	if pl.Positions%planProgressEvery == 0 {
		if err := pl.ctx.Err(); err != nil {
			return err
		}
		if pl.progress != nil {
			pl.progress(pl.Positions)
		}
	}
	_, inBook, err := pl.book.GetEntry(p.Moves(), ck)
	if err != nil {
		return err
	}
	b := pl.spec.Board
	switch {
	case inBook:
		pl.InBook++
	case p.CanWinNext():
		pl.Immediate = append(pl.Immediate, book.EntryOf(p, book.Value{Score: b.WinNowScore(p.Moves()), Origin: book.OriginDerived}))
	case p.IsFull():
		pl.Immediate = append(pl.Immediate, book.EntryOf(p, book.Value{Score: 0, Origin: book.OriginDerived}))
	case p.Moves() == pl.spec.Depth:
		pl.Leaves = append(pl.Leaves, p.Key())
	default:
		pl.Interior++
	}
	if p.Moves() == pl.spec.Depth {
		return nil
	}
	// The children, also when p is in the book or won at once: they are
	// positions of the job too.
	for _, child := range p.Children() {
		if child.LastMoveWon() {
			continue // terminal: not a book position
		}
		if err := pl.visit(child); err != nil {
			return err
		}
	}
	return nil
}

// Tasks splits leaves into runs of at most size, in order.
func Tasks(leaves []uint64, size int) [][]uint64 {
	var tasks [][]uint64
	for len(leaves) > 0 {
		n := min(size, len(leaves))
		tasks = append(tasks, leaves[:n:n])
		leaves = leaves[n:]
	}
	return tasks
}
