package book

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/c4book/c4book/book/packed"
	"github.com/c4book/c4book/solver"
)

// pebbleFormat is the Pebble format major version of the books this package
// creates, pinned so that a new Pebble release does not change the files
// under a book. It is the newest version whose tables are row-based
// (sstable format Pebblev4) rather than columnar: on a book's tiny entries
// (a 9-byte key, a 2-byte value) rows with prefix compression, in large
// zstd blocks, take 4.9 bytes an entry after compaction where columnar
// blocks take 6.5 (BenchmarkImportText of package bookfile). Books made
// with a newer version open as they are: Pebble never lowers a database's
// version.
const pebbleFormat = pebble.FormatFlushableIngestExcises

// Table layout of the book's data blocks: large blocks with few restart
// points, so that zstd sees many entries at once and prefix compression
// rarely restarts. A lookup scans up to a restart interval of entries:
// 128 saves 1.4% more bytes but costs 8% of the lookups' speed
// (BenchmarkBook_Get: 443,000 a second against 482,000 with 64).
const (
	dataBlockSize        = 64 << 10
	blockRestartInterval = 64
)

// Defaults of Options.
const (
	// DefaultCacheBytes is the default block cache: the hot part of a large
	// book (a book's lookups and scans are mostly in key order, and the
	// operating system's page cache holds the rest of its files). A
	// generation job ran as fast with it as with four times more, in much
	// less memory (docs/benchmarks.md, the coordinator at scale). A
	// server of a large book answering from Pebble may want more.
	DefaultCacheBytes = 16 << 20
	// DefaultMemTableBytes is the default Pebble memtable size: writes are
	// synced batches of thousands of entries, and a larger memtable only
	// makes for fewer, larger flushes.
	DefaultMemTableBytes = 4 << 20

	// memTableReserve is the number of memtables Pebble may count against
	// the block cache at once: two in use, one kept for reuse.
	memTableReserve = 3
)

// Options says how to open a book. A nil *Options is valid: it opens an
// existing book of any board size for reading and writing.
type Options struct {
	// Create makes a new book when path does not exist or is an empty
	// directory. Board must then be set. The default value is false.
	Create bool

	// Board is the board size the book must hold. Opening a book of another
	// size fails with ErrBoardMismatch. Nil accepts any size when opening;
	// creating needs it. The default value is nil.
	Board *solver.Board

	// ReadOnly opens the book without writing anything to its directory.
	// Writes then fail with ErrReadOnly. A book that another process has
	// open for writing is read from its newest snapshot (see Open). The
	// default value is false.
	ReadOnly bool

	// CacheBytes is the size of the block cache for the book's data.
	// Lookups are fast when the cache holds the book's hot blocks. Pebble
	// also counts its memtables against the cache; the cache made is
	// larger by that room (three memtables). The default value is
	// DefaultCacheBytes.
	CacheBytes int64

	// MemTableBytes is the size of Pebble's memtable. The default value is
	// DefaultMemTableBytes.
	MemTableBytes int64

	// Logger receives Pebble's messages. The default value discards
	// informational messages and prints errors with the standard log
	// package. Background errors (a failed flush or compaction, as on a
	// full disk) are logged at most once every ten seconds, with the
	// number of repeats.
	Logger pebble.Logger

	// FS is the file system of the book's directory. The default value is
	// the operating system's (vfs.Default); tests inject failures with
	// another.
	FS vfs.FS

	health *writeHealth // made by withDefaults for each Open

	// tweakPebble, if set, changes the Pebble options last: a seam for
	// tests that drive Pebble step by step.
	tweakPebble func(*pebble.Options)
}

// withDefaults returns a copy of o (nil is valid) with defaults filled in.
func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.CacheBytes <= 0 {
		r.CacheBytes = DefaultCacheBytes
	}
	if r.MemTableBytes <= 0 {
		r.MemTableBytes = DefaultMemTableBytes
	}
	if r.Logger == nil {
		r.Logger = quietLogger{}
	}
	if r.FS == nil {
		r.FS = vfs.Default
	}
	r.health = &writeHealth{logger: r.Logger}
	return r
}

