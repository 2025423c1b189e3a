//go:build !amd64 || !gc || purego

package solver

// haveAVX2 is false where there is no assembly version of fourCells7AVX2
// (not amd64, another compiler than gc, or the purego tag).
var haveAVX2 = false

// fourCells7AVX2 is fourCells7Loop where there is no assembly version; it
// is not called (haveAVX2 is false).
func fourCells7AVX2(cells *[lineSlots]uint64, n int) { fourCells7Loop(cells, n) }
