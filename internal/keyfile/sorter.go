package keyfile

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
)

// Sorter sorts pairs of a key and a value added in any order, by key then
// value, and drops exact repeats, with at most a set number of pairs in
// memory: when its buffer is full it sorts it and writes it to a run file
// of its directory; Merge merges the runs. Memory is 16 bytes a pair of
// the buffer (32 for a first or OR sorter, whose radix sort needs a
// second buffer); disk, a run's pairs delta-coded (about 10 bytes a pair
// of position keys and paths), less the repeats within a buffer.
//
// A sorter made with NewFirstSorter keeps, of the pairs of one key, only
// the one of the smallest value: all that a caller needs that takes the
// first pair of each key (the shortest path to a position, say). Pairs of
// one key met in one buffer then cost one pair of the run; Merge gives
// each key once. A sorter made with NewOrSorter does the same with the
// bitwise OR of the values of one key: the set of bits a key gathers from
// every pair added for it.
type Sorter struct {
	dir     string
	id      uint64  // names its runs apart from other sorters' in dir
	combine combine // what becomes of the pairs of one key
	buf     []Pair
	tmp     []Pair // a first or OR sorter's room for its radix sort, as large as buf
	runs    []string
}

// combine is what a sorter does with the pairs of one key.
type combine uint8

const (
	keepAll   combine = iota // every distinct pair
	keepFirst                // the pair of the smallest value
	keepOr                   // one pair, the OR of the values
)

// sorters counts the sorters made, to name their runs.
var sorters atomic.Uint64

// Pair is a key and its value: a position's key and the path to it, say.
type Pair struct{ Key, Value uint64 }

// compare orders pairs by key, then value.
func (p Pair) compare(q Pair) int {
	if c := cmp.Compare(p.Key, q.Key); c != 0 {
		return c
	}
	return cmp.Compare(p.Value, q.Value)
}

// NewSorter returns a sorter that keeps at most memPairs pairs in memory
// and its runs in dir, which must exist.
func NewSorter(dir string, memPairs int) *Sorter {
	return &Sorter{dir: dir, id: sorters.Add(1), buf: make([]Pair, 0, max(memPairs, 1))}
}

// NewFirstSorter returns a sorter as NewSorter does that keeps only the
// pair of the smallest value of each key.
func NewFirstSorter(dir string, memPairs int) *Sorter {
	s := NewSorter(dir, memPairs)
	s.combine = keepFirst
	return s
}

// NewOrSorter returns a sorter as NewSorter does that gives each key once,
// with the bitwise OR of every value added for it.
func NewOrSorter(dir string, memPairs int) *Sorter {
	s := NewSorter(dir, memPairs)
	s.combine = keepOr
	return s
}