// Book is an open opening book. Its methods are safe for concurrent use;
// Close must be the last call.
type Book struct {
	health   *writeHealth
	fs       vfs.FS
	db       *pebble.DB
	pk       *packed.File // a packed book's file; db is then nil
	board    *solver.Board
	path     string
	readOnly bool
	snapshot time.Time  // of the snapshot read, zero for the book itself
	snapMu   sync.Mutex // serialises Snapshot, and Close after it
	workerMu sync.Mutex // serialises AddWorker and RemoveWorker
	closed   atomic.Bool
}

// ErrClosed is returned by the methods of a closed Book.
var ErrClosed = errors.New("book is closed")

// Open opens the book at path: a directory holding a Pebble book, or a
// packed book's file (see packedbook.go), which opens read-only only.
//
// A path that does not exist, or an empty directory, becomes a new book of
// board opts.Board when opts.Create is set, and is ErrNotExist otherwise;
// the directory it goes in must exist (only the book's own is made). A
// file, a directory holding files that are not a Pebble database, or a
// Pebble database without c4book's book record is ErrNotBook; a book of
// another board size than opts.Board is ErrBoardMismatch; a book of a newer
// format is ErrNewerFormat. In all these cases Open writes nothing: the
// directory is inspected before Pebble is called, and an existing database
// is first opened read-only to check its book record.
//
// A book that another process has open for writing (a job) cannot be
// opened: a writable Open fails, saying so. A read-only Open opens the
// book's newest snapshot instead (see snapshot.go), read-only, and
// SnapshotTime then gives its time; if the writer has taken no snapshot
// yet, the error is ErrNoSnapshot. A writable Open removes what a crash
// left of snapshots being taken or removed.
func Open(path string, opts *Options) (*Book, error) {
	o := opts.withDefaults()
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && isPackedFile(path) {
		return openPacked(path, &o)
	}
	empty, err := inspectDir(path)
	if err != nil {
		return nil, err
	}
	if empty {
		if !o.Create {
			return nil, fmt.Errorf("open book %s: %w (set Create to make one)", path, ErrNotExist)
		}
		if o.ReadOnly {
			return nil, fmt.Errorf("open book %s: cannot create a book read-only", path)
		}
		if o.Board == nil {
			return nil, fmt.Errorf("open book %s: creating a book needs a board size", path)
		}
		if err := checkParent(path); err != nil {
			return nil, err
		}
		return create(path, &o)
	}

	// An existing Pebble database: check its book record without writing.
	// A reader of a book being written reads its newest snapshot; a writer
	// may close the book, or remove the snapshot, in between: then it
	// tries again.
	var db *pebble.DB
	for attempt := 1; ; attempt++ {
		if writing.has(path) {
			// Not even a look at its LOCK file: closing it would drop
			// this process's lock (see writerRegistry).
			err = &lockedError{name: filepath.Join(path, lockFileName), err: errors.New("held by this process")}
		} else {
			db, err = o.openPebble(path, true, false)
		}
		if err == nil || !o.ReadOnly || !isLocked(err) {
			break
		}
		bk, retry, err := openNewestSnapshot(path, &o)
		if !retry || attempt == openAttempts {
			return bk, err
		}
	}
	if isLocked(err) {
		return nil, inUse(path, err, writing.has(path))
	}
	if err != nil {
		if missing := missingFile(path, err); missing != nil {
			return nil, missing
		}
		return nil, fmt.Errorf("open book %s: %w", path, err)
	}
	board, err := checkBookRecord(db, o.Board)
	if err == nil && o.ReadOnly {
		return &Book{db: db, board: board, path: path, readOnly: true, health: o.health, fs: o.FS}, nil
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("open book %s: %w", path, err)
	}
	db, err = o.openPebble(path, false, false)
	if isLocked(err) || pebbleLockBusy(err) {
		// Taken by another between the look and the open.
		return nil, inUse(path, err, false)
	}
	if err != nil {
		return nil, fmt.Errorf("open book %s: %w", path, err)
	}
	if err := removeSnapshotLeftovers(path); err != nil {
		db.Close()
		return nil, fmt.Errorf("open book %s: removing what a crash left of snapshots: %w", path, err)
	}
	writing.add(path)
	writeHolder(path)
	return &Book{db: db, board: board, path: path, health: o.health, fs: o.FS}, nil
}

