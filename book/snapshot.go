package book

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/c4book/c4book/internal/durable"
)

// Reading a book while a job writes it.
//
// Pebble lets one process open a database for writing, and no other
// process open it meanwhile, not even read-only (the LOCK file). So a
// process that writes a book for a long time (generate, coordinator)
// leaves snapshots of it for readers: Pebble checkpoints, each a
// consistent database of its own made of hard links to the book's tables
// and copies of its small files (manifest, options, write-ahead log):
//
//	<book>/snapshots/
//	    20250102T120105.123456789Z/        a snapshot, named by the time it was taken (UTC)
//	        LOCK                           a reader holds a shared lock on it
//	        000042.sst ...                 hard links to the book's tables
//	        000051.log MANIFEST-000050     copies
//	        OPTIONS-000049 marker.*        copies
//	    .tmp-20250102T120205.000000000Z/   being taken; renamed when whole
//	    .old-20250102T120005.000000000Z/   being removed
//
// A snapshot holds every entry committed before it was taken (the time of
// its name), and may hold whole batches committed while it was taken:
// never part of a batch. The names sort by time.
//
// The rules:
//   - A snapshot is made under a .tmp- name and renamed when whole: a
//     reader never sees part of one.
//   - The writer keeps the newest keepSnapshots and removes the older ones
//     no reader holds: it takes the exclusive lock of a snapshot's LOCK,
//     which fails while a reader holds the shared one, renames the
//     snapshot to .old- and then removes its files.
//   - Open of a writable book removes the .tmp- and .old- leftovers of a
//     crash. Close of a writable book removes the snapshots no reader
//     holds: readers of a closed book open the book itself. One a reader
//     still holds stays until a later writer removes it.
//   - Open with ReadOnly of a book a writer holds opens its newest
//     snapshot read-only instead (SnapshotTime); a reader never touches
//     the book's own files.
//
// A snapshot costs the copy of the write-ahead log (at most about two
// memtables) and the hard links; while it exists it keeps on disk the
// tables that compactions of the book have replaced since.
//
// Outside Linux, readers take Pebble's exclusive lock: one reader at a
// time opens a snapshot (or a book), and SnapshotStale sees newer
// snapshots but not the writer's Close.

// Names under the book's directory.
const (
	snapshotsDirName   = "snapshots"
	snapshotTimeLayout = "20060102T150405.000000000Z" // fixed width: sorts as time
	tmpSnapshotPrefix  = ".tmp-"
	oldSnapshotPrefix  = ".old-"
	lockFileName       = "LOCK" // Pebble's
)

// keepSnapshots is the number of snapshots a writer keeps: the newest,
// and the one before for readers that opened it a moment ago.
const keepSnapshots = 2

// openAttempts is how many times Open tries the book and then its newest
// snapshot, when a writer removes the snapshot or closes the book in
// between.
const openAttempts = 5

// ErrNoSnapshot: a read-only Open of a book that another process is
// writing, which has left no snapshot to read yet.
var ErrNoSnapshot = errors.New("the book is being written by another process and has no snapshot yet; snapshots are taken every book.snapshot-interval")

// lockedError is a lock refused because another holds the file: a writer
// the book, or a writer removing it the snapshot.
type lockedError struct {
	name string
	err  error
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("lock %s: %v (is the book open for writing?)", e.name, e.err)
}

func (e *lockedError) Unwrap() error { return e.err }

// isLocked reports whether err is a lock held by another.
func isLocked(err error) bool {
	var le *lockedError
	return errors.As(err, &le)
}

// writing is the set of books this process has open for writing.
var writing writerRegistry

// writerRegistry is a set of books, by absolute path. A process must not
// open and close the LOCK file of a book it has open for writing: Pebble's
// lock is a classic POSIX record lock, which a process loses when it
// closes any descriptor of the file. So a read-only Open of a book this
// process writes goes to its snapshots without a look at the LOCK file.
type writerRegistry struct {
	mu    sync.Mutex
	books map[string]bool
}

// key returns the absolute path of path, or path cleaned.
func (r *writerRegistry) key(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

func (r *writerRegistry) add(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.books == nil {
		r.books = map[string]bool{}
	}
	r.books[r.key(path)] = true
}

func (r *writerRegistry) remove(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.books, r.key(path))
}

