package coordinator

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// checkpointJob plans spec in a new book, solves every third leaf, and
// returns the book, its plan directory and the checkpoint of the job.
func checkpointJob(t *testing.T, spec Spec) (*book.Book, string, []byte) {
	t.Helper()
	bk := newBook(t, spec.Board)
	dir := filepath.Join(PlansDir(bk.Path()), spec.ID())
	if _, err := MakePlan(context.Background(), spec, bk, dir, nil); err != nil {
		t.Fatal(err)
	}
	var some []uint64
	for i, k := range planLeaves(t, dir) {
		if i%3 == 0 {
			some = append(some, k)
		}
	}
	solveLeaves(t, spec.Board, bk, some)
	var buf bytes.Buffer
	st, err := SaveCheckpoint(context.Background(), spec, bk, dir, &buf, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Leaves != int64(len(planLeaves(t, dir))) || st.Held != int64(len(some)) {
		t.Fatalf("checkpoint of %d leaves holding %d, want %d holding %d", st.Leaves, st.Held, len(planLeaves(t, dir)), len(some))
	}
	return bk, dir, buf.Bytes()
}

// leafEntries returns the book's entries of depth d but those derived
// (scored at once by planning), by key.
func leafEntries(t *testing.T, bk *book.Book, d int) map[uint64]book.Value {
	t.Helper()
	out := map[uint64]book.Value{}
	for e, err := range bk.Entries(d, d) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Origin != book.OriginDerived {
			out[e.Key] = e.Value
		}
	}
	return out
}

