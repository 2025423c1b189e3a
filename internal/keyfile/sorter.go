package keyfile

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
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
// the buffer, twice once a run is spilled or merged (the radix sort's
// room); disk, a run's pairs delta-coded (about 10 bytes a pair of
// position keys and paths), less the repeats within a buffer.
//
// A sorter told to SpillInBackground hands a full buffer to a goroutine
// that sorts and writes it, and goes on adding into a second buffer
// meanwhile: three buffers, and a second core at work.
//
// A sorter made with NewFirstSorter keeps, of the pairs of one key, only
// the one of the smallest value: all that a caller needs that takes the
// first pair of each key (the shortest path to a position, say). Pairs of
// one key met in one buffer then cost one pair of the run; Merge gives
// each key once. A sorter made with NewOrSorter does the same with the
// bitwise OR of the values of one key: the set of bits a key gathers from
// every pair added for it.
//
// A Sorter is used by one goroutine at a time.
type Sorter struct {
	dir     string
	id      uint64  // names its runs apart from other sorters' in dir
	combine combine // what becomes of the pairs of one key
	buf     []Pair  // being filled
	tmp     []Pair  // the radix sort's room
	runs    []string

	// background: spills are made by a goroutine. The spill in flight, if
	// any, owns the buffer it writes and tmp, and hands both back on
	// spilled; spare is the second buffer when no spill holds it.
	background bool
	spilled    chan spillDone
	spare      []Pair

	// failed is the error of a spill: every later Add and Merge returns
	// it, for the sorter lost pairs.
	failed error
}

// spillDone is what a spill hands back: its run, or its error, and the
// two buffers it used.
type spillDone struct {
	path string
	err  error
	a, b []Pair
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

// SpillInBackground makes the sorter spill its full buffers in a
// goroutine of its own, while Add goes on into a second buffer: for a
// caller that leaves a core idle (a job's planner). A spill's error then
// comes back from the next Add that spills, or from Merge. Call it before
// the first Add.
func (s *Sorter) SpillInBackground() { s.background = true }

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

// sortPairs sorts pairs by key then value, with tmp (as long as pairs) as
// room, and drops the repeats c drops: the exact ones, and for a first or
// OR sorter every pair of a key but one. It sorts by key with a radix sort
// (about four times as fast as a comparison sort of a million pairs), then
// keeps one pair of each run of one key (the smallest value, or the OR of
// the values), or sorts each such run by value and drops exact repeats.
// It returns the sorted pairs and the other slice, both of pairs' and
// tmp's arrays.
func sortPairs(pairs, tmp []Pair, c combine) (sorted, spare []Pair) {
	sorted, spare = radixSortByKey(pairs, tmp[:len(pairs)])
	out := sorted[:0]
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].Key == sorted[i].Key {
			j++
		}
		switch run := sorted[i:j]; {
		case len(run) == 1:
			out = append(out, run[0])
		case c != keepAll:
			p := run[0]
			for _, q := range run[1:] {
				if c == keepOr {
					p.Value |= q.Value
				} else {
					p.Value = min(p.Value, q.Value)
				}
			}
			out = append(out, p)
		default:
			slices.SortFunc(run, Pair.compare)
			for k, p := range run {
				if k == 0 || p != out[len(out)-1] {
					out = append(out, p)
				}
			}
		}
		i = j
	}
	return out, spare
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

// spill writes the full buffer, sorted, to a new run; in the background,
// it hands the buffer to a goroutine that does, once the spill before it
// is done, and takes the second buffer to fill.
func (s *Sorter) spill() error {
	if err := s.wait(); err != nil {
		return err
	}
	if s.tmp == nil {
		s.tmp = make([]Pair, 0, cap(s.buf))
	}
	path := filepath.Join(s.dir, fmt.Sprintf("run-%d-%06d", s.id, len(s.runs)))
	if !s.background {
		sorted, spare := sortPairs(s.buf, s.tmp, s.combine)
		if err := writeRun(path, sorted); err != nil {
			s.failed = err
			return err
		}
		s.runs = append(s.runs, path)
		s.buf, s.tmp = sorted[:0], spare[:0]
		return nil
	}
	if s.spare == nil {
		s.spare = make([]Pair, 0, cap(s.buf))
	}
	full, tmp, c := s.buf, s.tmp, s.combine
	s.buf, s.spare, s.tmp = s.spare[:0], nil, nil
	done := make(chan spillDone, 1)
	s.spilled = done
	go func() {
		sorted, spare := sortPairs(full, tmp, c)
		done <- spillDone{path: path, err: writeRun(path, sorted), a: sorted, b: spare}
	}()
	return nil
}

// wait waits for the spill in flight, if any, and takes its run and
// buffers back. It returns the error of any spill so far.
func (s *Sorter) wait() error {
	if s.spilled == nil {
		return s.failed
	}
	d := <-s.spilled
	s.spilled = nil
	s.spare, s.tmp = d.a[:0], d.b[:0]
	if d.err != nil {
		s.failed = d.err
		return d.err
	}
	s.runs = append(s.runs, d.path)
	return s.failed
}