func (r *writerRegistry) has(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.books[r.key(path)]
}

// snapshotInfo is a whole snapshot of a book.
type snapshotInfo struct {
	name string    // under the snapshots directory
	time time.Time // when it was taken
}

// snapshotsDir returns the directory of the snapshots of the book at path.
func snapshotsDir(path string) string { return filepath.Join(path, snapshotsDirName) }

// listSnapshots returns the whole snapshots of the book at path, oldest
// first. Other names in the directory are left out.
func listSnapshots(path string) ([]snapshotInfo, error) {
	entries, err := os.ReadDir(snapshotsDir(path))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var snaps []snapshotInfo
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if t, err := time.Parse(snapshotTimeLayout, e.Name()); err == nil {
			snaps = append(snaps, snapshotInfo{name: e.Name(), time: t})
		}
	}
	// ReadDir sorts by name, which sorts by time.
	return snaps, nil
}

// NewestSnapshot returns the time of the newest snapshot of the book at
// path, and false if it has none. It costs a directory listing: a
// long-lived reader of a snapshot calls it (or SnapshotStale) now and then
// to learn when to open the book again.
func NewestSnapshot(path string) (time.Time, bool, error) {
	snaps, err := listSnapshots(path)
	if err != nil || len(snaps) == 0 {
		return time.Time{}, false, err
	}
	return snaps[len(snaps)-1].time, true, nil
}

// SnapshotTime returns the time of the snapshot b reads, and true, if b is
// a snapshot of a book being written (see Open); it returns false for a
// book opened itself.
func (b *Book) SnapshotTime() (time.Time, bool) {
	return b.snapshot, !b.snapshot.IsZero()
}

// SnapshotStale reports whether Open would now give a newer view of the
// book than b, a snapshot: the writer has taken a newer snapshot, or
// (on Linux) has closed the book. It is false for a book opened itself.
// It costs a directory listing and a lock test.
func (b *Book) SnapshotStale() (bool, error) {
	if b.snapshot.IsZero() {
		return false, nil
	}
	if !writing.has(b.path) && writerGone(filepath.Join(b.path, lockFileName)) {
		return true, nil
	}
	t, ok, err := NewestSnapshot(b.path)
	if err != nil {
		return false, err
	}
	return ok && t.After(b.snapshot), nil
}