// checkParent returns an error unless the directory a new book at path
// goes in exists. Only the book's own directory is made: a mistyped
// directory in --book would otherwise make a new book somewhere
// unexpected, and the job would start from nothing without a word.
func checkParent(path string) error {
	parent := filepath.Dir(filepath.Clean(path))
	st, err := os.Stat(parent)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("create book %s: the directory %s does not exist: create it first (only the book's own directory is made, so that a mistyped path makes no book elsewhere)", path, parent)
	case err != nil:
		return fmt.Errorf("create book %s: %w", path, err)
	case !st.IsDir():
		return fmt.Errorf("create book %s: %s is not a directory", path, parent)
	}
	return nil
}

// inspectDir tells whether path is absent or an empty directory (a place to
// create a book), nil if it holds a Pebble database, or an error: a file,
// or a directory of other files.
func inspectDir(path string) (empty bool, err error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("open book: %w", err)
	}
	if !st.IsDir() {
		return false, fmt.Errorf("open book %s: %w: a file, not a directory", path, ErrNotBook)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return false, fmt.Errorf("open book: %w", err)
	}
	if len(entries) == 0 {
		return true, nil
	}
	// Pebble names its current manifest with an atomic marker file
	// (marker.manifest.*); databases of the oldest format use CURRENT.
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && (strings.HasPrefix(n, "marker.manifest.") || n == "CURRENT") {
			return false, nil
		}
	}
	return false, fmt.Errorf("open book %s: %w: the directory holds %d files (%q, ...) and no Pebble database",
		path, ErrNotBook, len(entries), entries[0].Name())
}

// checkBookRecord reads the book record of db and checks it against want
// (nil: any board). It returns the book's board.
func checkBookRecord(db *pebble.DB, want *solver.Board) (*solver.Board, error) {
	v, closer, err := db.Get(bookKey)
	err = readError(err)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("%w: a Pebble database without c4book's book record", ErrNotBook)
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	_, board, err := decodeBookRecord(v)
	if err != nil {
		return nil, err
	}
	if want != nil && !want.Equal(board) {
		return nil, fmt.Errorf("%w: the book holds %v positions, not %v", ErrBoardMismatch, board, want)
	}
	return board, nil
}

// create makes a new book at path, an absent or empty directory, and
// writes its book record.
func create(path string, o *Options) (*Book, error) {
	db, err := o.openPebble(path, false, true)
	if err != nil {
		return nil, fmt.Errorf("create book %s: %w", path, err)
	}
	if err := db.Set(bookKey, encodeBookRecord(o.Board), pebble.Sync); err != nil {
		db.Close()
		return nil, fmt.Errorf("create book %s: %w", path, err)
	}
	writing.add(path)
	writeHolder(path)
	return &Book{db: db, board: o.Board, path: path, health: o.health, fs: o.FS}, nil
}

// openPebble opens the Pebble database of a book with the options of o.
func (o *Options) openPebble(path string, readOnly, create bool) (*pebble.DB, error) {
	po := o.pebbleOptions(readOnly)
	po.ErrorIfExists = create
	// Pebble counts its memtables (up to two in use and one kept for
	// reuse) against the block cache; without room for them a cache no
	// larger than the memtables caches nothing.
	po.Cache = pebble.NewCache(o.CacheBytes + memTableReserve*o.MemTableBytes)
	// The DB takes its own reference to the cache; ours is dropped so that
	// the cache is freed when the DB closes.
	defer po.Cache.Unref()
	return pebble.Open(path, po)
}

// pebbleOptions returns the Pebble options of a book, without a cache.
//
// Books are written in large batches and read by point lookups, and their
// bottom level holds almost all the data: it is compressed with zstd
// (DBCompressionGood), the upper levels with the fastest codec. Compact
// makes sure every table is rewritten into the bottom level.
func (o *Options) pebbleOptions(readOnly bool) *pebble.Options {
	po := &pebble.Options{
		FormatMajorVersion: pebbleFormat,
		MemTableSize:       uint64(o.MemTableBytes),
		ReadOnly:           readOnly,
		Logger:             o.Logger,
	}
	po.FS = o.FS
	po.EventListener = &pebble.EventListener{
		BackgroundError: o.health.backgroundError,
		// A damaged file is reported by the read that met it, as a
		// *FileCorruptError; Pebble's default here is a fatal log.
		DataCorruption: func(pebble.DataCorruptionInfo) {},
	}
	if readOnly {
		po.FS = readOnlyFS(o.FS)
	}
	po.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionGood })
	for i := range po.Levels {
		po.Levels[i].BlockRestartInterval = blockRestartInterval
		po.Levels[i].BlockSize = dataBlockSize
	}
	if o.tweakPebble != nil {
		o.tweakPebble(po)
	}
	return po
}

