package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/internal/keyfile"
	"github.com/c4book/c4book/solver"
)

// halfSolvedJob plans the 5x4 job of depth in a new book at path and
// solves the first half of its leaves in the job's order, as a job
// stopped half-way leaves it, and returns the number solved.
func halfSolvedJob(t *testing.T, path string, depth int) int {
	t.Helper()
	b := solver.MustBoard(5, 4)
	bk, err := book.Open(path, &book.Options{Create: true, Board: b, CacheBytes: 1 << 20, MemTableBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	spec := coordinator.Spec{Board: b, Depth: depth, TaskSize: 1}
	dir := filepath.Join(coordinator.PlansDir(path), spec.ID())
	if _, err := coordinator.MakePlan(context.Background(), spec, bk, dir, nil); err != nil {
		t.Fatal(err)
	}
	kf, err := keyfile.Open(filepath.Join(dir, "leaves"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	order, err := keyfile.OpenList(filepath.Join(dir, "order"))
	if err != nil {
		t.Fatal(err)
	}
	defer order.Close()
	first, err := order.Keys(nil, 0, order.Len()/2)
	if err != nil {
		t.Fatal(err)
	}
	s, err := solver.New(b, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var solved []book.Entry
	for _, i := range first {
		k, err := kf.Keys(nil, int64(i), int64(i)+1)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.PositionFromKey(k[0])
		if err != nil {
			t.Fatal(err)
		}
		solved = append(solved, book.EntryOf(p, book.Value{Score: s.Solve(p), Origin: book.OriginSolved}))
	}
	if err := bk.PutBatch(solved); err != nil {
		t.Fatal(err)
	}
	return len(solved)
}

// TestBookCheckpoint_carriesJob carries a job solved half-way to a new
// book by a checkpoint, finishes it there, and checks the book against
// one generated in one go.
func TestBookCheckpoint_carriesJob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, dst, full, ck := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db"), filepath.Join(dir, "full.db"), filepath.Join(dir, "d9.leaves")
	half := halfSolvedJob(t, src, 9)

	r := run(t, "", "book", "checkpoint", "--depth", "9", "--book", src, ck)
	wantOK(t, r)
	if !regexp.MustCompile(`^Job 5x4-d9: ` + human.Count(int64(half)) + ` of [0-9,]+ leaves solved \([0-9.]+%\), written to `).MatchString(r.stdout) {
		t.Errorf("checkpoint said %q", r.stdout)
	}
	r = run(t, "", append([]string{"book", "restore", "--create", "--book", dst, ck}, testBoardFlags...)...)
	wantOK(t, r)
	if !regexp.MustCompile(`^Job 5x4-d9: ` + human.Count(int64(half)) + ` of [0-9,]+ leaves restored .*: run the job \(--depth 9\) to solve the rest`).MatchString(r.stdout) {
		t.Errorf("restore said %q", r.stdout)
	}
	const taskSize = 16
	wantOK(t, run(t, "", append([]string{"generate", "--depth", "9", "--task-size", itoa(taskSize), "--book", dst}, testBoardFlags...)...))
	wantOK(t, run(t, "", append([]string{"generate", "--depth", "9", "--book", full}, testBoardFlags...)...))
	imported := 0
	withBook(t, dst, func(bk *book.Book) {
		for e, err := range bk.Entries(9, 9) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Origin == book.OriginImported {
				imported++
			}
		}
	})
	// The task holding the last leaf restored and the next is solved
	// again, whole.
	if imported < half-taskSize || imported > half {
		t.Errorf("%d leaves imported in the finished book, want the checkpoint's %d but at most a task's", imported, half)
	}
	a, b := run(t, "", "book", "digest", "--book", dst), run(t, "", "book", "digest", "--book", full)
	wantOK(t, a)
	if a.stdout != b.stdout {
		t.Errorf("digest of the book carried by a checkpoint %q, of the one generated at once %q", a.stdout, b.stdout)
	}

	wantErr(t, run(t, "", "book", "checkpoint", "--book", dst, ck), "--depth is needed")
	wantErr(t, run(t, "", "book", "checkpoint", "--depth", "9", "--book", dst, ck), "job 5x4-d9 is complete")
	text := filepath.Join(dir, "lines.txt")
	if err := os.WriteFile(text, []byte("3 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr(t, run(t, "", "book", "restore", "--book", dst, text), "lines.txt: not a checkpoint file")
}
