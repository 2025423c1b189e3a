package book

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// TestBook_corruptFile: a table file with damaged bytes is reported as a
// *FileCorruptError naming it, never as a wrong score or a fatal error, and
// Verify reports it and checks the rest of the book.
func TestBook_corruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "book")
	opts := testOptions(board5x4)
	opts.tweakPebble = func(po *pebble.Options) { po.DisableAutomaticCompactions = true }
	bk, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Two tables: depths 0..4 with the book record, then depth 6 alone.
	entries := solvedEntries(t, board5x4, 6)
	var shallow, deep []Entry
	for _, e := range entries {
		switch {
		case e.Depth <= 4:
			shallow = append(shallow, e)
		case e.Depth == 6:
			deep = append(deep, e)
		}
	}
	for _, part := range [][]Entry{shallow, deep} {
		if err := bk.PutBatch(part); err != nil {
			t.Fatal(err)
		}
		if err := bk.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(path, "*.sst"))
	if len(tables) < 2 {
		t.Fatalf("want two tables, got %v", tables)
	}
	damaged := slices.Max(tables) // the newest: depth 6
	data, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	for i := 16; i < 64; i++ {
		data[i] ^= 0x5a
	}
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}

	bk = openBook(t, path, &Options{Board: board5x4, tweakPebble: opts.tweakPebble})
	e := deep[0]
	_, _, err = bk.GetEntry(e.Depth, e.Key)
	var fe *FileCorruptError
	if !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) || fe.File != damaged {
		t.Fatalf("GetEntry of an entry of the damaged table: %v, want a *FileCorruptError naming %s", err, damaged)
	}
	if v, ok, err := bk.GetEntry(shallow[3].Depth, shallow[3].Key); err != nil || !ok || v != shallow[3].Value {
		t.Errorf("GetEntry of an entry of the sound table: %v %v %v", v, ok, err)
	}

	r, err := bk.Verify(context.Background(), nil)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if r.OK() || r.Corrupt != 1 || !strings.Contains(r.Problems[0].Detail, filepath.Base(damaged)) {
		t.Errorf("Verify: %d corrupt, problems %v: want the damaged file reported once", r.Corrupt, r.Problems)
	}
	if r.Entries != int64(len(shallow)) || r.ChildChecked == 0 {
		t.Errorf("Verify read %d entries and checked %d against their children, want the %d of the sound table read", r.Entries, r.ChildChecked, len(shallow))
	}
}
