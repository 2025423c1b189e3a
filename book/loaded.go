package book

import (
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"

	"github.com/c4book/c4book/internal/splitmix"
	"github.com/c4book/c4book/solver"
)

// Loaded is a book read into memory, read-only: the fastest way to look
// positions up, for seeding solvers (see Loaded.NewOracle). It holds every
// entry it was loaded with, score and origin, and nothing else, and is
// safe for concurrent use.
//
// Layout. The entries sit in two parallel arrays, one contiguous run of
// them a depth: keys []uint64 and values []byte, an entry's score and
// origin packed in one byte (packValue). Within a depth the keys are not
// the canonical keys but their image by splitmix.Mix, a bijection that
// spreads them evenly over the 64 bits, sorted; the top bits of a mixed
// key are its bucket, and an index of each depth holds where each bucket
// starts in the run, about one bucket for every loadedBucketKeys entries. A
// lookup mixes the key, reads two adjacent bounds of the index and scans
// the few keys between them: two or three cache lines, against about
// twenty for a binary search of a depth of a million keys. On a book of a
// million 7x6 positions that is about 9 times as many lookups a second as
// a Pebble Reader's (docs/benchmarks.md).
//
// Why mixed: canonical keys are far from even (the top bits are the last
// column, which the smaller of a position and its mirror keeps nearly
// empty), so an index of their own top bits puts most of a depth in a few
// buckets; on the benchmark book a lookup of depth 9 then searched 9,300
// keys on average, and was no faster than a binary search of the depth
// (BenchmarkLoaded_binarySearch). Mixed keys fill the buckets evenly.
//
// Cost: 8 bytes of key and 1 of value an entry, and 4 bytes a bucket:
// 0.5 to 1 byte an entry (Bytes). Not done: a mix of the board's KeyBits
// bits (49 on 7x6) instead of 64, whose mixed keys would need, past the
// bits their bucket gives, 32 bits or fewer with 2^17 buckets a depth or
// more: about 5.5 bytes an entry on large books.
type Loaded struct {
	board  *solver.Board
	depth  int      // the deepest depth held, -1 if none
	keys   []uint64 // splitmix.Mix of the canonical keys
	values []byte   // packValue of the values, in the order of keys
	runs   []loadedRun
}

// loadedRun is the index of one depth's entries, keys[lo:hi], sorted.
type loadedRun struct {
	lo, hi int
	shift  uint     // the bucket of a mixed key h is h >> shift
	starts []uint32 // bucket b is keys[starts[b]:starts[b+1]]; nil if no entry
}

// loadedBucketKeys is the mean number of keys a bucket of the index
// holds, at least, and at most twice that: a power of two.
const loadedBucketKeys = 4

// MaxLoaded is the most entries a Loaded holds (and so the most records
// of a binary book file bookfile.LoadBinary loads): the index counts them
// in uint32.
const MaxLoaded = math.MaxUint32

// # Packed values
//
// A Loaded keeps an entry's Value in one byte:
//
//	 bits 7..2                 bits 1..0
//	+--------------------------+-----------+
//	| score - packedScoreMin   |  origin   |
//	+--------------------------+-----------+
//	  0..63                      1..3
//
// Every score of every board lies in [-31, 32]: a board has at most 63
// cells (solver.CheckSize), a loss to the opponent's next stone scores
// -(cells-moves)/2 >= -31 and a win with the next stone (cells+1-moves)/2
// <= 32. So 6 bits hold the score and 2 the origin: the loaded form keeps
// every score and origin of the book. It does not keep the worker that
// solved an entry (Value.Worker is 0): lookups need the score.
const (
	packedScoreMin   = -31
	packedScoreMax   = 32
	packedScoreShift = 2
	packedOriginMask = 1<<packedScoreShift - 1
)

// packValue returns the byte of v; unpackValue is its inverse. v must be
// valid: a score in [packedScoreMin, packedScoreMax], a valid origin.
func packValue(v Value) byte {
	return byte(v.Score-packedScoreMin)<<packedScoreShift | byte(v.Origin)
}

