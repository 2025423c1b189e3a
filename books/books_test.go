package books

import (
	"context"
	"encoding/hex"
	"fmt"
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

// publishedPositions is the number of positions of each published 7x6
// book from the empty board (docs/digests/README.md), by depth.
var publishedPositions = map[int]uint64{12: 9_188_816, 14: 58_339_652, 16: 313_965_859}

// TestStandard: every shipped 7x6 book from the empty board is a
// published one: its header's digest and count are
// docs/digests/dD.txt's first line (D its depth) and
// docs/digests/README.md's count, and the deepest is at least depth 12;
// without -short, the digest of each sequence of 4 moves, computed from
// its lookups, equals that file's line for line (minutes on 2 cores a
// book: book pack checked as much when it made the file).
func TestStandard(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	deepest := 0
	for _, s := range all {
		if !s.Board.Equal(solver.Standard) || s.Root != "" {
			continue
		}
		deepest = max(deepest, s.Depth)
		t.Run(s.Name, func(t *testing.T) { checkPublished(t, s) })
	}
	if deepest < 12 {
		t.Fatalf("the deepest 7x6 book shipped from the empty board is of depth %d; want at least 12", deepest)
	}
}

// checkPublished checks a shipped 7x6 book from the empty board against
// its published digests (see TestStandard).
func checkPublished(t *testing.T, s Shipped) {
	name := fmt.Sprintf("d%d.txt", s.Depth)
	published, err := os.ReadFile("../docs/digests/" + name)
	if err != nil {
		t.Fatalf("%s: no published digests of its depth: %v", s.Name, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(published), "\n"), "\n")
	f, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	sum := f.Digest()
	if want := publishedPositions[s.Depth]; f.Positions() != want || lines[0] != "- "+hex.EncodeToString(sum[:]) {
		t.Fatalf("%s: %d positions, digest %x; want %d positions, %s (%s)", s.Name, f.Positions(), sum, want, lines[0], name)
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
	whole, seqs, err := bk.DigestSequences(context.Background(), "", s.Depth, 4, &book.DigestOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{"- " + whole.String()}
	for _, sd := range seqs {
		got = append(got, sd.Moves+" "+sd.String())
	}
	if len(got) != len(lines) {
		t.Fatalf("%d digest lines, %s has %d", len(got), name, len(lines))
	}
	for i := range got {
		if got[i] != lines[i] {
			t.Errorf("line %d: %s, %s: %s", i+1, got[i], name, lines[i])
		}
	}
}
