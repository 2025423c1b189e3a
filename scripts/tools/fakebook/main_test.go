package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// TestMakeBook: the book of 4x4 to the full board holds the 69,837 positions
// of c4book generate --depth 16, every one the digest of the empty board
// asks for.
func TestMakeBook(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "book")
	n, err := makeBook(solver.MustBoard(4, 4), dir, 16, io.Discard)
	if err != nil || n != 69837 {
		t.Fatalf("makeBook = %d, %v; want 69837 positions", n, err)
	}
	bk, err := book.Open(dir, &book.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	d, err := bk.Digest(context.Background(), "", 16, nil)
	if err != nil || d.Positions != n {
		t.Errorf("digest of %d positions (%v), want %d", d.Positions, err, n)
	}
	if _, err := makeBook(solver.MustBoard(4, 4), dir, 2, io.Discard); err == nil {
		t.Error("made a book over an existing one")
	}
}
