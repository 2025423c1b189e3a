package solver

import (
	"fmt"
	"math/big"
	"math/bits"
	"runtime"
	"sync/atomic"
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
// solves. A Table is used through the pointer NewTable returns, never
// copied: on Linux a large table's entries are mapped outside the Go heap
// (see allocSlots) and unmapped once that Table is garbage.
//
// # Layout
//
// The table is an array of buckets of two entries (16 bytes, so a bucket
// never straddles a cache line), a prime number of buckets; a position's
// bucket is its key modulo the number of buckets. An entry stores only the
// key's low 46 bits: with the bucket index, that is the key modulo the
// number of buckets and modulo 2^46, which by the Chinese remainder theorem
// identifies any key below buckets * 2^46, so lookups never confuse two
// positions (NewTable checks the table is large enough for the board).
//
//	 63                                   18 17    14 13 12 11       5 4      0
//	+---------------------------------------+--------+-----+---------+--------+
//	|        key mod 2^46 (partial key)     |  move  |bound|  score  |  work  |
//	+---------------------------------------+--------+-----+---------+--------+
//	move:  best column + 1 found by the search, 0 if none
//	bound: NoBound (empty entry), Upper, Lower or Exact
//	score: the score in table form (see toTableScore)
//	work:  log2 of the number of nodes the search of the position took
//
// Sharing: several Solvers may use one Table at once, each in its own
// goroutine (see NewShared). Every entry is read and written whole, with
// atomic loads and stores, and is a fact about the position of its key, so
// a search sees either an entry or another, never a mix; the two stores
// that move an entry to the second slot may race with another search's,
// which at worst loses an entry or keeps a key twice, both harmless.
//
// Replacement: a position already in its bucket is updated in place.
// Otherwise the new entry takes the first slot if it cost at least as much
// work as the entry there, which then moves to the second slot; if not, it
// takes the second slot. The first slot keeps the results that were
// expensive to get, the second the most recent ones.
type Table struct {
	board   *Board
	slots   []uint64 // 2 entries a bucket
	buckets uint64   // len(slots)/2, a prime
	mHi     uint64   // mHi:mLo = ceil(2^128 / buckets), for bucket
	mLo     uint64
}

// Entry fields: see the layout above.
const (
	entryWorkBits   = 5
	entryScoreShift = entryWorkBits
	entryBoundShift = entryScoreShift + scoreBits
	entryMoveShift  = entryBoundShift + 2
	entryKeyShift   = entryMoveShift + 4
	entryKeyBits    = 64 - entryKeyShift

	entryWorkMask  = 1<<entryWorkBits - 1
	entryScoreMask = 1<<scoreBits - 1
	entryBoundMask = 1<<2 - 1
	entryMoveMask  = 1<<4 - 1
	entryKeyMask   = 1<<entryKeyBits - 1
	entryDataMask  = 1<<entryKeyShift - 1
)

// MinTableBytes is the smallest table NewTable accepts.
const MinTableBytes = 1 << 10

// DefaultTableBytes is the table size of a Solver made with a size of 0:
// 64 MiB, 8 million entries.
const DefaultTableBytes = 64 << 20

// MaxTableBytes returns the largest table NewTable makes: the memory this
// process may use (the machine's, or its container's if lower), or 0 if
// that is not known. A table as large as that leaves nothing for the rest,
// but a larger one cannot be had at all: the process would be killed.
func MaxTableBytes() int64 { return int64(min(memoryLimit(), 1<<62)) }

// NewTable returns an empty table of at most bytes bytes for positions of
// board b: the largest prime number of buckets that fits. It returns an
// error if bytes is below MinTableBytes, above MaxTableBytes or too small
// for the partial keys to identify b's positions.
func NewTable(b *Board, bytes int64) (*Table, error) {
	if bytes < MinTableBytes {
		return nil, fmt.Errorf("table size %d bytes: must be at least %d", bytes, MinTableBytes)
	}
	if most := MaxTableBytes(); most > 0 && bytes > most {
		return nil, fmt.Errorf("table size %d bytes: more than the memory of this machine (%d bytes, %.1f GiB)", bytes, most, float64(most)/(1<<30))
	}
	buckets := prevPrime(uint64(bytes / 16))
	// CRT: buckets * 2^entryKeyBits must exceed every key.
	if need := b.KeyBits() - entryKeyBits; need > 0 && bits.Len64(buckets) <= need {
		return nil, fmt.Errorf("table size %d bytes: board %v needs more than %d bytes", bytes, b, 16<<uint(need))
	}
	t := &Table{board: b, buckets: buckets}
	// ceil(2^128 / d) = floor((2^128 - 1) / d) + 1 for d not a power of 2.
	var rem uint64
	t.mHi, rem = bits.Div64(0, ^uint64(0), buckets)
	t.mLo, _ = bits.Div64(rem, ^uint64(0), buckets)
	t.mLo++
	if t.mLo == 0 {
		t.mHi++
	}
	slots, mem, err := allocSlots(int(2 * buckets))
	if err != nil {
		return nil, err
	}
	t.slots = slots
	if mem != nil {
		// The entries are outside the Go heap: unmap them once t is
		// unreachable. Every method that touches t.slots ends with
		// runtime.KeepAlive(t), so t stays reachable until the last
		// access, not just until t.slots was read.
		runtime.AddCleanup(t, freeSlots, mem)
	}
	return t, nil
}

// Entries is the number of entries the table holds.
func (t *Table) Entries() int { return len(t.slots) }

// Bytes is the memory the table's entries take.
func (t *Table) Bytes() int64 { return int64(len(t.slots)) * 8 }

// Board returns the board the table is for.
func (t *Table) Board() *Board { return t.board }

// Clear empties the table. No search may use the table meanwhile.
func (t *Table) Clear() {
	clear(t.slots)
	runtime.KeepAlive(t)
}

// tableEntry is one entry; see the layout above.
type tableEntry uint64

func (e tableEntry) bound() Bound { return Bound(e >> entryBoundShift & entryBoundMask) }
func (e tableEntry) score() int   { return fromTableScore(uint64(e >> entryScoreShift & entryScoreMask)) }
func (e tableEntry) work() int    { return int(e & entryWorkMask) }

// move returns the best column stored, or -1.
func (e tableEntry) move() int { return int(e>>entryMoveShift&entryMoveMask) - 1 }

// bucket returns the index in slots of the first entry of key's bucket:
// 2 * (key mod buckets). A 64-bit division takes tens of cycles; this is
// Lemire's remainder by multiplication (Lemire, Kaser and Kurz, "Faster
// remainder by direct computation", 2019): with M = ceil(2^128 / d), the
// remainder of n by d is the high 64 bits of ((M * n) mod 2^128) * d, exact
// for every 64-bit n and d.
func (t *Table) bucket(key uint64) uint64 {
	// low = (M * key) mod 2^128
	hi, lowLo := bits.Mul64(t.mLo, key)
	lowHi := t.mHi*key + hi
	// (low * buckets) >> 128
	c1, _ := bits.Mul64(lowLo, t.buckets)
	h2, l2 := bits.Mul64(lowHi, t.buckets)
	_, carry := bits.Add64(l2, c1, 0)
	return (h2 + carry) * 2
}

// prefetchAt starts loading the bucket at index i (see bucket) into the
// CPU's caches, for a getAt or putAt soon after.
func (t *Table) prefetchAt(i uint64) {
	prefetch(&t.slots[i])
	runtime.KeepAlive(t)
}

// prefetchEach is prefetchAt of the buckets at index[i] for i < n.
func (t *Table) prefetchEach(index *[lineSlots]uint64, n int) {
	prefetchEach(&t.slots[0], index, n)
	runtime.KeepAlive(t)
}

// get returns the entry of the position with key key, or an entry with
// bound NoBound if the table does not hold it.
func (t *Table) get(key uint64) tableEntry { return t.getAt(t.bucket(key), key) }

// getAt is get of key, whose bucket is at index i (see bucket): the
// search computes a position's bucket once for its prefetch, probe and
// store.
func (t *Table) getAt(i, key uint64) tableEntry {
	tag := key & entryKeyMask
	bucket := t.slots[i : i+2 : i+2] // one bounds check for both slots
	if e := atomic.LoadUint64(&bucket[0]); e>>entryKeyShift == tag {
		runtime.KeepAlive(t)
		return tableEntry(e)
	}
	e := atomic.LoadUint64(&bucket[1])
	runtime.KeepAlive(t)
	if e>>entryKeyShift == tag {
		return tableEntry(e)
	}
	return 0
}

// put stores a bound on the score of the position with key key, the best
// column found (-1 for none) and the number of nodes its search took.
func (t *Table) put(key uint64, score int, bound Bound, move int, nodes uint64) {
	t.putAt(t.bucket(key), key, score, bound, move, nodes)
}

// putAt is put of key, whose bucket is at index i (see bucket).
func (t *Table) putAt(i, key uint64, score int, bound Bound, move int, nodes uint64) {
	work := min(bits.Len64(nodes), entryWorkMask)
	e := (key&entryKeyMask)<<entryKeyShift |
		uint64(move+1)<<entryMoveShift |
		uint64(bound)<<entryBoundShift |
		toTableScore(score)<<entryScoreShift |
		uint64(work)
	bucket := t.slots[i : i+2 : i+2] // one bounds check for both slots
	first := tableEntry(atomic.LoadUint64(&bucket[0]))
	switch {
	case uint64(first)>>entryKeyShift == e>>entryKeyShift:
		atomic.StoreUint64(&bucket[0], e)
	case work >= first.work():
		atomic.StoreUint64(&bucket[1], uint64(first))
		atomic.StoreUint64(&bucket[0], e)
	default:
		atomic.StoreUint64(&bucket[1], e)
	}
	runtime.KeepAlive(t)
}

// prevPrime returns the largest prime at most n (n >= 2).
func prevPrime(n uint64) uint64 {
	for ; n > 2; n-- {
		if new(big.Int).SetUint64(n).ProbablyPrime(0) { // exact below 2^64
			return n
		}
	}
	return 2
}