// Board returns the board size of the book.
func (b *Book) Board() *solver.Board { return b.board }

// Path returns the directory of the book.
func (b *Book) Path() string { return b.path }

// ReadOnly reports whether the book was opened read-only.
func (b *Book) ReadOnly() bool { return b.readOnly }

// Close closes the book. Writes already committed are durable; Close does
// not flush Pebble's memtable, the write-ahead log holds it. Closing a
// book open for writing removes its snapshots (readers now open the book
// itself), but those a reader still holds.
func (b *Book) Close() error {
	if b.closed.Swap(true) {
		return ErrClosed
	}
	if b.pk != nil {
		return b.pk.Close()
	}
	b.snapMu.Lock() // a snapshot being taken ends first
	defer b.snapMu.Unlock()
	if !b.readOnly {
		removeHolder(b.path) // while the lock is still held: it names this process
	}
	err := b.db.Close()
	if !b.readOnly {
		writing.remove(b.path)
		if rerr := removeAllSnapshots(b.path); rerr != nil {
			err = errors.Join(err, fmt.Errorf("close book %s: removing its snapshots: %w", b.path, rerr))
		}
	}
	return err
}

// Compact rewrites the whole book into Pebble's bottom level: the smallest
// it gets on disk (zstd, and sequence numbers zeroed), and lookups touch
// one table. Writes may go on meanwhile.
//
// Pebble compacts a table into a deeper level by moving the file when no
// other table overlaps it, as happens to a book written through one
// memtable: the table would keep its sequence numbers and the codec of
// level 0. So Compact flushes the memtable, then writes the first position
// and the book record again, with their own values, and flushes them: that
// small table overlaps every other, and the compaction rewrites them all.
func (b *Book) Compact(ctx context.Context) error {
	if err := b.check(true); err != nil {
		return err
	}
	if err := b.db.Flush(); err != nil {
		return err
	}
	batch := b.db.NewBatch()
	defer batch.Close()
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: []byte{0}, UpperBound: []byte{metaPrefix}})
	if err != nil {
		return err
	}
	if it.First() {
		err = batch.Set(it.Key(), it.Value(), nil)
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	record, closer, err := b.db.Get(bookKey)
	if err != nil {
		return fmt.Errorf("compact: book record: %w", err)
	}
	err = batch.Set(bookKey, record, nil)
	closer.Close()
	if err != nil {
		return err
	}
	if err := batch.Commit(pebble.Sync); err != nil {
		return err
	}
	if err := b.db.Flush(); err != nil {
		return err
	}
	return b.db.Compact(ctx, []byte{0}, []byte{metaPrefix, metaPrefix}, true)
}

// CheckWritable returns the error a write to the book fails with, before
// anything is written: ErrClosed if the book is closed, ErrReadOnly if it
// was opened read-only; nil otherwise. An import (package bookfile) checks
// it before reading its input.
func (b *Book) CheckWritable() error { return b.check(true) }

// check returns an error if the book is closed, or read-only and write is
// set.
func (b *Book) check(write bool) error {
	switch {
	case b.closed.Load():
		return ErrClosed
	case write && b.readOnly:
		return ErrReadOnly
	}
	return nil
}

// quietLogger is the default Pebble logger: it drops informational
// messages and prints errors with the standard log package.
type quietLogger struct{}

func (quietLogger) Infof(format string, args ...any) {}

func (quietLogger) Errorf(format string, args ...any) { pebble.DefaultLogger.Errorf(format, args...) }

func (quietLogger) Fatalf(format string, args ...any) { pebble.DefaultLogger.Fatalf(format, args...) }
