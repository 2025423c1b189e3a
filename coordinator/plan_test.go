package coordinator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/internal/keyfile"
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
// way: every move sequence, deduplicated at the end by canonical key. A
// position met again by another order of the same moves is not walked
// again (its key, unique to it, mirrors not folded, says so): what lies
// below a position depends on the position only.
func jobPositions(b *solver.Board, root string, depth int) map[uint64]solver.Position {
	all := map[uint64]solver.Position{}
	walked := map[uint64]bool{}
	var walk func(p solver.Position)
	walk = func(p solver.Position) {
		if p.Moves() > 0 && p.LastMoveWon() || walked[p.Key()] {
			return
		}
		walked[p.Key()] = true
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

// planLeaves returns the keys of the leaves file of the plan in dir.
func planLeaves(tb testing.TB, dir string) []uint64 {
	tb.Helper()
	kf, err := keyfile.Open(leavesFile(dir))
	if err != nil {
		tb.Fatal(err)
	}
	defer kf.Close()
	keys, err := kf.Keys(nil, 0, kf.Len())
	if err != nil {
		tb.Fatal(err)
	}
	return keys
}

func TestMakePlan_andDerive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		board     *solver.Board
		root      string
		depth     int
		preInBook int // depth of an earlier job already in the book, or -1
		memKeys   int // of the planner's sorter: small makes it spill runs
	}{
		{solver.MustBoard(4, 4), "", 16, -1, 0}, // the whole game: no leaf, all derived
		{solver.MustBoard(5, 4), "", 8, -1, 100},
		{solver.MustBoard(5, 4), "33", 10, 6, 0}, // on top of a smaller book
		{solver.Standard, "274552224131661", 17, -1, 1000},
	} {
		spec := Spec{Board: tc.board, Root: tc.root, Depth: tc.depth, TaskSize: 16}
		t.Run(spec.ID(), func(t *testing.T) {
			t.Parallel()
			bk := newBook(t, tc.board)
			s, _ := solver.New(tc.board, 4<<20)
			opts := &PlanOptions{MemKeys: tc.memKeys}
			if tc.preInBook >= 0 {
				pre := spec
				pre.Depth = tc.preInBook
				dir := t.TempDir()
				if _, err := MakePlan(context.Background(), pre, bk, dir, opts); err != nil {
					t.Fatal(err)
				}
				solveLeaves(t, tc.board, bk, planLeaves(t, dir))
				if _, err := Derive(context.Background(), pre, bk, dir, nil); err != nil {
					t.Fatal(err)
				}
			}
			want := jobPositions(tc.board, tc.root, tc.depth)
			dir := t.TempDir()
			pl, err := MakePlan(context.Background(), spec, bk, dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if pl.Positions != int64(len(want)) {
				t.Errorf("plan of %d positions, want %d", pl.Positions, len(want))
			}
			if tc.preInBook < 0 && pl.InBook != 0 {
				t.Errorf("%d positions in an empty book", pl.InBook)
			}
			leaves := planLeaves(t, dir)
			if int64(len(leaves)) != pl.Leaves {
				t.Errorf("%d leaves in the file, %d counted", len(leaves), pl.Leaves)
			}
			for _, k := range leaves {
				p, err := tc.board.PositionFromKey(k)
				if err != nil || p.Moves() != tc.depth || k != p.CanonicalKey() || p.CanWinNext() {
					t.Fatalf("leaf %#x: %v, %d stones: want a canonical key of the job's depth, no win at once", k, err, p.Moves())
				}
				if _, ok := want[k]; !ok {
					t.Fatalf("leaf %#x is not a position of the job", k)
				}
			}
			// Planning again, whole, counts the same.
			if again, err := MakePlan(context.Background(), spec, bk, dir, opts); err != nil || again.Positions != pl.Positions || again.Leaves != pl.Leaves {
				t.Errorf("plan again = %+v, %v; want the same counts as %+v", again, err, pl)
			}
			// Deriving before the leaves are in fails and writes nothing
			// wrong.
			if len(leaves) > 0 {
				if _, err := Derive(context.Background(), spec, bk, dir, nil); !errors.Is(err, ErrMissingLeaf) {
					t.Fatalf("Derive without leaves = %v, want ErrMissingLeaf", err)
				}
			}
			solveLeaves(t, tc.board, bk, leaves)
			derived, err := Derive(context.Background(), spec, bk, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.preInBook < 0 && derived+pl.Immediate+pl.Leaves != pl.Positions {
				t.Errorf("derived %d + scored at once %d + solved %d, want the %d positions", derived, pl.Immediate, pl.Leaves, pl.Positions)
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
			dir2 := t.TempDir()
			again, err := MakePlan(context.Background(), spec, bk, dir2, opts)
			if err != nil {
				t.Fatal(err)
			}
			if again.InBook != again.Positions || again.Leaves != 0 || again.Immediate != 0 {
				t.Errorf("plan of a finished job: %+v", again)
			}
		})
	}
}

func TestSpec_Validate(t *testing.T) {
	t.Parallel()
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

// TestParseRoot: a root is legal moves whose game is not over; a four or
// a full board is refused with the message config gives for
// generate.root, and Spec.Validate gives it too.
func TestParseRoot(t *testing.T) {
	t.Parallel()
	row := solver.MustBoard(3, 1) // no four fits: a full board is a draw
	for _, c := range []struct {
		board *solver.Board
		moves string
		want  string // the error, or "" for a root of len(moves) stones
	}{
		{solver.Standard, "", ""},
		{solver.Standard, "4453", ""},
		{solver.Standard, "121212", ""}, // the player to move wins at once: still a root
		{row, "12", ""},
		{solver.Standard, "448", `column out of range`},
		{solver.Standard, "1212121", `"1212121" is a finished game: the book needs a position with moves left`},
		{row, "123", `"123" is a finished game: the book needs a position with moves left`},
	} {
		root, err := ParseRoot(c.board, c.moves)
		switch {
		case c.want == "" && (err != nil || root.Moves() != len(c.moves)):
			t.Errorf("ParseRoot(%v, %q) = %d stones, %v; want %d stones", c.board, c.moves, root.Moves(), err, len(c.moves))
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("ParseRoot(%v, %q): %v, want an error with %q", c.board, c.moves, err, c.want)
		}
		if c.want == "" {
			continue
		}
		spec := Spec{Board: c.board, Root: c.moves, Depth: c.board.Cells(), TaskSize: 1}
		if _, err := spec.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v): %v, want an error with %q", spec, err, c.want)
		}
	}
}

// dfsLeaves returns the leaves of a job with an empty book (the positions
// of its depth not scored at once) in the order a depth-first walk from
// the root meets them first, center column first: the order MakePlan
// gives them, found here the plain way.
func dfsLeaves(b *solver.Board, root string, depth int) []uint64 {
	seen := map[uint64]bool{}
	var leaves []uint64
	var walk func(p solver.Position)
	walk = func(p solver.Position) {
		k := p.CanonicalKey()
		if seen[k] {
			return // met before: so were its descendants
		}
		seen[k] = true
		if p.Moves() == depth {
			if !p.CanWinNext() && !p.IsFull() {
				leaves = append(leaves, k)
			}
			return
		}
		c := p
		if c.MirrorKey() < c.Key() {
			c = c.Mirror() // paths are made in the canonical orientation
		}
		for _, col := range b.CenterFirst() {
			if c.CanPlay(col) {
				child := c
				child.Play(col)
				if !child.LastMoveWon() {
					walk(child)
				}
			}
		}
	}
	r, _ := b.Parse(root)
	walk(r)
	return leaves
}

// TestMakePlan_order: the job's leaves come in depth-first order, spilled
// runs or not, from the empty board or a root.
func TestMakePlan_order(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		board   *solver.Board
		root    string
		depth   int
		memKeys int
	}{
		{solver.MustBoard(5, 4), "", 8, 0},
		{solver.MustBoard(5, 4), "", 8, 100},
		{solver.Standard, "4453", 9, 3000},
	} {
		spec := Spec{Board: tc.board, Root: tc.root, Depth: tc.depth, TaskSize: 16}
		t.Run(fmt.Sprintf("%s-mem%d", spec.ID(), tc.memKeys), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if _, err := MakePlan(context.Background(), spec, newBook(t, tc.board), dir, &PlanOptions{MemKeys: tc.memKeys}); err != nil {
				t.Fatal(err)
			}
			l, err := openLeaves(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.order == nil {
				t.Fatal("no order")
			}
			got, err := l.Keys(nil, 0, l.Len())
			if err != nil {
				t.Fatal(err)
			}
			want := dfsLeaves(tc.board, tc.root, tc.depth)
			if len(want) < 100 {
				t.Fatalf("only %d leaves: the test proves little", len(want))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d leaves in the job's order, want %d in depth-first order; first %#x, want %#x", len(got), len(want), got[:3], want[:3])
			}
		})
	}
}

// TestMakePlan_resume: a plan keeps no paths once whole, and a plan cut
// short (its levels whole to some depth, the paths of the deepest kept) is
// made on from there into the same plan as one made at once: the same
// leaves in the same order, the same counts.
func TestMakePlan_resume(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := Spec{Board: b, Depth: 9, TaskSize: 16}
	opts := &PlanOptions{MemKeys: 500}
	whole := t.TempDir()
	want, err := MakePlan(context.Background(), spec, newBook(t, b), whole, opts)
	if err != nil {
		t.Fatal(err)
	}
	if paths, _ := filepath.Glob(filepath.Join(whole, "paths-*")); len(paths) != 0 {
		t.Errorf("a whole plan keeps paths: %v", paths)
	}
	for _, cut := range []int{0, 4, 8} {
		// Levels 0..cut made as MakePlan makes them, cut's paths kept.
		dir := t.TempDir()
		bk := newBook(t, b)
		pl := &planner{spec: spec, book: bk, dir: dir, opts: *opts, ctx: context.Background(), rank: make([]uint64, b.Width())}
		for r, col := range b.CenterFirst() {
			pl.rank[col] = uint64(r)
		}
		empty := b.NewPosition()
		for d := 0; d <= cut; d++ {
			gen := func(add func(key, path uint64) error) error { return add(empty.CanonicalKey(), 0) }
			if d > 0 {
				gen = pl.children(d - 1)
			}
			if err := pl.level(d, gen); err != nil {
				t.Fatal(err)
			}
			if d > 0 {
				os.Remove(pathsFile(dir, d-1))
			}
		}
		made := map[int]os.FileInfo{} // the levels made: kept, not made again
		for d := 0; d <= cut; d++ {
			if made[d], err = os.Stat(levelFile(dir, d)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := MakePlan(context.Background(), spec, bk, dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		for d, before := range made {
			if now, err := os.Stat(levelFile(dir, d)); err != nil || !os.SameFile(before, now) {
				t.Errorf("cut after level %d: level %d made again (%v)", cut, d, err)
			}
		}
		if got.Positions != want.Positions || got.Leaves != want.Leaves {
			t.Errorf("cut after level %d: %+v, want %+v", cut, got, want)
		}
		for _, f := range []string{leavesFile(dir), orderFile(dir)} {
			a, errA := os.ReadFile(f)
			b, errB := os.ReadFile(filepath.Join(whole, filepath.Base(f)))
			if errA != nil || errB != nil || !slices.Equal(a, b) {
				t.Errorf("cut after level %d: %s differs from the plan made at once (%v, %v)", cut, filepath.Base(f), errA, errB)
			}
		}
		if paths, _ := filepath.Glob(filepath.Join(dir, "paths-*")); len(paths) != 0 {
			t.Errorf("cut after level %d: the whole plan keeps paths: %v", cut, paths)
		}
	}
}

// TestMakePlan_before: a plan made before paths and orders is solved in
// key order when whole, and made again when cut short.
func TestMakePlan_before(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := Spec{Board: b, Depth: 8, TaskSize: 16}
	bk := newBook(t, b)
	dir := t.TempDir()
	st, err := MakePlan(context.Background(), spec, bk, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	keyOrder := planLeaves(t, dir)
	paths, _ := filepath.Glob(filepath.Join(dir, "paths-*"))
	for _, p := range append(paths, orderFile(dir)) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	// Whole: key order.
	if again, err := MakePlan(context.Background(), spec, bk, dir, nil); err != nil || again.Leaves != st.Leaves {
		t.Fatalf("plan again = %+v, %v", again, err)
	}
	l, err := openLeaves(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.Keys(nil, 0, l.Len())
	l.Close()
	if err != nil || !slices.Equal(got, keyOrder) {
		t.Errorf("a whole plan without order: %d leaves, %v; want its %d in key order", len(got), err, len(keyOrder))
	}
	// Cut short: made again, with its order.
	if err := os.Remove(leavesFile(dir)); err != nil {
		t.Fatal(err)
	}
	if again, err := MakePlan(context.Background(), spec, bk, dir, nil); err != nil || again.Leaves != st.Leaves || again.Positions != st.Positions {
		t.Fatalf("plan again = %+v, %v; want %+v", again, err, st)
	}
	if _, err := os.Stat(orderFile(dir)); err != nil {
		t.Errorf("a plan made again has no order: %v", err)
	}
}

// TestPlanner_pathsGrow: paths grow while a uint64 holds them.
func TestPlanner_pathsGrow(t *testing.T) {
	t.Parallel()
	pl := &planner{spec: Spec{Board: solver.Standard}, rootDepth: 2}
	// 7^22 < 2^64 < 7^23
	if !pl.pathsGrow(24) || pl.pathsGrow(25) {
		t.Errorf("pathsGrow(24), pathsGrow(25) = %v, %v; want true, false", pl.pathsGrow(24), pl.pathsGrow(25))
	}
}
