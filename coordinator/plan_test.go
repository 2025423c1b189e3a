package coordinator

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// newBook returns an empty book of board b in a temporary directory.
func newBook(tb testing.TB, b *solver.Board) *book.Book {
	tb.Helper()
	bk, err := book.Open(filepath.Join(tb.TempDir(), "book"), &book.Options{Create: true, Board: b, CacheBytes: 8 << 20, MemTableBytes: 4 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { bk.Close() })
	return bk
}

// solveLeaves solves the leaves of plan with s and writes them, as workers
// would.
func solveLeaves(tb testing.TB, b *solver.Board, bk *book.Book, leaves []uint64) {
	tb.Helper()
	s, err := solver.New(b, 1<<20)
	if err != nil {
		tb.Fatal(err)
	}
	var entries []book.Entry
	for _, k := range leaves {
		p, err := b.PositionFromKey(k)
		if err != nil {
			tb.Fatal(err)
		}
		entries = append(entries, book.EntryOf(p, book.Value{Score: s.Solve(p), Origin: book.OriginSolved}))
	}
	if err := bk.PutBatch(entries); err != nil {
		tb.Fatal(err)
	}
}

// jobPositions enumerates the non-terminal positions of a job the plain
// way: every move sequence, deduplicated at the end by canonical key.
func jobPositions(b *solver.Board, root string, depth int) map[uint64]solver.Position {
	all := map[uint64]solver.Position{}
	var walk func(p solver.Position)
	walk = func(p solver.Position) {
		if p.Moves() > 0 && p.LastMoveWon() {
			return
		}
		all[p.CanonicalKey()] = p
		if p.Moves() == depth {
			return
		}
		for col := range b.Width() {
			if p.CanPlay(col) {
				child := p
				child.Play(col)
				walk(child)
			}
		}
	}
	r, _ := b.Parse(root)
	walk(r)
	return all
}

func TestMakePlan_andDerive(t *testing.T) {
	for _, tc := range []struct {
		board     *solver.Board
		root      string
		depth     int
		preInBook int // depth of an earlier job already in the book, or -1
	}{
		{solver.MustBoard(4, 4), "", 16, -1}, // the whole game: no leaf, all derived
		{solver.MustBoard(5, 4), "", 8, -1},
		{solver.MustBoard(5, 4), "33", 10, 6}, // on top of a smaller book
		{solver.Standard, "274552224131661", 17, -1},
	} {
		spec := Spec{Board: tc.board, Root: tc.root, Depth: tc.depth, TaskSize: 16}
		t.Run(spec.ID(), func(t *testing.T) {
			bk := newBook(t, tc.board)
			s, _ := solver.New(tc.board, 4<<20)
			if tc.preInBook >= 0 {
				pre := spec
				pre.Depth = tc.preInBook
				pl, err := MakePlan(context.Background(), pre, bk, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := bk.PutBatch(pl.Immediate); err != nil {
					t.Fatal(err)
				}
				solveLeaves(t, tc.board, bk, pl.Leaves)
				if _, err := Derive(context.Background(), pre, bk, nil); err != nil {
					t.Fatal(err)
				}
			}
			want := jobPositions(tc.board, tc.root, tc.depth)
			pl, err := MakePlan(context.Background(), spec, bk, nil)
			if err != nil {
				t.Fatal(err)
			}
			if pl.Positions != int64(len(want)) {
				t.Errorf("plan of %d positions, want %d", pl.Positions, len(want))
			}
			if got := pl.InBook + pl.Interior + int64(len(pl.Immediate)) + int64(len(pl.Leaves)); got != pl.Positions {
				t.Errorf("in book %d + interior %d + immediate %d + leaves %d = %d, want %d positions",
					pl.InBook, pl.Interior, len(pl.Immediate), len(pl.Leaves), got, pl.Positions)
			}
			if tc.preInBook < 0 && pl.InBook != 0 {
				t.Errorf("%d positions in an empty book", pl.InBook)
			}
			for _, k := range pl.Leaves {
				p, err := tc.board.PositionFromKey(k)
				if err != nil || p.Moves() != tc.depth {
					t.Fatalf("leaf %#x: %v, %d stones", k, err, p.Moves())
				}
			}
			// Deriving before the leaves are in fails and writes nothing
			// wrong.
			if len(pl.Leaves) > 0 {
				if _, err := Derive(context.Background(), spec, bk, nil); !errors.Is(err, ErrMissingLeaf) {
					t.Fatalf("Derive without leaves = %v, want ErrMissingLeaf", err)
				}
			}
			if err := bk.PutBatch(pl.Immediate); err != nil {
				t.Fatal(err)
			}
			solveLeaves(t, tc.board, bk, pl.Leaves)
			derived, err := Derive(context.Background(), spec, bk, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.preInBook < 0 && derived != pl.Interior {
				t.Errorf("derived %d positions, plan said %d", derived, pl.Interior)
			}
			// Every position of the job is in the book with its exact score.
			for ck, p := range want {
				v, ok, err := bk.GetEntry(p.Moves(), ck)
				if err != nil || !ok {
					t.Fatalf("%v: in book %v, %v", p, ok, err)
				}
				if exact := s.Solve(p); v.Score != exact {
					t.Fatalf("book says %d, solver %d:\n%v", v.Score, exact, p)
				}
			}
			// A second plan finds nothing to do.
			again, err := MakePlan(context.Background(), spec, bk, nil)
			if err != nil {
				t.Fatal(err)
			}
			if again.InBook != again.Positions || len(again.Leaves) != 0 || again.Interior != 0 {
				t.Errorf("plan of a finished job: %+v", again)
			}
		})
	}
}

func TestTasks(t *testing.T) {
	leaves := []uint64{1, 2, 3, 4, 5, 6, 7}
	tasks := Tasks(leaves, 3)
	if len(tasks) != 3 || len(tasks[0]) != 3 || len(tasks[2]) != 1 || tasks[2][0] != 7 {
		t.Errorf("Tasks = %v", tasks)
	}
	if Tasks(nil, 3) != nil {
		t.Errorf("Tasks(nil) not empty")
	}
}

func TestSpec_Validate(t *testing.T) {
	for _, spec := range []Spec{
		{Board: nil, Depth: 1, TaskSize: 1},
		{Board: solver.Standard, Root: "448", Depth: 8, TaskSize: 1},
		{Board: solver.Standard, Root: "1212121", Depth: 10, TaskSize: 1},
		{Board: solver.Standard, Root: "4444", Depth: 3, TaskSize: 1},
		{Board: solver.Standard, Depth: 43, TaskSize: 1},
		{Board: solver.Standard, Depth: 8, TaskSize: 0},
	} {
		if _, err := spec.Validate(); err == nil {
			t.Errorf("Validate(%+v) accepted", spec)
		}
	}
	if id := (Spec{Board: solver.Standard, Root: "4453", Depth: 12}).ID(); id != "7x6-4453-d12" {
		t.Errorf("ID = %q", id)
	}
}
