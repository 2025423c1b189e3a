package book

import (
	"errors"
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
// classic record locks see each other, even within one process). Readers
// of a snapshot hold the same shared lock on the snapshot's LOCK, which
// keeps the writer from removing it (see snapshot.go).
func readOnlyFS(fs vfs.FS) vfs.FS { return readOnlyLockFS{fs} }

// readOnlyLockFS is vfs.FS with a read-only Lock.
type readOnlyLockFS struct{ vfs.FS }

// Lock takes a shared lock on the existing file name, or falls back to the
// wrapped FS's Lock if the file does not exist. A lock held by another
// is a *lockedError.
func (fs readOnlyLockFS) Lock(name string) (io.Closer, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return fs.FS.Lock(name)
	}
	if err != nil {
		return nil, err
	}
	if err := setLock(f, unix.F_RDLCK); err != nil {
		f.Close()
		return nil, lockError(name, err)
	}
	// Closing the file releases the lock.
	return f, nil
}

// setLock takes an open-file-description lock of type typ (F_RDLCK or
// F_WRLCK) on the whole of f, without waiting.
func setLock(f *os.File, typ int16) error {
	spec := unix.Flock_t{Type: typ, Whence: io.SeekStart}
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &spec)
}

// lockError returns err, a failed fcntl lock of name, as a *lockedError
// when another holds the file.
func lockError(name string, err error) error {
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return &lockedError{name: name, err: err}
	}
	return err
}

// tryLockExclusive takes the exclusive lock of a snapshot's LOCK file,
// which no reader then holds nor can take; ok is false, with a nil error,
// while a reader holds its shared lock. A missing file counts as free.
func tryLockExclusive(name string) (l io.Closer, ok bool, err error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return io.NopCloser(nil), true, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := setLock(f, unix.F_WRLCK); err != nil {
		f.Close()
		if isLocked(lockError(name, err)) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return f, true, nil
}

// writerGone reports whether no process holds the book's LOCK file name
// for writing any more: its lock is free (tested, not taken).
func writerGone(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	spec := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &spec); err != nil {
		return false
	}
	return spec.Type == unix.F_UNLCK
}

// pebbleLockBusy reports whether err, from a writable open of Pebble,
// is its lock held by another process: Linux refuses a conflicting
// fcntl lock with EAGAIN.
func pebbleLockBusy(err error) bool { return errors.Is(err, unix.EAGAIN) }
