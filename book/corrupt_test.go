package book

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// TestBook_corruptFile: a table file with damaged bytes is reported as a
// *FileCorruptError naming it, never as a wrong score or a fatal error, and
// Verify reports it and checks the rest of the book.
func TestBook_corruptFile(t *testing.T) {
	t.Parallel()
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

// TestVerify_damagedBlockReadOnce: Verify looks up the children of every
// entry, and a damaged block of deeper entries is read by the scan and by
// the lookups of their parents; each read of it costs Pebble's search for
// a flipped bit (eight checksums of the block a byte). Verify reads it
// once for the lookups and once for the scan, not once per parent, and
// reports the file once.
func TestVerify_damagedBlockReadOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "book")
	var reads atomic.Int64 // reads of damaged data, as Pebble reports them
	tweak := func(po *pebble.Options) {
		po.DisableAutomaticCompactions = true
		report := po.EventListener.DataCorruption
		po.EventListener.DataCorruption = func(info pebble.DataCorruptionInfo) {
			reads.Add(1)
			report(info)
		}
	}
	opts := testOptions(board5x4)
	opts.tweakPebble = tweak
	bk, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Two tables: depths 0..4, then 5 and 6, whose first block is damaged
	// below: the children of many depth-4 entries are in it.
	var shallow, deep []Entry
	for _, e := range solvedEntries(t, board5x4, 6) {
		if e.Depth <= 4 {
			shallow = append(shallow, e)
		} else {
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
	damaged := slices.Max(tables)
	data, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	data[100] ^= 0xff // one byte, in the first data block
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}

	bk = openBook(t, path, &Options{Board: board5x4, tweakPebble: tweak})
	r, err := bk.Verify(context.Background(), nil)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if r.Corrupt != 1 || !strings.Contains(r.Problems[0].Detail, filepath.Base(damaged)) {
		t.Errorf("Verify: %d corrupt, problems %v: want the damaged file reported once", r.Corrupt, r.Problems)
	}
	if r.Entries != int64(len(shallow)) || r.ChildChecked == 0 || r.ChildSkipped == 0 {
		t.Errorf("Verify read %d entries, %d checked against their children and %d not, want the %d of the sound table read, some with children in the damaged one", r.Entries, r.ChildChecked, r.ChildSkipped, len(shallow))
	}
	if n := reads.Load(); n > 2 {
		t.Errorf("the damaged block was read %d times, want at most 2 (a lookup, the scan); %d entries had a child missing", n, r.ChildSkipped)
	}
}

// TestOpen_missingFile: a book whose directory lacks a table its manifest
// names does not open, and the error says that the book is incomplete,
// which file is missing, and what to do, not Pebble's words alone.
func TestOpen_missingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "book")
	bk, err := Open(path, testOptions(board5x4))
	if err != nil {
		t.Fatal(err)
	}
	if err := bk.PutBatch(solvedEntries(t, board5x4, 4)); err != nil {
		t.Fatal(err)
	}
	if err := bk.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(path, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no table to remove")
	}
	if err := os.Remove(tables[0]); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, &Options{ReadOnly: true})
	var missing *MissingFileError
	if !errors.As(err, &missing) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open = %v, want a *MissingFileError", err)
	}
	if missing.File != filepath.Base(tables[0]) || missing.Book != path {
		t.Errorf("missing %q of %q, want %q of %q", missing.File, missing.Book, filepath.Base(tables[0]), path)
	}
	for _, want := range []string{"is incomplete", filepath.Base(tables[0]), "restore", "docs/reliability.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
