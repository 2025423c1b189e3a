package book

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copyDir copies the files of a book directory: with the book still open,
// the copy is what a crash at that moment would leave on disk (at best:
// the page cache is copied too).
func copyDir(tb testing.TB, src, dst string) {
	tb.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		tb.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			tb.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			tb.Fatal(err)
		}
	}
}

// walFile returns the path of the newest write-ahead log of a book
// directory, the one being written.
func walFile(tb testing.TB, dir string) string {
	tb.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		tb.Fatalf("write-ahead logs in %s: %v, %v", dir, logs, err)
	}
	return slices.Max(logs) // names are zero-padded numbers
}

// countPresent opens the book at dir and returns how many of entries it
// holds with their values.
func countPresent(tb testing.TB, dir string, entries []Entry) int {
	tb.Helper()
	bk, err := Open(dir, &Options{ReadOnly: true, CacheBytes: 1 << 20})
	if err != nil {
		tb.Fatalf("reopen %s: %v", dir, err)
	}
	defer bk.Close()
	n := 0
	for _, e := range entries {
		v, ok, err := bk.GetEntry(e.Depth, e.Key)
		if err != nil {
			tb.Fatal(err)
		}
		if ok && v == e.Value {
			n++
		}
	}
	return n
}

// TestBatch_Commit_crash checks that a batch is in the book whole or not at
// all, whatever happens after Commit or before it.
func TestBatch_Commit_crash(t *testing.T) {
	t.Parallel()
	all := solvedEntries(t, board5x4, 6)
	first, second := all[:200], all[200:]

	t.Run("closed without flushing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		bk := openBook(t, dir, testOptions(board5x4))
		putAll(t, bk, all)
		if err := bk.Close(); err != nil {
			t.Fatal(err)
		}
		if ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst")); len(ssts) != 0 {
			t.Logf("tables after Close: %v (the memtable was flushed)", ssts)
		}
		if n := countPresent(t, dir, all); n != len(all) {
			t.Errorf("%d of %d entries after reopening", n, len(all))
		}
	})

	t.Run("crash after commit", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		bk := openBook(t, dir, testOptions(board5x4))
		putAll(t, bk, all)
		crash := filepath.Join(t.TempDir(), "crash")
		copyDir(t, dir, crash)
		if n := countPresent(t, crash, all); n != len(all) {
			t.Errorf("%d of %d entries after a crash", n, len(all))
		}
	})

	t.Run("batch never committed", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		bk := openBook(t, dir, testOptions(board5x4))
		putAll(t, bk, first)
		w := bk.NewBatch()
		for _, e := range second {
			if err := w.Put(e); err != nil {
				t.Fatal(err)
			}
		}
		crash := filepath.Join(t.TempDir(), "crash")
		copyDir(t, dir, crash)
		if n := countPresent(t, crash, first); n != len(first) {
			t.Errorf("crash: %d of %d committed entries", n, len(first))
		}
		if n := countPresent(t, crash, second); n != 0 {
			t.Errorf("crash: %d entries of the uncommitted batch", n)
		}
		w.Close()
		if err := bk.Close(); err != nil {
			t.Fatal(err)
		}
		if n := countPresent(t, dir, second); n != 0 {
			t.Errorf("close: %d entries of the uncommitted batch", n)
		}
	})

	t.Run("torn write-ahead log", func(t *testing.T) {
		// A crash in the middle of writing the second batch leaves a log
		// cut somewhere inside it: the batch is then whole or absent.
		dir := filepath.Join(t.TempDir(), "book")
		bk := openBook(t, dir, testOptions(board5x4))
		putAll(t, bk, first)
		st, err := os.Stat(walFile(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		start := st.Size()
		putAll(t, bk, second)
		st, _ = os.Stat(walFile(t, dir))
		end := st.Size()
		if end <= start {
			t.Fatalf("log grew from %d to %d bytes", start, end)
		}
		image := filepath.Join(t.TempDir(), "image")
		copyDir(t, dir, image)
		cuts := []int64{start, start + 1, start + 7, (start + end) / 2, end - 1, end}
		for _, cut := range cuts {
			crash := filepath.Join(t.TempDir(), "crash")
			copyDir(t, image, crash)
			if err := os.Truncate(walFile(t, crash), cut); err != nil {
				t.Fatal(err)
			}
			if n := countPresent(t, crash, first); n != len(first) {
				t.Errorf("log cut at %d: %d of %d entries of the first batch", cut, n, len(first))
			}
			n := countPresent(t, crash, second)
			if n != 0 && n != len(second) {
				t.Errorf("log cut at %d (batch at %d..%d): %d of %d entries of the second batch", cut, start, end, n, len(second))
			}
			if cut == end && n != len(second) {
				t.Errorf("whole log: %d of %d entries of the second batch", n, len(second))
			}
			if cut < end && n != 0 {
				t.Errorf("log cut at %d: torn batch visible", cut)
			}
		}
	})
}

// TestOpen_lock checks that a read-only open does not take the book from
// under a writer.
func TestOpen_lock(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "book")
	openBook(t, dir, testOptions(board4x4))
	_, err := Open(dir, &Options{ReadOnly: true})
	if err == nil {
		t.Fatal("read-only Open of a book open for writing succeeded")
	}
	if !strings.Contains(err.Error(), "lock") {
		t.Logf("error does not mention the lock: %v", err)
	}
	t.Logf("%v", err)
}
