package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/book/bookfile"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
)

// bookEntries returns every entry of the book at path, in key order.
func bookEntries(tb testing.TB, path string) []book.Entry {
	tb.Helper()
	var all []book.Entry
	withBook(tb, path, func(bk *book.Book) {
		for e, err := range bk.Entries(0, bk.Board().Cells()) {
			if err != nil {
				tb.Fatal(err)
			}
			all = append(all, e)
		}
	})
	return all
}

// mixOrigins gives the entries of the book at path the three origins in
// turn, keeping their scores, and returns the entries.
func mixOrigins(tb testing.TB, path string) []book.Entry {
	tb.Helper()
	entries := bookEntries(tb, path)
	for i := range entries {
		entries[i].Origin = book.Origins[i%len(book.Origins)]
	}
	withBook(tb, path, func(bk *book.Book) {
		if err := bk.PutBatch(entries); err != nil {
			tb.Fatal(err)
		}
	})
	return entries
}

// readBinaryFile reads a binary export with bookfile.BinaryReader.
func readBinaryFile(tb testing.TB, name string) (bookfile.BinaryHeader, []book.Entry) {
	tb.Helper()
	f, err := os.Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r, err := bookfile.NewBinaryReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var all []book.Entry
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Header(), all
		}
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, e)
	}
}

// TestBookExport_bin: a real book exported with --format bin and imported
// into a new book (made for the file's board) gives every entry back,
// score and origin; imported again, every record is held.
func TestBookExport_bin(t *testing.T) {
	t.Parallel()
	path := makeBook(t, testBookDepth)
	want := mixOrigins(t, path)
	out := filepath.Join(t.TempDir(), "5x4.bin")
	r := run(t, "", "book", "export", "--book", path, "--format", "bin", "--out", out)
	wantOK(t, r)
	size := 20 + 11*len(want)
	if re := `^wrote ` + human.Count(len(want)) + ` positions of at most 5 stones to .*5x4.bin: ` + human.Count(size) + ` bytes, binary format version 1\n$`; !regexp.MustCompile(re).MatchString(r.stderr) {
		t.Errorf("stderr %q does not match %s", r.stderr, re)
	}
	h, got := readBinaryFile(t, out)
	if h.Board.String() != "5x4" || h.Depth != testBookDepth || !slices.Equal(got, want) {
		t.Fatalf("the file: board %v, depth %d, %d entries; want 5x4, %d, the book's %d", h.Board, h.Depth, len(got), testBookDepth, len(want))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}

	fresh := filepath.Join(t.TempDir(), "fresh")
	t.Run("import into a new book", func(t *testing.T) {
		r := run(t, "", "book", "import", "--create", "--book", fresh, out)
		wantOK(t, r)
		n := human.Count(int64(len(want)))
		if w := out + ": " + n + " records: " + n + " entries written, 0 held already, 0 conflicting\n"; r.stdout != w {
			t.Errorf("stdout %q, want %q", r.stdout, w)
		}
		if got := bookEntries(t, fresh); !slices.Equal(got, want) {
			t.Errorf("the imported book holds %d entries, not the %d exported, or not the same", len(got), len(want))
		}
	})
	t.Run("again, from standard input", func(t *testing.T) {
		r := run(t, string(data), "book", "import", "--book", fresh)
		wantOK(t, r)
		n := human.Count(int64(len(want)))
		if w := "standard input: " + n + " records: 0 entries written, " + n + " held already, 0 conflicting\n"; r.stdout != w {
			t.Errorf("stdout %q, want %q", r.stdout, w)
		}
	})
	t.Run("a conflicting score", func(t *testing.T) {
		e := want[len(want)-1]
		other := e
		other.Score = -e.Score
		if other.Score == e.Score {
			other.Score = 1
		}
		withBook(t, fresh, func(bk *book.Book) {
			if err := bk.PutBatch([]book.Entry{other}); err != nil {
				t.Fatal(err)
			}
		})
		r := run(t, "", "book", "import", "--book", fresh, out)
		wantErr(t, r, "1 of "+itoa(len(want))+" records are bad or conflicting")
		if w := "record " + itoa(len(want)-1) + ": "; !strings.HasPrefix(r.stderr, w) || !strings.Contains(r.stderr, "but "+itoa(other.Score)+" is held: kept") {
			t.Errorf("stderr %q, want it to name record %d and the score held", r.stderr, len(want)-1)
		}
		r = run(t, "", "book", "import", "--overwrite", "--book", fresh, out)
		wantOK(t, r)
		if got := bookEntries(t, fresh); !slices.Equal(got, want) {
			t.Error("after --overwrite the book differs from the file")
		}
	})
	t.Run("--max-depth", func(t *testing.T) {
		shallow := filepath.Join(t.TempDir(), "shallow.bin")
		wantOK(t, run(t, "", "book", "export", "--book", path, "--format", "bin", "--max-depth", "2", "--out", shallow))
		h, got := readBinaryFile(t, shallow)
		var w []book.Entry
		for _, e := range want {
			if e.Depth <= 2 {
				w = append(w, e)
			}
		}
		if h.Depth != 2 || !slices.Equal(got, w) {
			t.Errorf("--max-depth 2: depth %d, %d entries; want 2, %d", h.Depth, len(got), len(w))
		}
	})
	t.Run("a truncated file", func(t *testing.T) {
		cut := filepath.Join(t.TempDir(), "cut.bin")
		if err := os.WriteFile(cut, data[:len(data)-3], 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, "", "book", "import", "--create", "--book", filepath.Join(t.TempDir(), "b"), cut)
		last := len(want) - 1
		wantErr(t, r, cut+": binary book: record "+itoa(last)+" (byte "+itoa(20+11*last)+"): truncated: the file ends 8 bytes into record")
		if code := exitCode(r.err); code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
	})
	t.Run("a damaged header", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.bin")
		if err := os.WriteFile(bad, append([]byte("\x89C4BOOK\n\x07"), data[9:]...), 0o644); err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(t.TempDir(), "b")
		wantErr(t, run(t, "", "book", "import", "--create", "--book", other, bad), "version 7, this program reads up to 1")
		if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused file made the book: %v", err)
		}
	})
	t.Run("another board given", func(t *testing.T) {
		r := run(t, "", "book", "import", "--create", "--book", filepath.Join(t.TempDir(), "b"), "--width=7", "--height=6", out)
		wantErr(t, r, "the file holds 5x4 positions, not 7x6")
	})
	t.Run("into a book of another board", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "7x6")
		wantOK(t, run(t, "- 1\n", "book", "import", "--create", "--book", other))
		wantErr(t, run(t, "", "book", "import", "--book", other, out), "the file holds 5x4 positions, the book 7x6")
	})
}