// Add adds the pair of key and value.
func (s *Sorter) Add(key, value uint64) error {
	if len(s.buf) == cap(s.buf) {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.buf = append(s.buf, Pair{key, value})
	return nil
}

// sortBuffer sorts the buffer and drops its repeats: the exact ones, and
// for a first or OR sorter every pair of a key but one. Those sort by key
// alone, with a radix sort (about four times as fast as a comparison sort
// of a million pairs), then keep one pair of each run of one key: the
// smallest value, or the OR of the values.
func (s *Sorter) sortBuffer() {
	if s.combine == keepAll {
		slices.SortFunc(s.buf, Pair.compare)
		s.buf = slices.Compact(s.buf)
		return
	}
	if cap(s.tmp) < len(s.buf) {
		s.tmp = make([]Pair, 0, cap(s.buf))
	}
	sorted, spare := radixSortByKey(s.buf, s.tmp[:len(s.buf)])
	out := sorted[:0]
	for i, p := range sorted {
		if i > 0 && p.Key == out[len(out)-1].Key {
			last := &out[len(out)-1]
			if s.combine == keepOr {
				last.Value |= p.Value
			} else if p.Value < last.Value {
				last.Value = p.Value
			}
			continue
		}
		out = append(out, p)
	}
	s.buf, s.tmp = out, spare[:0]
}

// radixBits is the width of a digit of radixSortByKey: 2^11 counters fit
// the CPU's first cache.
const radixBits = 11

// radixSortByKey sorts pairs by key, stably, a digit of radixBits at a
// time from the lowest, each pass a counting sort from one slice into the
// other (tmp, as long as pairs): only the digits where the keys differ
// from the smallest are sorted. It returns the slice holding the sorted
// pairs and the other one.
func radixSortByKey(pairs, tmp []Pair) (sorted, spare []Pair) {
	if len(pairs) == 0 {
		return pairs, tmp
	}
	lo, hi := pairs[0].Key, pairs[0].Key
	for _, p := range pairs {
		lo, hi = min(lo, p.Key), max(hi, p.Key)
	}
	const mask = 1<<radixBits - 1
	src, dst := pairs, tmp
	for shift := 0; shift < bits.Len64(hi-lo); shift += radixBits {
		var count [1<<radixBits + 1]int
		for _, p := range src {
			count[(p.Key-lo)>>shift&mask+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, p := range src {
			d := (p.Key - lo) >> shift & mask
			dst[count[d]] = p
			count[d]++
		}
		src, dst = dst, src
	}
	return src, dst
}

// # Runs
//
// A run is a temporary file of sorted pairs: their number, then each pair
// as the difference of its key from the key before (the first from 0) and
// its value, all as unsigned varints (encoding/binary's), so that keys
// close together take a few bytes. It is written once and read once, by
// the sorter that wrote it, and gone with a crash; a run shorter or longer
// than its number says is an error (ErrFormat), never pairs made up.

// spill writes the buffer, sorted, to a new run.
func (s *Sorter) spill() error {
	s.sortBuffer()
	path := filepath.Join(s.dir, fmt.Sprintf("run-%d-%06d", s.id, len(s.runs)))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var buf [2 * binary.MaxVarintLen64]byte
	_, err = w.Write(buf[:binary.PutUvarint(buf[:], uint64(len(s.buf)))])
	last := uint64(0)
	for _, p := range s.buf {
		n := binary.PutUvarint(buf[:], p.Key-last)
		n += binary.PutUvarint(buf[n:], p.Value)
		if _, err = w.Write(buf[:n]); err != nil {
			break
		}
		last = p.Key
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("keyfile: sorter run %s: %w", path, err)
	}
	s.runs = append(s.runs, path)
	s.buf = s.buf[:0]
	return nil
}

// Merge calls fn with every pair added, once, in order, then removes the
// runs; the sorter is then empty. It stops at the first error fn returns.
func (s *Sorter) Merge(fn func(key, value uint64) error) error {
	defer s.Close()
	if s.combine == keepOr {
		// Pairs of one key come one after the other, smallest value
		// first: gather them, and give the key once its last is met.
		var key, value uint64
		have := false
		each := fn
		fn = func(k, v uint64) error {
			if have && k == key {
				value |= v
				return nil
			}
			if have {
				if err := each(key, value); err != nil {
					return err
				}
			}
			key, value, have = k, v, true
			return nil
		}
		if err := s.merge(fn); err != nil || !have {
			return err
		}
		return each(key, value)
	}
	return s.merge(fn)
}

// merge is Merge: fn with every pair, in order, the repeats of keepAll
// and the later pairs of a key of keepFirst dropped.
func (s *Sorter) merge(fn func(key, value uint64) error) error {
	s.sortBuffer()
	if len(s.runs) == 0 {
		for _, p := range s.buf {
			if err := fn(p.Key, p.Value); err != nil {
				return err
			}
		}
		return nil
	}
	// The buffer merges with the runs as one more, in memory.
	sources := []source{&memSource{pairs: s.buf}}
	for _, path := range s.runs {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		src := &runSource{path: path, r: bufio.NewReaderSize(f, 1<<16)}
		if src.left, err = binary.ReadUvarint(src.r); err != nil {
			return fmt.Errorf("keyfile: sorter run %s: %w: no count: %v", path, ErrFormat, err)
		}
		sources = append(sources, src)
	}
	h := &mergeHeap{}
	for _, src := range sources {
		if src.Next() {
			h.items = append(h.items, mergeItem{pair: src.Pair(), src: src})
		} else if err := src.Err(); err != nil {
			return err
		}
	}
	heap.Init(h)
	var last Pair
	started := false
	for h.Len() > 0 {
		top := &h.items[0]
		if !started || top.pair != last && !(s.combine == keepFirst && top.pair.Key == last.Key) {
			if err := fn(top.pair.Key, top.pair.Value); err != nil {
				return err
			}
			last, started = top.pair, true
		}
		if top.src.Next() {
			top.pair = top.src.Pair()
			heap.Fix(h, 0)
			continue
		}
		if err := top.src.Err(); err != nil {
			return err
		}
		heap.Pop(h)
	}
	return nil
}

// Runs returns the number of runs spilled so far.
func (s *Sorter) Runs() int { return len(s.runs) }

// Close removes the runs and empties the sorter.
func (s *Sorter) Close() {
	for _, path := range s.runs {
		os.Remove(path)
	}
	s.runs = nil
	s.buf = s.buf[:0]
}

// source is a sorted run being merged: a run file, or the buffer.
type source interface {
	Next() bool
	Pair() Pair
	Err() error
}

// runSource is a sorted run in a file (see # Runs).
type runSource struct {
	path string
	r    *bufio.Reader
	left uint64 // pairs not read yet
	pair Pair
	err  error
}

func (r *runSource) Next() bool {
	if r.left == 0 {
		if _, err := r.r.ReadByte(); err != io.EOF {
			r.err = fmt.Errorf("keyfile: sorter run %s: %w: bytes after its last pair", r.path, ErrFormat)
		}
		return false
	}
	delta, err := binary.ReadUvarint(r.r)
	if err == nil {
		r.pair.Value, err = binary.ReadUvarint(r.r)
	}
	if err != nil {
		r.err = fmt.Errorf("keyfile: sorter run %s: %w: %d pairs missing: %v", r.path, ErrFormat, r.left, err)
		return false
	}
	r.left--
	r.pair.Key += delta
	return true
}
func (r *runSource) Pair() Pair { return r.pair }
func (r *runSource) Err() error { return r.err }

// memSource is a sorted run in memory.
type memSource struct {
	pairs []Pair
	i     int // 1 + the index of the current pair
}

func (m *memSource) Next() bool { m.i++; return m.i <= len(m.pairs) }
func (m *memSource) Pair() Pair { return m.pairs[m.i-1] }
func (m *memSource) Err() error { return nil }

// mergeItem is a run being merged, with its current pair.
type mergeItem struct {
	pair Pair
	src  source
}

// mergeHeap orders the runs by their current pair.
type mergeHeap struct{ items []mergeItem }

func (h *mergeHeap) Len() int           { return len(h.items) }
func (h *mergeHeap) Less(i, j int) bool { return h.items[i].pair.compare(h.items[j].pair) < 0 }
func (h *mergeHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(x any)         { h.items = append(h.items, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
