//go:build !linux

package solver

// allocSlots returns n zeroed entries for t.
func allocSlots(t *Table, n int) []uint64 { return make([]uint64, n) }
