package packed

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/c4book/c4book/solver"
)

// benchFile returns a packed book to measure lookups on: the file of
// $C4BOOK_PACKED_BENCH if set (a real book, such as the shipped depth-12
// one), else the complete 5x4 book built here; and positions of its set,
// drawn by random play from its root.
func benchFile(b *testing.B) (*File, []solver.Position) {
	b.Helper()
	var f *File
	if path := os.Getenv("C4BOOK_PACKED_BENCH"); path != "" {
		var err error
		if f, err = Open(path); err != nil {
			b.Fatal(err)
		}
	} else {
		board := solver.MustBoard(5, 4)
		set := setOf(b, board, "", 20)
		var err error
		if f, err = OpenBytes("5x4", pack(b, board, "", 20, set)); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() { f.Close() })
	rng := rand.New(rand.NewPCG(1, 2))
	root, _ := f.Board().Parse(f.Root())
	var positions []solver.Position
	for len(positions) < 1<<16 {
		p := root
		for range rng.IntN(f.Depth() - root.Moves() + 1) {
			var cols []int
			for col, c := range p.Children() {
				if !c.LastMoveWon() {
					cols = append(cols, col)
				}
			}
			if len(cols) == 0 {
				break
			}
			p.Play(cols[rng.IntN(len(cols))])
		}
		positions = append(positions, p)
	}
	return f, positions
}

// BenchmarkFile_Get: lookups of random positions of the set, warm (the
// file in memory or in the page cache).
func BenchmarkFile_Get(b *testing.B) {
	f, positions := benchFile(b)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		p := &positions[i&(len(positions)-1)]
		if _, ok, err := f.Get(p); !ok || err != nil {
			b.Fatalf("%v: %v %v", p, ok, err)
		}
		i++
	}
}

// BenchmarkFile_Contains: the membership test alone.
func BenchmarkFile_Contains(b *testing.B) {
	f, positions := benchFile(b)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if !f.Contains(&positions[i&(len(positions)-1)]) {
			b.Fatal("not in the set")
		}
		i++
	}
}
