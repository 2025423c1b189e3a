//go:build linux

package solver

import (
	"syscall"
	"unsafe"
)

// allocSlots returns n zeroed entries. On Linux a large table is mapped
// directly and the kernel is asked to back it with 2 MiB pages: a table
// probe is a random access, and with 4 KiB pages nearly every probe of a
// large table also misses the TLB.
func allocSlots(n int) []uint64 {
	const hugePage = 2 << 20
	size := n * 8
	if size < hugePage {
		return make([]uint64, n)
	}
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]uint64, n)
	}
	_ = syscall.Madvise(mem, 14) // MADV_HUGEPAGE
	return unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), n)
}
