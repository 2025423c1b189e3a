//go:build linux

package solver

import (
	"runtime"
	"syscall"
	"unsafe"
)

// allocSlots returns n zeroed entries for t. On Linux a table of 2 MiB or
// more is mapped directly and the kernel asked to back it with 2 MiB pages:
// a table probe is a random access, and with 4 KiB pages nearly every
// probe of a large table also misses the TLB. The mapping is released
// when t is garbage collected.
func allocSlots(t *Table, n int) []uint64 {
	const hugePage = 2 << 20
	size := n * 8
	if size < hugePage {
		return make([]uint64, n)
	}
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]uint64, n)
	}
	_ = syscall.Madvise(mem, syscall.MADV_HUGEPAGE) // a hint: fine if refused
	runtime.AddCleanup(t, func(mem []byte) { _ = syscall.Munmap(mem) }, mem)
	return unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), n)
}
