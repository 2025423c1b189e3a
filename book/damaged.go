package book

import (
	"bytes"
	"errors"
)

// damagedFiles remembers the files of a book found damaged during one
// read of it (Verify), by the keys they may hold, so that a lookup of
// those keys fails at once instead of reading the damaged block again.
// Reading it again is slow: on each checksum mismatch Pebble looks for a
// single flipped bit, checksumming the block again with each of its bits
// flipped in turn (eight checksums of the block for each of its bytes).
// Verify looks up the children of every entry, so a damaged block of
// deeper entries was read again for each of their parents: thousands of
// times, each at that price.
//
// A file's keys are all taken as unreadable, not only its damaged block's
// (which Pebble does not say): this is what the scan does too, which reads
// the keys after the file's once it meets the damage. A damaged file stays
// damaged: Pebble never rewrites a file, and a compaction meant to replace
// it must read it and fails the same way.
type damagedFiles struct {
	files []*FileCorruptError // those whose keys are known
}

// add remembers fe's file, if Pebble said which keys it holds.
func (d *damagedFiles) add(fe *FileCorruptError) {
	if fe.Start == nil || fe.End == nil || d.holding(fe.Start) != nil {
		return
	}
	d.files = append(d.files, fe)
}

// holding returns the damaged file that may hold key k, or nil.
func (d *damagedFiles) holding(k []byte) *FileCorruptError {
	for _, fe := range d.files {
		if fe.holds(k) {
			return fe
		}
	}
	return nil
}

// holds reports whether k is among the keys e's file may hold, which must
// be known.
func (e *FileCorruptError) holds(k []byte) bool {
	if bytes.Compare(k, e.Start) < 0 {
		return false
	}
	c := bytes.Compare(k, e.End)
	return c < 0 || c == 0 && e.EndInclusive
}

// damagedLookup looks entries up in a book, failing at once for the keys
// of the files found damaged (see damagedFiles).
type damagedLookup struct {
	b       *Book
	damaged *damagedFiles
}

// GetEntry is Book.GetEntry, or the *FileCorruptError of a damaged file
// that may hold the entry.
func (l damagedLookup) GetEntry(depth int, key uint64) (Value, bool, error) {
	var buf [positionKeyLen]byte
	if fe := l.damaged.holding(AppendKey(buf[:0], depth, key)); fe != nil {
		return Value{}, false, fe
	}
	v, ok, err := l.b.GetEntry(depth, key)
	if fe, isFile := errors.AsType[*FileCorruptError](err); isFile {
		l.damaged.add(fe)
	}
	return v, ok, err
}
