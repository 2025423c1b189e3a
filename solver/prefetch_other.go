//go:build !amd64 && !arm64

package solver

// prefetch does nothing where no assembly version exists.
func prefetch(addr *uint64) {}

// prefetchEach does nothing where no assembly version exists.
func prefetchEach(base *uint64, index *[lineSlots]uint64, n int) {}
