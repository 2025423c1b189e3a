package book

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math"
	"math/bits"
	"slices"

	"github.com/c4book/c4book/solver"
)

// Loaded is a book read into memory, read-only: the fastest way to look
// positions up, for seeding solvers (see Loaded.NewOracle). It holds every
// entry it was loaded with and nothing else, and is safe for concurrent
// use.
//
// Layout. The entries sit in two parallel arrays sorted by (depth,
// canonical key), the order of the book's keys: keys []uint64, the
// canonical keys, and values []byte, each entry's score and origin packed
// in one byte (packValue). Each depth is a contiguous run of the arrays,
// with an index of the top bits of its keys: the run's keys, less its
// smallest, are cut into about one bucket for every loadedBucketKeys
// entries by their top bits, and the index holds where each bucket starts.
// A lookup reads the two bucket bounds and binary-searches the few keys
// between them: a handful of cache lines, against the ~26 of a binary
// search of a run of millions (BenchmarkLoaded_GetEntry).
//
// Cost: 8 bytes of key and 1 of value an entry, and 4 bytes a bucket,
// about 1 byte an entry (Bytes). Keys are not compressed: a lookup finds
// one by its position in the array, which a varying-length code would lose.
type Loaded struct {
	board  *solver.Board
	depth  int // the deepest depth held, -1 if none
	keys   []uint64
	values []byte
	runs   []loadedRun // one per depth, 0..board.Cells()
}

// loadedRun is the index of one depth's entries: keys[lo:hi].
type loadedRun struct {
	lo, hi int
	min    uint64   // keys[lo], the smallest key of the depth
	shift  uint     // the bucket of a key is (key-min) >> shift
	starts []uint32 // bucket b is keys[starts[b]:starts[b+1]]
}

// loadedBucketKeys is the mean number of keys a bucket of the index holds,
// at least; a power of two. With 4, the index costs about a byte an entry.
const loadedBucketKeys = 4

// maxLoaded is the most entries a Loaded holds: the index counts them in
// uint32.
const maxLoaded = math.MaxUint32

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
// <= 32. So 6 bits hold the score and 2 the origin: the loaded form is as
// lossless as the book.
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
	case n == maxLoaded:
		return fmt.Errorf("load: more than %d entries", maxLoaded)
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

// done builds the index of each depth and returns the Loaded.
func (lb *loadedBuilder) done() *Loaded {
	l := lb.l
	if cap(l.keys) > len(l.keys)+len(l.keys)/8 {
		l.keys = slices.Clone(l.keys)
		l.values = slices.Clone(l.values)
	}
	for d := range l.runs {
		r := &l.runs[d]
		n := r.hi - r.lo
		if n == 0 {
			continue
		}
		keys := l.keys[r.lo:r.hi]
		r.min = keys[0]
		// About n/loadedBucketKeys buckets, over the bits in which the
		// keys of the depth differ.
		bucketBits := max(0, bits.Len(uint(n))-bits.Len(loadedBucketKeys-1))
		r.shift = uint(max(0, bits.Len64(keys[n-1]-r.min)-bucketBits))
		buckets := int((keys[n-1]-r.min)>>r.shift) + 1
		r.starts = make([]uint32, buckets+1)
		i := 0
		for b := range r.starts {
			for i < n && int((keys[i]-r.min)>>r.shift) < b {
				i++
			}
			r.starts[b] = uint32(r.lo + i)
		}
	}
	return l
}

// Load reads every entry of an open book into memory, from one snapshot
// of it. An entry that cannot be decoded fails it with a *CorruptError.
func Load(b *Book) (*Loaded, error) {
	if err := b.check(false); err != nil {
		return nil, err
	}
	snap := b.db.NewSnapshot()
	defer snap.Close()
	lower, upper := []byte{0}, []byte{byte(b.board.Cells() + 1)}
	n := 0
	err := scanReader(snap, lower, upper, func(k, v []byte) error {
		n++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", b.path, err)
	}
	lb := newLoadedBuilder(b.board, min(n, maxLoaded))
	err = scanReader(snap, lower, upper, func(k, v []byte) error {
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

// LoadBinary reads a binary book file (see ExportBinary) into memory,
// checking it as BinaryReader does. When r is a file, its size must be the
// one its header gives.
func LoadBinary(r io.Reader) (*Loaded, error) {
	br, err := NewBinaryReader(r)
	if err != nil {
		return nil, err
	}
	h := br.Header()
	if h.Records > maxLoaded {
		return nil, fmt.Errorf("load: %d records, more than %d", h.Records, maxLoaded)
	}
	// The header's count is trusted for the arrays' size only once the
	// file's size confirms it; otherwise they grow as records come.
	capacity := int(min(h.Records, 1<<16))
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if fi.Size() != h.Size() {
				return nil, &BinaryError{Record: -1, Offset: binaryCountIdx,
					Reason: fmt.Sprintf("%d records make a file of %d bytes, the file has %d", h.Records, h.Size(), fi.Size())}
			}
			capacity = int(h.Records)
		}
	}
	lb := newLoadedBuilder(h.Board, capacity)
	for {
		e, err := br.Next()
		if errors.Is(err, io.EOF) {
			return lb.done(), nil
		}
		if err != nil {
			return nil, err
		}
		if err := lb.add(e); err != nil {
			return nil, err
		}
	}
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
	if depth < 0 || depth >= len(l.runs) {
		return Value{}, false, nil
	}
	r := &l.runs[depth]
	if r.starts == nil || key < r.min {
		return Value{}, false, nil
	}
	b := (key - r.min) >> r.shift
	if b >= uint64(len(r.starts)-1) {
		return Value{}, false, nil
	}
	lo, hi := int(r.starts[b]), int(r.starts[b+1])
	i, ok := slices.BinarySearch(l.keys[lo:hi], key)
	if !ok {
		return Value{}, false, nil
	}
	return unpackValue(l.values[lo+i]), true, nil
}

// Get returns the value of position p (or of its mirror image) and whether
// it is held. A position of another board is ErrBoardMismatch.
func (l *Loaded) Get(p solver.Position) (Value, bool, error) {
	if !l.board.Equal(p.Board()) {
		return Value{}, false, fmt.Errorf("%w: position of board %v in a book of %v", ErrBoardMismatch, p.Board(), l.board)
	}
	return l.GetEntry(p.Moves(), p.CanonicalKey())
}

// Entries returns every entry, in key order.
func (l *Loaded) Entries() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		for d, r := range l.runs {
			for i := r.lo; i < r.hi; i++ {
				if !yield(Entry{Depth: d, Key: l.keys[i], Value: unpackValue(l.values[i])}) {
					return
				}
			}
		}
	}
}