// Snapshot takes a snapshot of b, a book open for writing, for readers
// (see Open) and returns its time: it holds every entry committed before
// that time. The snapshots older than the newest two are removed unless a
// reader holds them. Snapshot is safe to call concurrently with writes; it
// takes milliseconds, most of it copying the write-ahead log.
func (b *Book) Snapshot() (time.Time, error) {
	b.snapMu.Lock()
	defer b.snapMu.Unlock()
	if err := b.check(true); err != nil {
		return time.Time{}, err
	}
	dir := snapshotsDir(b.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return time.Time{}, fmt.Errorf("snapshot: %w", err)
	}
	snaps, err := listSnapshots(b.path)
	if err != nil {
		return time.Time{}, fmt.Errorf("snapshot: %w", err)
	}
	// The name is the time, later than the newest snapshot's even if the
	// clock went back, so that the newest name is the newest snapshot.
	t := time.Now().UTC().Round(0)
	if n := len(snaps); n > 0 && !t.After(snaps[n-1].time) {
		t = snaps[n-1].time.Add(time.Nanosecond)
	}
	name := t.Format(snapshotTimeLayout)
	tmp := filepath.Join(dir, tmpSnapshotPrefix+name)
	if err := b.db.Checkpoint(tmp, pebble.WithFlushedWAL()); err != nil {
		return time.Time{}, fmt.Errorf("snapshot of book %s: %w", b.path, err)
	}
	// The LOCK file that readers lock; Pebble's checkpoint has none.
	if err := os.WriteFile(filepath.Join(tmp, lockFileName), nil, 0o644); err != nil {
		os.RemoveAll(tmp)
		return time.Time{}, fmt.Errorf("snapshot: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.RemoveAll(tmp)
		return time.Time{}, fmt.Errorf("snapshot: %w", err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return time.Time{}, fmt.Errorf("snapshot: %w", err)
	}
	snaps = append(snaps, snapshotInfo{name: name, time: t})
	if err := removeSnapshots(dir, snaps[:max(len(snaps)-keepSnapshots, 0)]); err != nil {
		return t, fmt.Errorf("snapshot taken, removing old ones: %w", err)
	}
	return t, nil
}

// SnapshotEvery takes a snapshot of b, a book open for writing, at once
// and then every interval, until ctx is done. After each, taken (if not
// nil) is called with the snapshot's time and how long it took, or with
// the error of one that failed: a failure does not stop SnapshotEvery, and
// readers keep the snapshot before. Stop it (cancel ctx and wait for it to
// return) before closing b.
func (b *Book) SnapshotEvery(ctx context.Context, interval time.Duration, taken func(at time.Time, took time.Duration, err error)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		start := time.Now()
		at, err := b.Snapshot()
		if taken != nil && ctx.Err() == nil {
			taken(at, time.Since(start), err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// removeSnapshots removes the snapshots snaps under dir that no reader
// holds, each renamed first so that no reader opens it half removed.
func removeSnapshots(dir string, snaps []snapshotInfo) error {
	var errs []error
	for _, s := range snaps {
		path := filepath.Join(dir, s.name)
		l, ok, err := tryLockExclusive(filepath.Join(path, lockFileName))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue // a reader holds it
		}
		old := filepath.Join(dir, oldSnapshotPrefix+s.name)
		err = os.Rename(path, old)
		l.Close()
		if err == nil {
			err = os.RemoveAll(old)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeSnapshotLeftovers removes what a writer that crashed left under
// the snapshots directory of the book at path: snapshots half taken, or
// half removed. Only a writer calls it, holding the book.
func removeSnapshotLeftovers(path string) error {
	dir := snapshotsDir(path)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, tmpSnapshotPrefix) || strings.HasPrefix(n, oldSnapshotPrefix) {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, n)))
		}
	}
	return errors.Join(errs...)
}

// removeAllSnapshots removes the snapshots of the book at path that no
// reader holds, the leftovers of a crash, and the snapshots directory if
// it is then empty. Only a writer calls it, when it closes the book.
func removeAllSnapshots(path string) error {
	snaps, err := listSnapshots(path)
	if err != nil {
		return err
	}
	dir := snapshotsDir(path)
	err = errors.Join(removeSnapshots(dir, snaps), removeSnapshotLeftovers(path))
	if rerr := os.Remove(dir); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && !isNotEmpty(dir) {
		err = errors.Join(err, rerr)
	}
	return err
}

// isNotEmpty reports whether dir holds files.
func isNotEmpty(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}

// openNewestSnapshot opens the newest snapshot of the book at path
// read-only. retry is true when the writer removed it, or holds it to
// remove it, before it could be opened, or when there is none: the book
// may have been closed meanwhile, and Open tries the book again.
func openNewestSnapshot(path string, o *Options) (bk *Book, retry bool, err error) {
	snaps, err := listSnapshots(path)
	if err != nil {
		return nil, false, fmt.Errorf("open book %s: snapshots: %w", path, err)
	}
	if len(snaps) == 0 {
		return nil, true, fmt.Errorf("open book %s: %w", path, ErrNoSnapshot)
	}
	s := snaps[len(snaps)-1]
	dir := filepath.Join(snapshotsDir(path), s.name)
	gone := func() bool { _, err := os.Stat(dir); return errors.Is(err, os.ErrNotExist) }
	db, err := o.openPebble(dir, true, false)
	if err != nil {
		err = fmt.Errorf("open book %s: snapshot %s: %w", path, s.name, err)
		return nil, isLocked(err) || gone(), err
	}
	// Locked, and still under its name: the writer cannot remove it now.
	if gone() {
		db.Close()
		return nil, true, fmt.Errorf("open book %s: snapshot %s removed while opened", path, s.name)
	}
	board, err := checkBookRecord(db, o.Board)
	if err != nil {
		db.Close()
		return nil, false, fmt.Errorf("open book %s: snapshot %s: %w", path, s.name, err)
	}
	return &Book{db: db, board: board, path: path, readOnly: true, health: o.health, fs: o.FS, snapshot: s.time}, false, nil
}
