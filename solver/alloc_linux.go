//go:build linux

package solver

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on x86-64 and arm64.
const hugePage = 2 << 20

// allocSlots returns n zeroed entries. On Linux a table of a huge page or
// more is aligned to huge pages and the kernel asked to back it with them:
// a table probe is a random access, and with 4 KiB pages nearly every probe
// of a large table also misses the TLB. The memory is an ordinary Go slice,
// freed by the garbage collector.
func allocSlots(n int) []uint64 {
	if n*8 < hugePage {
		return make([]uint64, n)
	}
	raw := make([]uint64, n+hugePage/8)
	off := 0
	if rem := uintptr(unsafe.Pointer(&raw[0])) % hugePage; rem != 0 {
		off = int(hugePage-rem) / 8
	}
	slots := raw[off : off+n : off+n]
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&slots[0])), n*8)
	_ = syscall.Madvise(mem, syscall.MADV_HUGEPAGE) // a hint: fine if refused
	return slots
}
