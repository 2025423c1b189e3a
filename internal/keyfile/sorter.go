package keyfile

import (
	"cmp"
	"container/heap"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
)

// Sorter sorts pairs of a key and a value added in any order, by key then
// value, and drops exact repeats, with at most a set number of pairs in
// memory: when its buffer is full it sorts it and writes it to a run file
// of its directory; Merge merges the runs. Memory is 16 bytes a pair of
// the buffer; disk, 16 bytes a pair added, less the repeats within a
// buffer.
type Sorter struct {
	dir  string
	id   uint64 // names its runs apart from other sorters' in dir
	buf  []Pair
	runs []string
}

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

// sortBuffer sorts the buffer and drops its repeats.
func (s *Sorter) sortBuffer() {
	slices.SortFunc(s.buf, Pair.compare)
	s.buf = slices.Compact(s.buf)
}

// spill writes the buffer, sorted, to a new run: a list of key, value,
// key, value...
func (s *Sorter) spill() error {
	s.sortBuffer()
	path := filepath.Join(s.dir, fmt.Sprintf("run-%d-%06d", s.id, len(s.runs)))
	w, err := create(path, true, false) // a run is gone with a crash anyway
	if err != nil {
		return err
	}
	for _, p := range s.buf {
		if err := w.Add(p.Key); err != nil {
			w.Abort()
			return err
		}
		if err := w.Add(p.Value); err != nil {
			w.Abort()
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	s.runs = append(s.runs, path)
	s.buf = s.buf[:0]
	return nil
}

// Merge calls fn with every pair added, once, in order, then removes the
// runs; the sorter is then empty. It stops at the first error fn returns.
func (s *Sorter) Merge(fn func(key, value uint64) error) error {
	defer s.Close()
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
		kf, err := OpenList(path)
		if err != nil {
			return err
		}
		defer kf.Close()
		if kf.Len()%2 != 0 {
			return fmt.Errorf("keyfile %s: %w: a run of %d values, not pairs", path, ErrFormat, kf.Len())
		}
		sources = append(sources, &runSource{sc: kf.Scan(0, kf.Len())})
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
		if !started || top.pair != last {
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

// runSource is a sorted run in a file.
type runSource struct {
	sc   *Scanner
	pair Pair
}

func (r *runSource) Next() bool {
	if !r.sc.Next() {
		return false
	}
	r.pair.Key = r.sc.Key()
	if !r.sc.Next() {
		return false
	}
	r.pair.Value = r.sc.Key()
	return true
}
func (r *runSource) Pair() Pair { return r.pair }
func (r *runSource) Err() error { return r.sc.Err() }

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
