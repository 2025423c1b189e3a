//go:build !linux

package book

import (
	"errors"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// readOnlyFS returns fs with Pebble's own lock, whose failures are
// *lockedError: outside Linux, read-only opens take Pebble's exclusive
// lock, which rewrites the (empty) LOCK file of the book and lets one
// reader at a time open a book, or a snapshot; any failure to lock counts
// as the file being held.
func readOnlyFS(fs vfs.FS) vfs.FS { return lockErrorFS{fs} }

// lockErrorFS is vfs.FS whose Lock failures are *lockedError.
type lockErrorFS struct{ vfs.FS }

func (fs lockErrorFS) Lock(name string) (io.Closer, error) {
	l, err := fs.FS.Lock(name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, &lockedError{name: name, err: err}
	}
	return l, err
}

// tryLockExclusive takes Pebble's lock of a snapshot's LOCK file, which a
// reader of the snapshot then cannot take; ok is false, with a nil error,
// while a reader holds it. A missing file counts as free.
func tryLockExclusive(name string) (l io.Closer, ok bool, err error) {
	if _, err := os.Stat(name); errors.Is(err, os.ErrNotExist) {
		return io.NopCloser(nil), true, nil
	}
	l, err = vfs.Default.Lock(name)
	if err != nil {
		return nil, false, nil
	}
	return l, true, nil
}

// writerGone reports whether no process holds the book's LOCK file for
// writing any more. Outside Linux it cannot be told without taking the
// lock, which would keep a writer from opening the book: it is false.
func writerGone(name string) bool { return false }

// pebbleLockBusy reports whether err, from a writable open of Pebble, is
// its lock held by another process. Outside Linux it is not told apart
// from other failures: false.
func pebbleLockBusy(err error) bool { return false }
