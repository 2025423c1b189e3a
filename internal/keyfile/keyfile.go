// Package keyfile keeps sets of position keys on disk as sorted files, so
// that a job's positions take disk, not memory: a level of a generation
// job (its positions with a given number of stones), or its leaves. A file
// is written once, in increasing order, and read in order or by index.
// A list is the same file with its values in any order (a value for each
// key of a key file, or indexes into one). Sets larger than memory are
// sorted by a Sorter, which spills sorted runs to disk and merges them.
package keyfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/c4book/c4book/internal/durable"
)

// A key file, version 1:
//
//	 0      4         8               16
//	+------+---------+---------------+----------------------------------+
//	| "c4k"| version | count (uint64)| count keys, 8 bytes each (uint64)|
//	| 'f'  | uint32  | little endian | little endian, strictly rising   |
//	+------+---------+---------------+----------------------------------+
//
// A list is the same with magic "c4kl" and its values in any order.
//
// The count is written when the file is complete, and the file takes its
// name only then (it is written under name+".tmp" and renamed): a file
// found under its name is whole, and its size is 16 + 8*count bytes.
const (
	magic      = "c4kf"
	listMagic  = "c4kl"
	version    = 1
	headerLen  = 16
	keyLen     = 8
	tempSuffix = ".tmp"
)

// ErrFormat is wrapped by the errors of a file that is not a whole key
// file of this version.
var ErrFormat = errors.New("not a key file")

// Writer writes a key file, whose keys must be added in strictly
// increasing order, or a list, whose values come in any order.
type Writer struct {
	path    string
	list    bool // a list: values in any order
	durable bool // synced on Close: a run of a Sorter is not
	f       *os.File
	w       *bufio.Writer
	count   uint64
	last    uint64
	buf     [keyLen]byte
}

// Create starts the key file path. Nothing is found under path until
// Close succeeds; Abort gives up.
func Create(path string) (*Writer, error) { return create(path, false, true) }

// CreateList starts the list path, as Create starts a key file.
func CreateList(path string) (*Writer, error) { return create(path, true, true) }

// create is Create or CreateList, with Close syncing the file or not.
func create(path string, list, durable bool) (*Writer, error) {
	f, err := os.Create(path + tempSuffix)
	if err != nil {
		return nil, err
	}
	w := &Writer{path: path, list: list, durable: durable, f: f, w: bufio.NewWriterSize(f, 1<<16)}
	var h [headerLen]byte
	copy(h[:], magic)
	if list {
		copy(h[:], listMagic)
	}
	binary.LittleEndian.PutUint32(h[4:], version)
	if _, err := w.w.Write(h[:]); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// Add appends key, which in a key file must be greater than the key added
// before.
func (w *Writer) Add(key uint64) error {
	if !w.list && w.count > 0 && key <= w.last {
		return fmt.Errorf("keyfile %s: key %#x after %#x: keys must rise", w.path, key, w.last)
	}
	binary.LittleEndian.PutUint64(w.buf[:], key)
	if _, err := w.w.Write(w.buf[:]); err != nil {
		return err
	}
	w.count++
	w.last = key
	return nil
}

// Count returns the number of keys added.
func (w *Writer) Count() uint64 { return w.count }

// Close completes the file: it writes the count, syncs the file and gives
// it its name.
func (w *Writer) Close() error {
	err := w.w.Flush()
	if err == nil {
		var c [8]byte
		binary.LittleEndian.PutUint64(c[:], w.count)
		_, err = w.f.WriteAt(c[:], 8)
	}
	if err == nil && w.durable {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.path+tempSuffix, w.path)
	}
	if err == nil && w.durable {
		err = durable.SyncDir(filepath.Dir(w.path))
	}
	if err != nil {
		os.Remove(w.path + tempSuffix)
		return fmt.Errorf("keyfile %s: %w", w.path, err)
	}
	return nil
}

// Abort gives up the file.
func (w *Writer) Abort() {
	w.f.Close()
	os.Remove(w.path + tempSuffix)
}

