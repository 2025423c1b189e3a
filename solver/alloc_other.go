//go:build !linux

package solver

// allocSlots returns n zeroed entries, an ordinary Go slice: mem is nil.
func allocSlots(n int) (slots []uint64, mem []byte, err error) {
	return make([]uint64, n), nil, nil
}

// freeSlots is never called off Linux: allocSlots maps nothing.
func freeSlots(mem []byte) {}
