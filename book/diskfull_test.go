package book

import (
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/c4book/c4book/solver"
)

// smallDisk is the operating system's file system reporting avail bytes
// free.
type smallDisk struct {
	vfs.FS
	avail uint64
}

func (d smallDisk) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	u, err := d.FS.GetDiskUsage(path)
	u.AvailBytes = d.avail
	return u, err
}

func TestBook_FreeBytes(t *testing.T) {
	b := solver.MustBoard(5, 4)
	bk, err := Open(filepath.Join(t.TempDir(), "book"), &Options{Create: true, Board: b, CacheBytes: 1 << 20, MemTableBytes: 1 << 20, FS: smallDisk{vfs.Default, 12345}})
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	if free, err := bk.FreeBytes(); err != nil || free != 12345 {
		t.Errorf("FreeBytes = %d, %v; want 12345", free, err)
	}
	real := newBook(t, b)
	if free, err := real.FreeBytes(); err != nil || free == 0 {
		t.Errorf("FreeBytes of a book on the real disk = %d, %v", free, err)
	}
}
