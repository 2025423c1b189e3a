package solver

// prefetch asks the CPU to bring the cache line at addr into its caches,
// without waiting for it (PRFM PLDL1KEEP). Assembly: Go has no prefetch
// intrinsic.
//
//go:noescape
func prefetch(addr *uint64)
