//go:build gc && !purego

package solver

import "golang.org/x/sys/cpu"

// haveAVX2 says whether the CPU runs fourCells7AVX2.
var haveAVX2 = cpu.X86.HasAVX2

// fourCells7AVX2 sets cells[i] to fourCells7(cells[i]) for i < n, four
// boards at a time in the lanes of a 256-bit register: 58 instructions
// for four, where fourCells7 takes about 70 for one. It also rewrites the
// cells after the n-th, up to the next multiple of 4. n <= lineSlots;
// the CPU must have AVX2 (haveAVX2).
//
//go:noescape
func fourCells7AVX2(cells *[lineSlots]uint64, n int)
