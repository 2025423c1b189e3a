//go:build gc && !purego

package solver

// prefetch asks the CPU to bring the cache line at addr into its caches,
// without waiting for it (PRFM PLDL1KEEP). Assembly: Go has no prefetch
// intrinsic.
//
//go:noescape
func prefetch(addr *uint64)

// prefetchEach is prefetch of &base[index[i]] for each i < n, in one
// call: a call of an assembly function costs the caller its registers.
// The addresses need not be valid: a prefetch never faults.
//
//go:noescape
func prefetchEach(base *uint64, index *[lineSlots]uint64, n int)
