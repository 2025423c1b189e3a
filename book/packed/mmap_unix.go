//go:build unix

package packed

import (
	"os"
	"syscall"
)

// mapFile maps the size bytes of f into memory, read-only and shared: the
// pages are the operating system's page cache, read when touched.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
