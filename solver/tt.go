package solver

import (
	"fmt"
	"math/bits"
)

// Bound says what a table entry's score tells about a position's value v.
type Bound uint8

// Bound kinds. The zero value marks an empty entry.
const (
	NoBound Bound = iota // empty entry
	Upper                // v <= score: the search failed low
	Lower                // v >= score: the search failed high
	Exact                // v == score
)

// Table is a transposition table: scores and bounds of positions already
// searched, so that a position reached again through another move order
// is not searched again. Bounds are facts about a position, true in any
// later search, so a Table can stay warm across the positions a Solver
// solves.
//
// # Entry layout
//
// One uint64 an entry, one entry a slot, slot index key mod size, size a
// prime. An entry stores only the key's low 48 bits: with the index, that
// is the key modulo size and modulo 2^48, which by the Chinese remainder
// theorem identifies any key below size * 2^48, so lookups never confuse
// two positions (NewTable checks the size is large enough for the board).
//
//	 63                                         16 15   12 11 10 9       3 2  0
//	+---------------------------------------------+-------+-----+---------+----+
//	|          key mod 2^48 (partial key)         | move  |bound|  score  | -- |
//	+---------------------------------------------+-------+-----+---------+----+
//	move:  best column + 1 found by the search, 0 if none
//	bound: NoBound (empty), Upper, Lower or Exact
//	score: the score in table form (see toTableScore)
//
// Replacement: a new entry always replaces the slot's old one; the newest
// result is the one most likely to be needed again.
type Table struct {
	slots []uint64
	size  uint64 // len(slots), a prime
}

// Entry fields: see the layout above.
const (
	entryScoreShift = 3
	entryBoundShift = entryScoreShift + scoreBits
	entryMoveShift  = entryBoundShift + 2
	entryKeyShift   = 16
	entryKeyBits    = 64 - entryKeyShift

	entryScoreMask = 1<<scoreBits - 1
	entryBoundMask = 1<<2 - 1
	entryMoveMask  = 1<<4 - 1
	entryKeyMask   = 1<<entryKeyBits - 1
)

// Compile-time check that the fields do not overlap.
var _ [entryKeyShift - (entryMoveShift + 4)]struct{}

// MinTableBytes is the smallest table NewTable accepts.
const MinTableBytes = 1 << 10

// DefaultTableBytes is the table size of a Solver made with a size of 0:
// 64 MiB, 8 million entries.
const DefaultTableBytes = 64 << 20

// NewTable returns an empty table of at most bytes bytes for positions of
// board b: the largest prime number of entries that fits. It returns an
// error if bytes is below MinTableBytes or too small for the partial keys
// to identify b's positions.
func NewTable(b *Board, bytes int64) (*Table, error) {
	if bytes < MinTableBytes {
		return nil, fmt.Errorf("table size %d bytes: must be at least %d", bytes, MinTableBytes)
	}
	size := prevPrime(uint64(bytes / 8))
	// CRT: size * 2^entryKeyBits must exceed every key.
	if need := b.KeyBits() - entryKeyBits; need > 0 && bits.Len64(size) <= need {
		return nil, fmt.Errorf("table size %d bytes: board %v needs at least %d bytes", bytes, b, 16<<uint(need))
	}
	return &Table{slots: make([]uint64, size), size: size}, nil
}

// Entries is the number of entries the table holds.
func (t *Table) Entries() int { return int(t.size) }

// Bytes is the memory the table's entries take.
func (t *Table) Bytes() int64 { return int64(t.size) * 8 }

// Clear empties the table.
func (t *Table) Clear() { clear(t.slots) }

// tableEntry is one decoded entry.
type tableEntry uint64

func (e tableEntry) bound() Bound { return Bound(e >> entryBoundShift & entryBoundMask) }
func (e tableEntry) score() int   { return fromTableScore(uint64(e >> entryScoreShift & entryScoreMask)) }

// move returns the best column stored, or -1.
func (e tableEntry) move() int { return int(e>>entryMoveShift&entryMoveMask) - 1 }

// get returns the entry of the position with key key, or an entry with
// bound NoBound if the table does not hold it.
func (t *Table) get(key uint64) tableEntry {
	e := t.slots[key%t.size]
	if e>>entryKeyShift != key&entryKeyMask {
		return 0
	}
	return tableEntry(e)
}

// put stores a bound on the score of the position with key key and the
// best column found (-1 for none).
func (t *Table) put(key uint64, score int, bound Bound, move int) {
	t.slots[key%t.size] = key<<entryKeyShift |
		uint64(move+1)<<entryMoveShift |
		uint64(bound)<<entryBoundShift |
		toTableScore(score)<<entryScoreShift
}

// prevPrime returns the largest prime at most n (n >= 2).
func prevPrime(n uint64) uint64 {
	for ; n > 2; n-- {
		if isPrime(n) {
			return n
		}
	}
	return 2
}

// isPrime tests n by trial division; n is at most a few billion here.
func isPrime(n uint64) bool {
	if n < 2 {
		return false
	}
	for d := uint64(2); d*d <= n; d++ {
		if n%d == 0 {
			return false
		}
	}
	return true
}
