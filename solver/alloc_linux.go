//go:build linux

package solver

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on x86-64 and arm64.
const hugePage = 2 << 20

// allocSlots returns n zeroed entries. A table smaller than a huge page is
// an ordinary Go slice and mem is nil. A larger one is mapped outside the
// Go heap, aligned to huge pages, and the kernel asked to back it with
// them before any page is touched; mem is the whole mapping, which the
// caller must release with freeSlots once nothing uses the entries.
//
// Why not a Go slice: a table probe is a random access, and with 4 KiB
// pages nearly every probe of a large table also misses the TLB. The Go
// heap hands out memory already touched (zeroed by the allocator, or used
// before), so its pages are 4 KiB whatever madvise says afterwards: a
// 1 GiB table of a long job held 64 MiB of huge pages after 40 s, all of
// them khugepaged's slow work. And a table in the Go heap lets the
// collector grow the heap in proportion to it: the quick start with a
// 1 GiB table peaked at 1,786 MiB that way, 1,094 MiB mapped.
func allocSlots(n int) (slots []uint64, mem []byte, err error) {
	size := uintptr(n) * 8
	if size < hugePage {
		return make([]uint64, n), nil, nil
	}
	// Map a huge page more than needed and unmap the ends, so that the
	// entries start on a huge page. Mappings are whole pages.
	page := uintptr(unix.Getpagesize())
	mapped := (size + page - 1) / page * page
	raw, err := unix.MmapPtr(-1, 0, nil, mapped+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, fmt.Errorf("table of %d bytes: %w", size, err)
	}
	head := (hugePage - uintptr(raw)%hugePage) % hugePage
	start := unsafe.Add(raw, head)
	unmap(raw, head)
	unmap(unsafe.Add(start, mapped), hugePage-head)
	mem = unsafe.Slice((*byte)(start), mapped)
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE) // a hint: fine if refused
	return unsafe.Slice((*uint64)(start), n), mem, nil
}

// freeSlots releases a mapping made by allocSlots.
func freeSlots(mem []byte) { unmap(unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem))) }

// unmap releases length bytes of a mapping from addr; 0 bytes is a no-op.
// It can fail only on an address this package did not map: a bug.
func unmap(addr unsafe.Pointer, length uintptr) {
	if length == 0 {
		return
	}
	if err := unix.MunmapPtr(addr, length); err != nil {
		panic(fmt.Sprintf("solver: unmapping table memory: %v", err))
	}
}
