package book

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"
)

// readOnlyFS returns fs with a Lock that does not write: Pebble's own lock
// recreates the LOCK file, which changes its modification time even in
// read-only mode. This one opens LOCK read-only and takes a shared
// open-file-description lock on it, which conflicts with the write lock of
// a Pebble process that has the book open for writing (Linux OFD locks and
// classic record locks see each other, even within one process).
func readOnlyFS(fs vfs.FS) vfs.FS { return readOnlyLockFS{fs} }

// readOnlyLockFS is vfs.FS with a read-only Lock.
type readOnlyLockFS struct{ vfs.FS }

// Lock takes a shared lock on the existing file name, or falls back to the
// wrapped FS's Lock if the file does not exist.
func (fs readOnlyLockFS) Lock(name string) (io.Closer, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return fs.FS.Lock(name)
	}
	if err != nil {
		return nil, err
	}
	spec := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &spec); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w (is the book open for writing?)", name, err)
	}
	// Closing the file releases the lock.
	return f, nil
}
