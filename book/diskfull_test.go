package book

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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
	t.Parallel()
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

// recordingLogger keeps the errors logged.
type recordingLogger struct{ errors []string }

func (l *recordingLogger) Infof(string, ...any) {}
func (l *recordingLogger) Errorf(format string, args ...any) {
	l.errors = append(l.errors, fmt.Sprintf(format, args...))
}
func (l *recordingLogger) Fatalf(format string, args ...any) { l.Errorf(format, args...) }

// TestWriteHealth: background errors, which Pebble repeats many times a
// second on a full disk, are logged once every ten seconds with a count.
func TestWriteHealth(t *testing.T) {
	t.Parallel()
	l := &recordingLogger{}
	h := &writeHealth{logger: l}
	for range 50 {
		h.backgroundError(errors.New("no space left on device"))
	}
	if len(l.errors) != 1 {
		t.Fatalf("%d errors logged, want 1: %q", len(l.errors), l.errors)
	}
	h.logged = h.logged.Add(-logEvery)
	h.backgroundError(errors.New("no space left on device"))
	if len(l.errors) != 2 || !strings.Contains(l.errors[1], "and 49 more") {
		t.Errorf("second report %q, want the 49 repeats counted", l.errors)
	}
}
