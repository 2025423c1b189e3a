package book

import (
	"errors"
	"testing"

	"github.com/c4book/c4book/solver"
)

// TestOracle: an oracle answers the book's scores, counts its lookups, and
// refuses a solver of another board; an empty book attaches nothing.
func TestOracle(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	empty, err := bk.NewOracle()
	if err != nil || empty.Depth() != -1 {
		t.Fatalf("NewOracle of an empty book: depth %d, %v", empty.Depth(), err)
	}
	empty.Close()

	entries := solvedEntries(t, board5x4, 3)
	putAll(t, bk, entries)
	o, err := bk.NewOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Depth() != 3 {
		t.Errorf("Depth = %d, want 3", o.Depth())
	}
	e := entries[len(entries)-1]
	p, _ := board5x4.PositionFromKey(e.Key)
	if v, ok := o.Score(&p); !ok || v != e.Score {
		t.Errorf("Score = %d, %v; want %d", v, ok, e.Score)
	}
	deeper := mustParse(t, board5x4, "1234")
	if _, ok := o.Score(&deeper); ok {
		t.Error("Score of a position the book does not hold: found")
	}
	if asked, found := o.Lookups(); asked != 2 || found != 1 {
		t.Errorf("Lookups = %d, %d; want 2, 1", asked, found)
	}
	other, _ := solver.New(solver.Standard, 1<<20)
	if err := o.Attach(other); !errors.Is(err, ErrBoardMismatch) {
		t.Errorf("Attach to a 7x6 solver: %v, want ErrBoardMismatch", err)
	}
}
