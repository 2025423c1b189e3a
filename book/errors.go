package book

import (
	"encoding/binary"
	"errors"
	"fmt"
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
