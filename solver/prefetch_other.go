//go:build (!amd64 && !arm64) || !gc || purego

package solver

// prefetch does nothing where no assembly version exists (not amd64 or
// arm64, another compiler than gc, or the purego tag).
func prefetch(addr *uint64) {}

// prefetchEach does nothing where no assembly version exists.
func prefetchEach(base *uint64, index *[lineSlots]uint64, n int) {}
