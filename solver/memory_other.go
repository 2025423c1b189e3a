//go:build !linux

package solver

// memoryLimit returns 0: the memory available is not known here.
func memoryLimit() uint64 { return 0 }
