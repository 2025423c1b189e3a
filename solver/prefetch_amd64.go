package solver

// prefetch asks the CPU to bring the cache line at addr into its caches,
// without waiting for it (PREFETCHT0). Assembly: Go has no prefetch
// intrinsic.
//
//go:noescape
func prefetch(addr *uint64)