func unpackValue(b byte) Value {
	return Value{Score: int(b>>packedScoreShift) + packedScoreMin, Origin: Origin(b & packedOriginMask)}
}

// loadedBuilder collects the entries of a Loaded in order.
type loadedBuilder struct {
	l    *Loaded
	prev Entry
}

func newLoadedBuilder(b *solver.Board, capacity int) *loadedBuilder {
	return &loadedBuilder{l: &Loaded{
		board:  b,
		depth:  -1,
		keys:   make([]uint64, 0, capacity),
		values: make([]byte, 0, capacity),
		runs:   make([]loadedRun, b.Cells()+1),
	}}
}

// add appends e, which must be valid for the board and follow the entries
// added before it in key order.
func (lb *loadedBuilder) add(e Entry) error {
	l := lb.l
	n := len(l.keys)
	switch {
	case n == MaxLoaded:
		return fmt.Errorf("load: more than %d entries", MaxLoaded)
	case n > 0 && (e.Depth < lb.prev.Depth || e.Depth == lb.prev.Depth && e.Key <= lb.prev.Key):
		return fmt.Errorf("load: %v after %v: out of order", e, lb.prev)
	case e.Score < packedScoreMin || e.Score > packedScoreMax || !e.Origin.Valid():
		return fmt.Errorf("load: %v: no such value", e)
	}
	if n == 0 || e.Depth != lb.prev.Depth {
		l.runs[e.Depth].lo = n
	}
	l.runs[e.Depth].hi = n + 1
	l.depth = e.Depth
	l.keys = append(l.keys, e.Key)
	l.values = append(l.values, packValue(e.Value))
	lb.prev = e
	return nil
}

// done mixes the keys of each depth, sorts them into their buckets and
// builds the index, and returns the Loaded.
func (lb *loadedBuilder) done() *Loaded {
	l := lb.l
	if cap(l.keys) > len(l.keys)+len(l.keys)/8 {
		l.keys = slices.Clone(l.keys)
		l.values = slices.Clone(l.values)
	}
	var keys []uint64 // room for the largest depth's
	var values []byte
	for d := range l.runs {
		r := &l.runs[d]
		n := r.hi - r.lo
		if n == 0 {
			continue
		}
		// 2^bucketBits buckets, with loadedBucketKeys to twice that keys
		// each on average.
		bucketBits := max(0, bits.Len(uint(n))-bits.Len(2*loadedBucketKeys-1))
		r.shift = uint(64 - bucketBits)
		r.starts = make([]uint32, 1<<bucketBits+1)
		// A counting sort by bucket: count, sum, place.
		keys, values = slices.Grow(keys[:0], n)[:n], slices.Grow(values[:0], n)[:n]
		for i := r.lo; i < r.hi; i++ {
			l.keys[i] = splitmix.Mix(l.keys[i])
			r.starts[l.keys[i]>>r.shift]++
		}
		next := r.lo
		for b := range r.starts {
			next += int(r.starts[b])
			r.starts[b] = uint32(next)
		}
		// starts[b] is now the end of bucket b (the extra last one: hi). Place
		// the keys from the last, each at the end of its bucket's free
		// room: starts[b] ends at the start of bucket b.
		for i := r.hi - 1; i >= r.lo; i-- {
			b := l.keys[i] >> r.shift
			r.starts[b]--
			j := int(r.starts[b]) - r.lo
			keys[j], values[j] = l.keys[i], l.values[i]
		}
		copy(l.keys[r.lo:r.hi], keys)
		copy(l.values[r.lo:r.hi], values)
		for b := range len(r.starts) - 1 {
			sortBucket(l.keys[r.starts[b]:r.starts[b+1]], l.values[r.starts[b]:r.starts[b+1]])
		}
	}
	return l
}

// sortBucket sorts the keys of a bucket, and their values with them: an
// insertion sort, as a bucket holds a few keys.
func sortBucket(keys []uint64, values []byte) {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
			values[j], values[j-1] = values[j-1], values[j]
		}
	}
}

