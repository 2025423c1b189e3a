//go:build !unix

package packed

import (
	"io"
	"os"
)

// mapFile reads the size bytes of f into memory: where there is no mmap,
// the file is read whole when opened.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
