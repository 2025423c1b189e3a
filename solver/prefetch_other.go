//go:build !amd64 && !arm64

package solver

// prefetch does nothing where no assembly version exists.
func prefetch(addr *uint64) {}