// Load reads every entry of an open book into memory, from one snapshot
// of it. An entry that cannot be decoded fails it with a *CorruptError.
func Load(b *Book) (*Loaded, error) {
	if err := b.check(false); err != nil {
		return nil, err
	}
	if b.pk != nil {
		l, err := LoadEntries(b.board, int(min(b.pk.Positions(), MaxLoaded)), b.Entries(0, b.board.Cells()))
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", b.path, err)
		}
		return l, nil
	}
	snap := b.db.NewSnapshot()
	defer snap.Close()
	lower, upper := []byte{0}, []byte{byte(b.board.Cells() + 1)}
	n := 0
	err := scanKeys(snap, lower, upper, func(k, v []byte) error {
		n++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", b.path, err)
	}
	lb := newLoadedBuilder(b.board, min(n, MaxLoaded))
	err = scanKeys(snap, lower, upper, func(k, v []byte) error {
		e, err := b.decodeEntry(k, v)
		if err != nil {
			return err
		}
		return lb.add(e)
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", b.path, err)
	}
	return lb.done(), nil
}

// LoadEntries reads entries of board b into memory, as Load does those of
// a book: bookfile.LoadBinary loads a binary book file with it. The
// entries must be valid for the board (as bookfile.BinaryReader checks
// them) and strictly increasing in key order. capacity is the number of
// entries to make room for at first, 0 if unknown: the arrays grow as
// entries come. It returns the first error the sequence yields, as it is.
func LoadEntries(b *solver.Board, capacity int, entries iter.Seq2[Entry, error]) (*Loaded, error) {
	lb := newLoadedBuilder(b, min(max(capacity, 0), MaxLoaded))
	for e, err := range entries {
		if err != nil {
			return nil, err
		}
		if e.Depth < 0 || e.Depth > b.Cells() {
			return nil, fmt.Errorf("load: %v: depth outside [0, %d]", e, b.Cells())
		}
		if err := lb.add(e); err != nil {
			return nil, err
		}
	}
	return lb.done(), nil
}

// Board returns the board of the positions.
func (l *Loaded) Board() *solver.Board { return l.board }

// Depth returns the deepest depth held, or -1 if none.
func (l *Loaded) Depth() int { return l.depth }

// Len returns the number of entries.
func (l *Loaded) Len() int { return len(l.keys) }

// Bytes returns the memory the entries and their index take.
func (l *Loaded) Bytes() int64 {
	n := int64(cap(l.keys))*8 + int64(cap(l.values))
	for _, r := range l.runs {
		n += int64(cap(r.starts)) * 4
	}
	return n
}

// GetEntry returns the value held for a depth and canonical key and
// whether it is held, as Book.GetEntry. The error is always nil: it is
// there for the Lookup interface.
func (l *Loaded) GetEntry(depth int, key uint64) (Value, bool, error) {
	if depth < 0 || depth >= len(l.runs) || l.runs[depth].starts == nil {
		return Value{}, false, nil
	}
	r := &l.runs[depth]
	h := splitmix.Mix(key)
	b := h >> r.shift // below len(starts)-1: shift leaves the bucket bits
	for i, end := r.starts[b], r.starts[b+1]; i < end; i++ {
		if k := l.keys[i]; k >= h {
			if k == h {
				return unpackValue(l.values[i]), true, nil
			}
			break
		}
	}
	return Value{}, false, nil
}

// Get returns the value of position p (or of its mirror image) and whether
// it is held. A position of another board is ErrBoardMismatch.
func (l *Loaded) Get(p solver.Position) (Value, bool, error) {
	if !l.board.Equal(p.Board()) {
		return Value{}, false, fmt.Errorf("%w: position of board %v in a book of %v", ErrBoardMismatch, p.Board(), l.board)
	}
	return l.GetEntry(p.Moves(), p.CanonicalKey())
}

// Entries returns every entry, by depth, and within a depth in the order
// of the loaded form (not of the keys).
func (l *Loaded) Entries() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		for d, r := range l.runs {
			for i := r.lo; i < r.hi; i++ {
				if !yield(Entry{Depth: d, Key: splitmix.Unmix(l.keys[i]), Value: unpackValue(l.values[i])}) {
					return
				}
			}
		}
	}
}
