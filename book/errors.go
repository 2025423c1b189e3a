package book

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Sentinel errors. Errors returned by this package wrap them, so callers
// test with errors.Is.
var (
	// ErrNotExist: the book does not exist and Options.Create is not set.
	ErrNotExist = errors.New("book does not exist")
	// ErrNotBook: the path is not a c4book book (a file, a directory of
	// other files, or a Pebble database without c4book metadata).
	ErrNotBook = errors.New("not a c4book book")
	// ErrBoardMismatch: the book holds another board size than asked for.
	ErrBoardMismatch = errors.New("book is for another board size")
	// ErrNewerFormat: the book was written by a newer format version.
	ErrNewerFormat = errors.New("book format is newer than this program")
	// ErrCorrupt: a stored key or value cannot be decoded; see CorruptError.
	ErrCorrupt = errors.New("corrupt book")
	// ErrNotInBook: a position needed (by BestMoves without a solver) is not
	// in the book.
	ErrNotInBook = errors.New("position not in book")
	// ErrReadOnly: a write to a book opened read-only.
	ErrReadOnly = errors.New("book is read-only")
)

// CorruptError is a stored key or value that cannot be decoded. It names
// the key it is at.
type CorruptError struct {
	Key    []byte // the key of the record (or the bad key itself)
	Reason string // what is wrong
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("corrupt book: at key %s: %s", FormatKey(e.Key), e.Reason)
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// newCorrupt returns the CorruptError of key k, a copy of it: the key a
// scan gives is the iterator's, reused once it moves or closes, and the
// error outlives it.
func newCorrupt(k []byte, reason string) *CorruptError {
	return &CorruptError{Key: bytes.Clone(k), Reason: reason}
}

// FormatKey renders a raw key for messages: "depth D key 0x..." for a
// position key, "meta ..." for a metadata key, hex otherwise.
func FormatKey(k []byte) string {
	switch {
	case len(k) == positionKeyLen && k[0] <= maxDepth:
		return fmt.Sprintf("depth %d key %#x (%x)", k[0], binary.BigEndian.Uint64(k[1:]), k)
	case len(k) >= 2 && k[0] == metaPrefix:
		return fmt.Sprintf("meta %q (%x)", k[1:], k)
	}
	return fmt.Sprintf("%x", k)
}

// FileCorruptError is a file of the book that cannot be read: a table
// whose checksums do not match what it holds (bad disk, bytes changed by
// hand). Pebble checks every block it reads, so a damaged file is never
// read as a wrong score: the entries it holds are unreadable instead.
type FileCorruptError struct {
	File         string // path of the file
	Start, End   []byte // the keys the file may hold, if known
	EndInclusive bool   // End is one of them
	Detail       string // what Pebble found
}

func (e *FileCorruptError) Error() string {
	return fmt.Sprintf("corrupt book file %s: %s", e.File, e.Detail)
}

// Unwrap returns ErrCorrupt.
func (e *FileCorruptError) Unwrap() error { return ErrCorrupt }

// readError returns err, a read of the book's database failed, as a
// *FileCorruptError when Pebble found a damaged file.
func readError(err error) error {
	if err == nil || !pebble.IsCorruptionError(err) {
		return err
	}
	fe := &FileCorruptError{File: "(unknown)", Detail: firstLine(err.Error())}
	if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
		fe.File = info.Path
		fe.Detail = firstLine(info.Details.Error())
		fe.Start = append([]byte(nil), info.Bounds.Start...)
		fe.End = append([]byte(nil), info.Bounds.End.Key...)
		fe.EndInclusive = info.Bounds.End.IsUpperBoundFor(bytes.Compare, info.Bounds.End.Key)
	}
	return fe
}

// after returns the first key after the keys e's file may hold, or nil
// if they are not known.
func (e *FileCorruptError) after() []byte {
	if e.End == nil {
		return nil
	}
	if e.EndInclusive {
		return append(append([]byte(nil), e.End...), 0)
	}
	return e.End
}

// firstLine returns s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// MissingFileError is a book whose directory lacks a file that its
// manifest names: a table deleted or lost (a copy made by hand that left
// it out, a disk that lost it). The book is incomplete, and no command
// opens it: the entries of that file would be missing without a word.
type MissingFileError struct {
	Book string // the book's directory
	File string // the missing file's name, as Pebble names it
	Kind string // what the file is: "sstable", "blob", ...
	Err  error  // Pebble's error
}

func (e *MissingFileError) Error() string {
	return fmt.Sprintf("the book %s is incomplete: its %s file %s is missing from the directory "+
		"(deleted or lost; the book's entries in it are gone): restore the directory from a copy, "+
		"or build the book again (docs/reliability.md)", e.Book, e.Kind, e.File)
}

// Unwrap returns ErrCorrupt.
func (e *MissingFileError) Unwrap() error { return ErrCorrupt }

// pebbleMissingFile matches Pebble's words for a file its manifest names
// and its directory lacks: "000017: file 000017 (type sstable) unknown to
// the objstorage provider: file does not exist".
var pebbleMissingFile = regexp.MustCompile(`file (\d+) \(type (\w+)\) unknown to the objstorage provider`)

// missingFile returns err, Pebble's failure to open the book at path, as
// a *MissingFileError when a file of the book is missing, else nil.
func missingFile(path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	m := pebbleMissingFile.FindStringSubmatch(err.Error())
	if m == nil {
		return nil
	}
	name := m[1]
	if m[2] == "sstable" {
		name += ".sst"
	}
	return &MissingFileError{Book: path, File: name, Kind: m[2], Err: err}
}
