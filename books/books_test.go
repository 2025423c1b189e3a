package books

import (
	"context"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// TestAll: every shipped book opens, its blocks are whole, and the digest
// computed from its lookups is the one its header holds (in -short, for
// the books of up to 100,000 positions: the larger take seconds, minutes
// for the depth-12 book of 7x6, and book pack checked them so when it made
// them).
func TestAll(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no shipped book")
	}
	for _, s := range all {
		f, err := s.Open()
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if err := f.Check(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if testing.Short() && f.Positions() > 100_000 {
			f.Close()
			continue
		}
		bk, err := book.FromPacked(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := bk.Digest(context.Background(), f.Root(), f.Depth(), &book.DigestOptions{TempDir: t.TempDir()})
		if err != nil || got.Sum != f.Digest() || got.Positions != int64(f.Positions()) {
			t.Errorf("%s: digest from its lookups %v of %d positions (%v); its header says %x of %d", s.Name, got, got.Positions, err, f.Digest(), f.Positions())
		}
		bk.Close()
	}
}

// TestOpen: the shipped book of a board opens as a read-only book; a
// board none ships for is an error that says so.
func TestOpen(t *testing.T) {
	b := solver.MustBoard(5, 4)
	bk, err := Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	if !bk.ReadOnly() || bk.Packed() == nil || !bk.Board().Equal(b) {
		t.Errorf("Open(5x4): read-only %v, packed %v, board %v", bk.ReadOnly(), bk.Packed() != nil, bk.Board())
	}
	p, _ := b.Parse("33")
	if v, ok, err := bk.Get(p); err != nil || !ok || v.Score != 0 {
		t.Errorf("Get(33) = %v, %v, %v; want a draw", v, ok, err)
	}
	if _, err := Open(solver.MustBoard(6, 5)); err == nil {
		t.Error("Open(6x5): a book ships for it?")
	}
}

// TestStandard: the shipped 7x6 book is the published depth-12 book: its
// header's digest and count are docs/digests/d12.txt's first line and
// docs/digests/README.md's count; without -short, the digest of each
// sequence of 4 moves, computed from its lookups, equals that file's line
// for line (minutes on 2 cores: book pack checked as much when it made
// the file).
func TestStandard(t *testing.T) {
	s, ok, err := Deepest(solver.Standard)
	if err != nil || !ok {
		t.Fatalf("no 7x6 book ships: %v", err)
	}
	published, err := os.ReadFile("../docs/digests/d12.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(published), "\n"), "\n")
	f, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	sum := f.Digest()
	if s.Depth != 12 || s.Root != "" || f.Positions() != 9_188_816 || lines[0] != "- "+hex.EncodeToString(sum[:]) {
		t.Fatalf("%s: depth %d, root %q, %d positions, digest %x; want depth 12 of the empty board, 9,188,816 positions, %s",
			s.Name, s.Depth, s.Root, f.Positions(), f.Digest(), lines[0])
	}
	if testing.Short() {
		f.Close()
		return
	}
	bk, err := book.FromPacked(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	whole, seqs, err := bk.DigestSequences(context.Background(), "", 12, 4, &book.DigestOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{"- " + whole.String()}
	for _, sd := range seqs {
		got = append(got, sd.Moves+" "+sd.String())
	}
	if len(got) != len(lines) {
		t.Fatalf("%d digest lines, d12.txt has %d", len(got), len(lines))
	}
	for i := range got {
		if got[i] != lines[i] {
			t.Errorf("line %d: %s, d12.txt: %s", i+1, got[i], lines[i])
		}
	}
}
