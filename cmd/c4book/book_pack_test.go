package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBookPack: a generated book packed reads as the book: its exports
// (binary, origins included, and text) are byte for byte the same, its
// digest too; book stats describes it; the commands that write refuse it;
// a book missing a position, or of two finished jobs, is not packed
// without being told which.
func TestBookPack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "5x4.db")
	wantOK(t, run(t, "", append([]string{"generate", "--depth", "8", "--book", src, "--workers", "1", testTTSize}, testBoardFlags...)...))
	packed := filepath.Join(dir, "5x4-d8.c4pack")
	r := run(t, "", "book", "pack", "--book", src, packed)
	wantOK(t, r)
	if !strings.Contains(r.stdout, "checked: its lookups give the book's digest") || !strings.Contains(r.stdout, "root -, 8 stones and fewer") {
		t.Errorf("pack's report:\n%s\n%s", r.stdout, r.stderr)
	}
	for _, format := range []string{"bin", "text"} {
		a, b := filepath.Join(dir, "a."+format), filepath.Join(dir, "b."+format)
		wantOK(t, run(t, "", "book", "export", "--format", format, "--book", src, "--out", a))
		wantOK(t, run(t, "", "book", "export", "--format", format, "--book", packed, "--out", b))
		da, _ := os.ReadFile(a)
		db, _ := os.ReadFile(b)
		if len(da) == 0 || !bytes.Equal(da, db) {
			t.Errorf("the %s exports of the book and of its packed book differ (%d and %d bytes)", format, len(da), len(db))
		}
	}
	d1, d2 := run(t, "", "book", "digest", "--book", src), run(t, "", "book", "digest", "--book", packed)
	wantOK(t, d1)
	if d1.stdout != d2.stdout || d2.err != nil {
		t.Errorf("digests %q and %q (%v)", d1.stdout, d2.stdout, d2.err)
	}
	st := run(t, "", "book", "stats", "--book", packed)
	wantOK(t, st)
	if !strings.Contains(st.stdout, "packed book, format 1: the set of root - to 8 stones") || !strings.Contains(st.stdout, "digest "+strings.TrimSpace(d1.stdout)) {
		t.Errorf("stats of the packed book:\n%s", st.stdout)
	}
	g := run(t, "", "book", "get", "--book", packed, "33", "3333")
	wantOK(t, g)
	if lines := outputLines(g.stdout); len(lines) != 2 || !strings.HasPrefix(lines[0], "33 ") {
		t.Errorf("book get of the packed book:\n%s", g.stdout)
	}
	wantErr(t, run(t, "33 1\n", "book", "import", "--book", packed), "it is a packed book, which is never written")

	// A shallower set of the job's (as the shipped depth-14 book is packed
	// from the depth-16 job's book): its digest is the book's to that depth.
	shallow := filepath.Join(dir, "5x4-d6.c4pack")
	wantOK(t, run(t, "", "book", "pack", "--book", src, "--depth", "6", shallow))
	d6, p6 := run(t, "", "book", "digest", "--depth", "6", "--book", src), run(t, "", "book", "digest", "--book", shallow)
	wantOK(t, d6)
	if d6.stdout == d1.stdout || d6.stdout != p6.stdout || p6.err != nil {
		t.Errorf("digests to depth 6 of the book %q and of its packed depth 6 %q (%v); the whole book's %q", d6.stdout, p6.stdout, p6.err, d1.stdout)
	}

	// Another finished job in the book: which to pack must be said.
	wantOK(t, run(t, "", append([]string{"generate", "--depth", "9", "--root", "33", "--book", src, "--workers", "1", testTTSize}, testBoardFlags...)...))
	wantErr(t, run(t, "", "book", "pack", "--book", src, filepath.Join(dir, "x.c4pack")), "has 2 finished jobs: say which to pack")
	wantOK(t, run(t, "", "book", "pack", "--book", src, "--root", "33", "--depth", "9", filepath.Join(dir, "33.c4pack")))
	// A set the book does not hold whole: the first missing position
	// named, nothing written.
	out := filepath.Join(dir, "d10.c4pack")
	wantErr(t, run(t, "", "book", "pack", "--book", src, "--depth", "10", out), "is incomplete for root - and depth 10", "is not in the book")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed pack left %s: %v", out, err)
	}
}
