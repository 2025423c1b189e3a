package book

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/c4book/c4book/solver"
)

// dirState describes every file of a directory (name, size, modification
// time and content hash), to check that nothing was written.
func dirState(tb testing.TB, dir string) []string {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var state []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			tb.Fatal(err)
		}
		sum := "dir"
		if !e.IsDir() {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				tb.Fatal(err)
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		state = append(state, fmt.Sprintf("%s %d %v %s", e.Name(), info.Size(), info.ModTime().UnixNano(), sum))
	}
	return state
}

// checkUnchanged fails if dir differs from the state taken before.
func checkUnchanged(tb testing.TB, dir string, before []string) {
	tb.Helper()
	if after := dirState(tb, dir); !slices.Equal(before, after) {
		tb.Errorf("directory %s changed:\nbefore %q\nafter  %q", dir, before, after)
	}
}

// writeRaw opens the Pebble database at dir directly, sets key to value and
// closes it.
func writeRaw(tb testing.TB, dir string, key, value []byte) {
	tb.Helper()
	db, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebbleFormat, Logger: quietLogger{}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Set(key, value, pebble.Sync); err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
}

// makeBook creates a book of board b at dir holding one entry, and closes
// it.
func makeBook(tb testing.TB, dir string, b *solver.Board) {
	tb.Helper()
	bk, err := Open(dir, testOptions(b))
	if err != nil {
		tb.Fatal(err)
	}
	if err := bk.Put(b.NewPosition(), Value{Score: 1, Origin: OriginSolved}); err != nil {
		tb.Fatal(err)
	}
	if err := bk.Close(); err != nil {
		tb.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	t.Run("create and reopen", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		makeBook(t, dir, board5x4)
		bk := openBook(t, dir, nil)
		if got := bk.Board().String(); got != "5x4" {
			t.Errorf("Board = %s, want 5x4", got)
		}
		v, ok, err := bk.Get(board5x4.NewPosition())
		if err != nil || !ok || v != (Value{Score: 1, Origin: OriginSolved}) {
			t.Errorf("Get(empty) = %v, %v, %v; want score 1 solved", v, ok, err)
		}
	})
	t.Run("create in empty directory", func(t *testing.T) {
		dir := t.TempDir()
		bk := openBook(t, dir, testOptions(board4x4))
		if bk.Board() != board4x4 {
			t.Errorf("Board = %v", bk.Board())
		}
	})
	t.Run("create opens an existing book", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		makeBook(t, dir, board4x4)
		bk := openBook(t, dir, testOptions(board4x4))
		if _, ok, err := bk.Get(board4x4.NewPosition()); !ok || err != nil {
			t.Errorf("Get(empty) = %v, %v; want the stored entry", ok, err)
		}
	})
	t.Run("missing without create", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		_, err := Open(dir, &Options{Board: board4x4})
		if !errors.Is(err, ErrNotExist) {
			t.Errorf("Open = %v, want ErrNotExist", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Open created %s: %v", dir, err)
		}
	})
	t.Run("create in a directory that does not exist", func(t *testing.T) {
		// Only the book's own directory is made: a mistyped directory
		// above it is refused, and nothing is made.
		top := t.TempDir()
		path := filepath.Join(top, "typo", "more", "book")
		_, err := Open(path, testOptions(board4x4))
		if err == nil || !strings.Contains(err.Error(), "the directory "+filepath.Join(top, "typo", "more")+" does not exist") {
			t.Errorf("Open = %v, want it to name the missing directory", err)
		}
		if _, err := os.Stat(filepath.Join(top, "typo")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Open made directories: %v", err)
		}
	})
	t.Run("create without board", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		if _, err := Open(dir, &Options{Create: true}); err == nil {
			t.Error("Open without Board succeeded")
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Open created %s: %v", dir, err)
		}
	})
	t.Run("wrong board size", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		makeBook(t, dir, board5x4)
		before := dirState(t, dir)
		_, err := Open(dir, &Options{Create: true, Board: solver.Standard})
		if !errors.Is(err, ErrBoardMismatch) {
			t.Fatalf("Open = %v, want ErrBoardMismatch", err)
		}
		t.Logf("error: %v", err)
		checkUnchanged(t, dir, before)
	})
	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "notes.txt")
		if err := os.WriteFile(path, []byte("hello"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path, testOptions(board4x4)); !errors.Is(err, ErrNotBook) {
			t.Errorf("Open = %v, want ErrNotBook", err)
		}
	})
	t.Run("directory of other files", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := dirState(t, dir)
		_, err := Open(dir, testOptions(board4x4))
		if !errors.Is(err, ErrNotBook) {
			t.Fatalf("Open = %v, want ErrNotBook", err)
		}
		t.Logf("error: %v", err)
		checkUnchanged(t, dir, before)
	})
	t.Run("pebble database without book record", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "db")
		writeRaw(t, dir, []byte("some key"), []byte("some value"))
		before := dirState(t, dir)
		_, err := Open(dir, testOptions(board4x4))
		if !errors.Is(err, ErrNotBook) {
			t.Fatalf("Open = %v, want ErrNotBook", err)
		}
		t.Logf("error: %v", err)
		checkUnchanged(t, dir, before)
	})
	t.Run("newer format", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		makeBook(t, dir, board4x4)
		writeRaw(t, dir, bookKey, []byte{FormatVersion + 1, 4, 4, 0})
		before := dirState(t, dir)
		_, err := Open(dir, nil)
		if !errors.Is(err, ErrNewerFormat) {
			t.Fatalf("Open = %v, want ErrNewerFormat", err)
		}
		t.Logf("error: %v", err)
		checkUnchanged(t, dir, before)
	})
	t.Run("corrupt book record", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		makeBook(t, dir, board4x4)
		writeRaw(t, dir, bookKey, []byte{FormatVersion, 4})
		_, err := Open(dir, nil)
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("Open = %v, want a CorruptError", err)
		}
		t.Logf("error: %v", err)
	})
	t.Run("read-only", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "book")
		makeBook(t, dir, board4x4)
		before := dirState(t, dir)
		bk, err := Open(dir, &Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := bk.Get(board4x4.NewPosition()); !ok || err != nil {
			t.Errorf("Get = %v, %v", ok, err)
		}
		if err := bk.Put(board4x4.NewPosition(), Value{Score: 0, Origin: OriginSolved}); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Put = %v, want ErrReadOnly", err)
		}
		if err := bk.Close(); err != nil {
			t.Fatal(err)
		}
		checkUnchanged(t, dir, before)
	})
}

func TestBook_Close(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board4x4)
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bk.Get(board4x4.NewPosition()); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close = %v, want ErrClosed", err)
	}
	if err := bk.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
}

// TestOpen_cache checks that lookups hit the block cache: Pebble counts its
// memtables against the cache, which must have room for them besides the
// data.
func TestOpen_cache(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	entries := solvedEntries(t, board5x4, 6)
	putAll(t, bk, entries)
	if err := bk.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, e := range entries {
			if _, ok, err := bk.GetEntry(e.Depth, e.Key); !ok || err != nil {
				t.Fatalf("GetEntry(%v) = %v, %v", e, ok, err)
			}
		}
	}
	m := bk.db.Metrics().BlockCache
	if m.Hits < int64(len(entries)) {
		t.Errorf("block cache: %+v, want at least %d hits", m, len(entries))
	}
}
