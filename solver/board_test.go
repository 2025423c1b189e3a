package solver

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// cellIndex is the bit of the cell at column c, row r.
func cellIndex(b *Board, c, r int) uint64 { return 1 << (uint(c)*b.stride + uint(r)) }

// naiveFours returns, cell by cell, the cells of b that complete a four of
// stones, and whether stones hold a four.
func naiveFours(b *Board, stones uint64) (threes uint64, four bool) {
	has := func(c, r int) bool {
		return c >= 0 && c < b.width && r >= 0 && r < b.height && stones&cellIndex(b, c, r) != 0
	}
	for c := range b.width {
		for r := range b.height {
			for _, d := range [][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}} {
				// The four lines through (c, r) along d, with (c, r)
				// as their i-th cell.
				for i := range 4 {
					n := 0
					for j := range 4 {
						if j != i && has(c+(j-i)*d[0], r+(j-i)*d[1]) {
							n++
						}
					}
					if n == 3 {
						threes |= cellIndex(b, c, r)
						if has(c, r) {
							four = true
						}
					}
				}
			}
		}
	}
	return threes, four
}

// TestBoard_bitOps checks the bitboard operations against cell-by-cell
// ones on random stones, on every board size, the standard board's
// constant-shift code included.
func TestBoard_bitOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for w := 4; w <= MaxWidth; w++ {
		for h := 4; w*(h+1) <= 64; h++ {
			b := MustBoard(w, h)
			t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
				for range 2000 {
					// Stones as they fall: columns of random heights.
					var mask uint64
					for c := range w {
						mask |= (uint64(1)<<uint(rng.IntN(h+1)) - 1) << (uint(c) * b.stride)
					}
					stones := mask & rng.Uint64()
					threes, four := naiveFours(b, stones)
					if got := b.winningCells(stones, mask); got != threes&^mask {
						t.Fatalf("winningCells(%#x, %#x) = %#x, want %#x", stones, mask, got, threes&^mask)
					}
					batch := [lineSlots]uint64{stones}
					if b.fourCellsOf(&batch, 1); batch[0]&b.full&^mask != threes&^mask {
						t.Fatalf("fourCellsOf(%#x) = %#x on the empty cells, want %#x", stones, batch[0]&b.full&^mask, threes&^mask)
					}
					if got := b.hasFour(stones); got != four {
						t.Fatalf("hasFour(%#x) = %v, want %v", stones, got, four)
					}
					var above uint64
					for c := range w {
						for r := range h {
							if stones&cellIndex(b, c, r) != 0 {
								for rr := r + 1; rr < h; rr++ {
									above |= cellIndex(b, c, rr)
								}
								break
							}
						}
					}
					key := stones | rng.Uint64()&b.sentinels // keys use the sentinel row
					var mirror uint64
					for c := range w {
						for r := range h + 1 {
							if key&(cellIndex(b, c, 0)<<uint(r)) != 0 {
								mirror |= cellIndex(b, w-1-c, 0) << uint(r)
							}
						}
					}
					if got := b.mirrorKey(key); got != mirror {
						t.Fatalf("mirrorKey(%#x) = %#x, want %#x", key, got, mirror)
					}
					if got := b.above(stones); got != above {
						t.Fatalf("above(%#x) = %#x, want %#x", stones, got, above)
					}
				}
			})
		}
	}
}

func TestBoard_Equal(t *testing.T) {
	a, b, c := MustBoard(7, 6), MustBoard(7, 6), MustBoard(6, 7)
	if !a.Equal(b) || !a.Equal(Standard) || a.Equal(c) || a.Equal(nil) || !(*Board)(nil).Equal(nil) {
		t.Error("Equal: boards of one size are equal, of two sizes not, nil only to nil")
	}
}

// TestFourCells7AVX2 checks the assembly version of fourCells7 against the
// Go one on random words, every count of boards, and that it leaves the
// cells after the last group of four alone.
func TestFourCells7AVX2(t *testing.T) {
	if !haveAVX2 {
		t.Skip("the CPU has no AVX2: fourCells7AVX2 is not used")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		for n := 0; n <= lineSlots; n++ {
			var in, cells [lineSlots]uint64
			for i := range in {
				in[i] = rng.Uint64() & rng.Uint64() // about a quarter of the bits set
			}
			cells = in
			fourCells7AVX2(&cells, n)
			for i := range cells {
				want := in[i]
				if i < n {
					want = fourCells7(in[i])
				} else if i < (n+3)/4*4 {
					continue // rewritten, unspecified
				}
				if cells[i] != want {
					t.Fatalf("n %d: cell %d of %#x = %#x, want %#x", n, i, in[i], cells[i], want)
				}
			}
		}
	}
}
