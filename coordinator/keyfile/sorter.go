package keyfile

import (
	"container/heap"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Sorter sorts keys added in any order and drops repeats, with at most
// a set number of keys in memory: when its buffer is full it sorts it and
// writes it to a run file of its directory; Merge merges the runs. Memory
// is 8 bytes a key of the buffer; disk, 8 bytes a key added, less the
// repeats within a buffer.
type Sorter struct {
	dir  string
	buf  []uint64
	runs []string
}

// NewSorter returns a sorter that keeps at most memKeys keys in memory and
// its runs in dir, which must exist.
func NewSorter(dir string, memKeys int) *Sorter {
	return &Sorter{dir: dir, buf: make([]uint64, 0, max(memKeys, 1))}
}

// Add adds key.
func (s *Sorter) Add(key uint64) error {
	if len(s.buf) == cap(s.buf) {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.buf = append(s.buf, key)
	return nil
}

// sortBuffer sorts the buffer and drops its repeats.
func (s *Sorter) sortBuffer() {
	slices.Sort(s.buf)
	s.buf = slices.Compact(s.buf)
}

// spill writes the buffer, sorted, to a new run.
func (s *Sorter) spill() error {
	s.sortBuffer()
	path := filepath.Join(s.dir, fmt.Sprintf("run-%06d", len(s.runs)))
	w, err := create(path, false) // a run is gone with a crash anyway
	if err != nil {
		return err
	}
	for _, k := range s.buf {
		if err := w.Add(k); err != nil {
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

// Merge calls fn with every key added, once, in increasing order, then
// removes the runs; the sorter is then empty. It stops at the first error
// fn returns.
func (s *Sorter) Merge(fn func(key uint64) error) error {
	defer s.Close()
	s.sortBuffer()
	if len(s.runs) == 0 {
		for _, k := range s.buf {
			if err := fn(k); err != nil {
				return err
			}
		}
		return nil
	}
	// The buffer merges with the runs as one more, in memory.
	sources := []source{&memSource{keys: s.buf}}
	for _, path := range s.runs {
		kf, err := Open(path)
		if err != nil {
			return err
		}
		defer kf.Close()
		sources = append(sources, kf.Scan(0, kf.Len()))
	}
	h := &mergeHeap{}
	for _, src := range sources {
		if src.Next() {
			h.items = append(h.items, mergeItem{key: src.Key(), src: src})
		} else if err := src.Err(); err != nil {
			return err
		}
	}
	heap.Init(h)
	last, started := uint64(0), false
	for h.Len() > 0 {
		top := &h.items[0]
		if !started || top.key != last {
			if err := fn(top.key); err != nil {
				return err
			}
			last, started = top.key, true
		}
		if top.src.Next() {
			top.key = top.src.Key()
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

// source is a sorted run being merged: a *Scanner, or the buffer.
type source interface {
	Next() bool
	Key() uint64
	Err() error
}

// memSource is a sorted run in memory.
type memSource struct {
	keys []uint64
	i    int // 1 + the index of the current key
}

func (m *memSource) Next() bool  { m.i++; return m.i <= len(m.keys) }
func (m *memSource) Key() uint64 { return m.keys[m.i-1] }
func (m *memSource) Err() error  { return nil }

// mergeItem is a run being merged, with its current key.
type mergeItem struct {
	key uint64
	src source
}

// mergeHeap orders the runs by their current key.
type mergeHeap struct{ items []mergeItem }

func (h *mergeHeap) Len() int           { return len(h.items) }
func (h *mergeHeap) Less(i, j int) bool { return h.items[i].key < h.items[j].key }
func (h *mergeHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(x any)         { h.items = append(h.items, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