// File is a key file or a list open for reading. Its methods may be
// called from several goroutines at once.
type File struct {
	path  string
	f     *os.File
	count uint64
}

// Open opens the key file path and checks its header and size.
func Open(path string) (*File, error) { return open(path, magic) }

// OpenList opens the list path and checks its header and size.
func OpenList(path string) (*File, error) { return open(path, listMagic) }

// open opens the file path, which must have magic m.
func open(path, m string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	kf, err := check(path, f, m)
	if err != nil {
		f.Close()
		return nil, err
	}
	return kf, nil
}

// check reads the header of f, which must have magic m, and checks it
// against the size of f.
func check(path string, f *os.File, m string) (*File, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return nil, fmt.Errorf("keyfile %s: %w: %v", path, ErrFormat, err)
	}
	if string(h[:4]) != m || binary.LittleEndian.Uint32(h[4:]) != version {
		return nil, fmt.Errorf("keyfile %s: %w: header %q", path, ErrFormat, h[:8])
	}
	count := binary.LittleEndian.Uint64(h[8:])
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if count > (1<<62)/keyLen || st.Size() != headerLen+int64(count)*keyLen {
		return nil, fmt.Errorf("keyfile %s: %w: %d bytes for %d keys", path, ErrFormat, st.Size(), count)
	}
	return &File{path: path, f: f, count: count}, nil
}

// Len returns the number of keys.
func (kf *File) Len() int64 { return int64(kf.count) }

// Path returns the file's path.
func (kf *File) Path() string { return kf.path }

// Keys reads the keys of indexes [from, to) into dst, which it returns
// grown as needed.
func (kf *File) Keys(dst []uint64, from, to int64) ([]uint64, error) {
	if from < 0 || to > kf.Len() || from > to {
		return dst, fmt.Errorf("keyfile %s: keys [%d, %d) of %d", kf.path, from, to, kf.count)
	}
	buf := make([]byte, (to-from)*keyLen)
	if _, err := kf.f.ReadAt(buf, headerLen+from*keyLen); err != nil {
		return dst, fmt.Errorf("keyfile %s: %w", kf.path, err)
	}
	for i := 0; i < len(buf); i += keyLen {
		dst = append(dst, binary.LittleEndian.Uint64(buf[i:]))
	}
	return dst, nil
}

// Scan returns a Scanner of the keys of indexes [from, to), in order.
func (kf *File) Scan(from, to int64) *Scanner {
	s := &Scanner{path: kf.path, next: from, end: to}
	if from < 0 || to > kf.Len() || from > to {
		s.err = fmt.Errorf("keyfile %s: keys [%d, %d) of %d", kf.path, from, to, kf.count)
		return s
	}
	s.r = bufio.NewReaderSize(io.NewSectionReader(kf.f, headerLen+from*keyLen, (to-from)*keyLen), 1<<16)
	return s
}

// Scanner reads keys of a file in order, as bufio.Scanner reads lines.
type Scanner struct {
	path      string
	r         *bufio.Reader
	next, end int64 // index of the next key, and the end
	key       uint64
	err       error
	buf       [keyLen]byte
}

// Next reads the next key; it returns false at the end or on an error.
func (s *Scanner) Next() bool {
	if s.err != nil || s.next >= s.end {
		return false
	}
	if _, err := io.ReadFull(s.r, s.buf[:]); err != nil {
		s.err = fmt.Errorf("keyfile %s: %w", s.path, err)
		return false
	}
	s.key = binary.LittleEndian.Uint64(s.buf[:])
	s.next++
	return true
}

// Key returns the key Next read.
func (s *Scanner) Key() uint64 { return s.key }

// Index returns the index of the key Next read.
func (s *Scanner) Index() int64 { return s.next - 1 }

// Err returns the error that ended the scan, or nil.
func (s *Scanner) Err() error { return s.err }

// Close closes the file.
func (kf *File) Close() error { return kf.f.Close() }