// heldTasks returns how many of the tasks of the plan in dir the book
// holds whole, as a job run counts them.
func heldTasks(t *testing.T, spec Spec, bk *book.Book, dir string) int {
	t.Helper()
	leaves, err := openLeaves(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer leaves.Close()
	tasks := newTaskTable(leaves, spec.TaskSize)
	if err := tasks.markHeld(bk.Entries(spec.Depth, spec.Depth)); err != nil {
		t.Fatal(err)
	}
	return tasks.Len() - tasks.pending
}

func TestCheckpoint_restore(t *testing.T) {
	t.Parallel()
	spec := Spec{Board: solver.MustBoard(5, 4), Root: "3", Depth: 8, TaskSize: 2}
	src, srcDir, ck := checkpointJob(t, spec)

	dst := newBook(t, spec.Board)
	got, st, err := RestoreCheckpoint(context.Background(), spec.Board, dst, PlansDir(dst.Path()), bytes.NewReader(ck), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID() != spec.ID() {
		t.Errorf("restored job %s, want %s", got.ID(), spec.ID())
	}
	want := leafEntries(t, src, spec.Depth)
	if st.Held != int64(len(want)) || st.Written != st.Held {
		t.Errorf("restored %d of %d held, want %d of %d", st.Written, st.Held, len(want), len(want))
	}
	have := leafEntries(t, dst, spec.Depth)
	if len(have) != len(want) {
		t.Errorf("%d leaves restored, want %d", len(have), len(want))
	}
	for k, v := range want {
		if h, ok := have[k]; !ok || h.Score != v.Score || h.Origin != book.OriginImported {
			t.Errorf("leaf %#x: restored %v (held %v), want score %d imported", k, h, ok, v.Score)
		}
	}
	dstDir := filepath.Join(PlansDir(dst.Path()), spec.ID())
	if a, b := heldTasks(t, spec, src, srcDir), heldTasks(t, spec, dst, dstDir); a != b || a == 0 {
		t.Errorf("%d tasks held after the restore, %d before it; want the same, not 0", b, a)
	}

	// Again: the book holds every score already.
	if _, st, err := RestoreCheckpoint(context.Background(), spec.Board, dst, PlansDir(dst.Path()), bytes.NewReader(ck), nil); err != nil || st.Written != 0 || st.Held != int64(len(want)) {
		t.Errorf("restored again: %d written of %d, %v; want 0 of %d", st.Written, st.Held, err, len(want))
	}

	// A second session solves more; its checkpoint, of what it solved
	// alone, and the first restore into a third book what dst holds.
	var more []uint64
	for i, k := range planLeaves(t, dstDir) {
		if i%3 == 1 {
			more = append(more, k)
		}
	}
	solveLeaves(t, spec.Board, dst, more)
	var buf bytes.Buffer
	st, err = SaveCheckpoint(context.Background(), spec, dst, dstDir, &buf, true)
	if err != nil || st.Held != int64(len(more)) {
		t.Fatalf("checkpoint of the second session: %d held, %v; want %d", st.Held, err, len(more))
	}
	third := newBook(t, spec.Board)
	for _, file := range [][]byte{buf.Bytes(), ck} {
		if _, _, err := RestoreCheckpoint(context.Background(), spec.Board, third, PlansDir(third.Path()), bytes.NewReader(file), nil); err != nil {
			t.Fatal(err)
		}
	}
	want, have = leafEntries(t, dst, spec.Depth), leafEntries(t, third, spec.Depth)
	if len(have) != len(want) || len(want) != len(more)+int(st.Leaves+2)/3 {
		t.Errorf("two checkpoints restored %d leaves, want %d (%d + %d)", len(have), len(want), len(more), (st.Leaves+2)/3)
	}
	for k, v := range want {
		if have[k].Score != v.Score {
			t.Errorf("leaf %#x: score %d after two restores, want %d", k, have[k].Score, v.Score)
		}
	}
}

func TestCheckpoint_refused(t *testing.T) {
	t.Parallel()
	spec := Spec{Board: solver.MustBoard(5, 4), Root: "3", Depth: 8, TaskSize: 2}
	src, _, ck := checkpointJob(t, spec)
	var oneKey uint64
	var oneScore int
	for k, v := range leafEntries(t, src, spec.Depth) {
		oneKey, oneScore = k, v.Score
		break
	}
	body := len(ck) - int(len(planLeaves(t, filepath.Join(PlansDir(src.Path()), spec.ID()))))

	cases := []struct {
		name  string
		file  []byte
		board *solver.Board
		prep  func(bk *book.Book)
		want  string
	}{
		{"not a checkpoint", []byte("3 4\n"), spec.Board, nil, "not a checkpoint file"},
		{"header cut short", ck[:body-3], spec.Board, nil, "header: unexpected EOF"},
		{"other board", ck, solver.Standard, nil, "checkpoint of a 5x4 board"},
		{"truncated", ck[:len(ck)-1], spec.Board, nil, "truncated after"},
		{"longer", append(bytes.Clone(ck), 0), spec.Board, nil, "more than the"},
		{"no score", append(bytes.Clone(ck[:len(ck)-1]), 66), spec.Board, nil, "is no score"},
		{"another score", ck, spec.Board, func(bk *book.Book) {
			dir := filepath.Join(PlansDir(bk.Path()), spec.ID())
			if _, err := MakePlan(context.Background(), spec, bk, dir, nil); err != nil {
				t.Fatal(err)
			}
			if err := bk.PutBatch([]book.Entry{{Depth: spec.Depth, Key: oneKey, Value: book.Value{Score: oneScore + 1, Origin: book.OriginImported}}}); err != nil {
				t.Fatal(err)
			}
		}, "the book holds score"},
		{"other plan", ck, spec.Board, func(bk *book.Book) {
			// A leaf in the book before planning: the plan leaves it out.
			if err := bk.PutBatch([]book.Entry{{Depth: spec.Depth, Key: oneKey, Value: book.Value{Score: oneScore, Origin: book.OriginImported}}}); err != nil {
				t.Fatal(err)
			}
		}, "is not the checkpoint's"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bk := newBook(t, tc.board)
			if tc.prep != nil {
				tc.prep(bk)
			}
			before := len(leafEntries(t, bk, spec.Depth))
			_, _, err := RestoreCheckpoint(context.Background(), tc.board, bk, PlansDir(bk.Path()), bytes.NewReader(tc.file), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("restore: %v, want an error with %q", err, tc.want)
			}
			if after := len(leafEntries(t, bk, spec.Depth)); after != before {
				t.Errorf("%d leaves in the book after a refused restore, %d before", after, before)
			}
		})
	}
}

func TestSaveCheckpoint_noPlan(t *testing.T) {
	t.Parallel()
	spec := Spec{Board: solver.MustBoard(5, 4), Depth: 6, TaskSize: 2}
	bk := newBook(t, spec.Board)
	_, err := SaveCheckpoint(context.Background(), spec, bk, filepath.Join(PlansDir(bk.Path()), spec.ID()), &bytes.Buffer{}, false)
	if err == nil || !strings.Contains(err.Error(), "no job 5x4-d6 in this book") {
		t.Errorf("checkpoint without a plan: %v", err)
	}
}