// writeRun writes pairs, sorted, to a new run file at path; it removes
// the file if it cannot write it whole.
func writeRun(path string, pairs []Pair) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("keyfile: sorter run %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var buf [2 * binary.MaxVarintLen64]byte
	_, err = w.Write(buf[:binary.PutUvarint(buf[:], uint64(len(pairs)))])
	last := uint64(0)
	for _, p := range pairs {
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
	if err := s.wait(); err != nil {
		return err
	}
	s.spare = nil // not needed to merge: memory back while it runs
	if s.tmp == nil {
		s.tmp = make([]Pair, 0, cap(s.buf))
	}
	s.buf, s.tmp = sortPairs(s.buf, s.tmp, s.combine)
	if len(s.runs) == 0 {
		for _, p := range s.buf {
			if err := fn(p.Key, p.Value); err != nil {
				return err
			}
		}
		return nil
	}
	// The buffer merges with the runs as one more, in memory.
	sources := []*runSource{{mem: s.buf}}
	for _, path := range s.runs {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		src := &runSource{path: path, f: f, buf: make([]byte, runReadBytes)}
		if src.left, err = src.uvarint(); err != nil {
			return fmt.Errorf("keyfile: sorter run %s: %w: no count: %v", path, ErrFormat, err)
		}
		sources = append(sources, src)
	}
	h := mergeHeap(make([]mergeItem, 0, len(sources)))
	for _, src := range sources {
		if src.next() {
			h = append(h, mergeItem{pair: src.pair, src: src})
		} else if src.err != nil {
			return src.err
		}
	}
	h.init()
	var last Pair
	started := false
	for len(h) > 0 {
		top := &h[0]
		if !started || top.pair != last && !(s.combine == keepFirst && top.pair.Key == last.Key) {
			if err := fn(top.pair.Key, top.pair.Value); err != nil {
				return err
			}
			last, started = top.pair, true
		}
		if top.src.next() {
			top.pair = top.src.pair
		} else {
			if err := top.src.err; err != nil {
				return err
			}
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		h.down(0)
	}
	return nil
}

// Runs returns the number of runs spilled so far, once the spill in
// flight is done.
func (s *Sorter) Runs() int {
	s.wait() // an error stays in s.failed, for Add and Merge
	return len(s.runs)
}

// Close removes the runs and empties the sorter, which can be used again.
func (s *Sorter) Close() {
	s.wait()
	for _, path := range s.runs {
		os.Remove(path)
	}
	s.runs = nil
	s.buf = s.buf[:0]
	s.failed = nil
}

// runReadBytes is the size of a run's read buffer.
const runReadBytes = 1 << 16

// runSource is a sorted run being merged: a run file (see # Runs), read
// through buf, or the buffer in memory, mem.
type runSource struct {
	mem []Pair
	i   int // of mem: 1 + the index of the current pair

	path string
	f    *os.File
	buf  []byte
	b    []byte // the bytes of buf not decoded yet
	eof  bool   // f has no more bytes than those read
	left uint64 // pairs not read yet

	pair Pair
	err  error
}

// next moves to the next pair, and reports whether there is one; at the
// end, err says whether the run was whole.
func (r *runSource) next() bool {
	if r.f == nil {
		r.i++
		if r.i > len(r.mem) {
			return false
		}
		r.pair = r.mem[r.i-1]
		return true
	}
	if r.left == 0 {
		if len(r.b) == 0 && !r.eof {
			if err := r.fill(); err != nil {
				r.err = fmt.Errorf("keyfile: sorter run %s: %w", r.path, err)
				return false
			}
		}
		if len(r.b) > 0 {
			r.err = fmt.Errorf("keyfile: sorter run %s: %w: bytes after its last pair", r.path, ErrFormat)
		}
		return false
	}
	delta, err := r.uvarint()
	if err == nil {
		r.pair.Value, err = r.uvarint()
	}
	if err != nil {
		r.err = fmt.Errorf("keyfile: sorter run %s: %w: %d pairs missing: %v", r.path, ErrFormat, r.left, err)
		return false
	}
	r.left--
	r.pair.Key += delta
	return true
}

// uvarint decodes the next unsigned varint of the run.
func (r *runSource) uvarint() (uint64, error) {
	if len(r.b) < binary.MaxVarintLen64 && !r.eof {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	v, n := binary.Uvarint(r.b)
	switch {
	case n == 0:
		return 0, io.ErrUnexpectedEOF
	case n < 0:
		return 0, errors.New("a varint overflows 64 bits")
	}
	r.b = r.b[n:]
	return v, nil
}

// fill moves the bytes not decoded to the front of buf and reads more
// after them, up to a full buffer or the end of the file.
func (r *runSource) fill() error {
	n := copy(r.buf, r.b)
	for n < len(r.buf) && !r.eof {
		m, err := r.f.Read(r.buf[n:])
		n += m
		if err == io.EOF {
			r.eof = true
		} else if err != nil {
			r.b = r.buf[:n]
			return err
		}
	}
	r.b = r.buf[:n]
	return nil
}

// mergeItem is a run being merged, with its current pair.
type mergeItem struct {
	pair Pair
	src  *runSource
}

// mergeHeap is a binary min-heap of the runs by their current pair, by key
// then value.
type mergeHeap []mergeItem

// less reports whether item i's pair comes before item j's: Pair.compare
// written out, for this is the merge's hottest call.
func (h mergeHeap) less(i, j int) bool {
	a, b := h[i].pair, h[j].pair
	return a.Key < b.Key || a.Key == b.Key && a.Value < b.Value
}

// init orders the heap.
func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// down moves item i down to its place.
func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
