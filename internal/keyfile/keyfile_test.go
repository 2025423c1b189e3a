package keyfile

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWriter_File(t *testing.T) {
	path := filepath.Join(t.TempDir(), "level")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	keys := []uint64{1, 5, 9, 1 << 40, ^uint64(0)}
	for _, k := range keys {
		if err := w.Add(k); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Add(9); err == nil {
		t.Error("Add of a key not above the last: no error")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file is under its name before Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	kf, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	if kf.Len() != int64(len(keys)) {
		t.Fatalf("Len = %d, want %d", kf.Len(), len(keys))
	}
	got, err := kf.Keys(nil, 1, 4)
	if err != nil || !slices.Equal(got, keys[1:4]) {
		t.Errorf("Keys(1, 4) = %v, %v", got, err)
	}
	var scanned []uint64
	sc := kf.Scan(2, 5)
	for sc.Next() {
		if sc.Index() != int64(2+len(scanned)) {
			t.Errorf("Index %d at key %d", sc.Index(), len(scanned))
		}
		scanned = append(scanned, sc.Key())
	}
	if sc.Err() != nil || !slices.Equal(scanned, keys[2:]) {
		t.Errorf("Scan(2, 5) = %v, %v", scanned, sc.Err())
	}
	if _, err := kf.Keys(nil, 3, 9); err == nil {
		t.Error("Keys past the end: no error")
	}
}

// TestOpen_errors: a file cut short, or not a key file, is refused.
func TestOpen_errors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k")
	w, _ := Create(path)
	for k := range uint64(10) {
		w.Add(k)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for name, bad := range map[string][]byte{
		"cut short":  data[:len(data)-3],
		"not a file": []byte("moves score\n4453 -2\n"),
		"empty":      nil,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, bad, 0o644)
		if _, err := Open(p); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: Open = %v, want ErrFormat", name, err)
		}
	}
	w, _ = Create(filepath.Join(dir, "aborted"))
	w.Add(1)
	w.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 4 { // k and the three bad ones
		t.Errorf("files left: %v", entries)
	}
}

// TestSorter: pairs added in any order, with repeats, come out once each
// in order of key then value, spilled or not; the runs are removed.
func TestSorter(t *testing.T) {
	for _, background := range []bool{false, true} {
		t.Run(fmt.Sprintf("background=%v", background), func(t *testing.T) { testSorter(t, background) })
	}
}

func testSorter(t *testing.T, background bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, memPairs := range []int{1, 97, 1000, 1 << 20} {
		dir := t.TempDir()
		s := NewSorter(dir, memPairs)
		if background {
			s.SpillInBackground()
		}
		want := map[Pair]bool{}
		n := 5000
		if memPairs == 1 {
			n = 50 // a run a pair
		}
		for range n {
			p := Pair{rng.Uint64N(3000) << 20, rng.Uint64N(3)}
			want[p] = true
			if err := s.Add(p.Key, p.Value); err != nil {
				t.Fatal(err)
			}
		}
		var got []Pair
		if err := s.Merge(func(k, v uint64) error { got = append(got, Pair{k, v}); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.IsSortedFunc(got, Pair.compare) || len(got) != len(want) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("memPairs %d: %d pairs out, want %d distinct in order", memPairs, len(got), len(want))
		}
		for _, p := range got {
			if !want[p] {
				t.Errorf("memPairs %d: pair %v out, never added", memPairs, p)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("memPairs %d: runs left after Merge: %d", memPairs, len(entries))
		}
	}
}

// TestCombiningSorters: a first sorter gives each key once with the
// smallest value added for it, an OR sorter with the OR of its values,
// whether the key's pairs met in one buffer or in several runs;
// full-width keys and values survive the runs' coding; an empty sorter
// gives nothing.
func TestCombiningSorters(t *testing.T) {
	for _, c := range []struct {
		name    string
		new     func(dir string, memPairs int) *Sorter
		value   func(rng *rand.Rand) uint64 // of a pair
		combine func(old uint64, ok bool, v uint64) uint64
	}{
		{"first", NewFirstSorter, func(rng *rand.Rand) uint64 { return rng.Uint64() >> rng.IntN(64) },
			func(old uint64, ok bool, v uint64) uint64 {
				if ok {
					return min(old, v)
				}
				return v
			}},
		{"or", NewOrSorter, func(rng *rand.Rand) uint64 { return uint64(1) << rng.IntN(64) },
			func(old uint64, _ bool, v uint64) uint64 { return old | v }},
	} {
		rng := rand.New(rand.NewPCG(3, 4))
		for i, memPairs := range []int{1, 97, 1000, 1 << 20, 1, 97} {
			s := c.new(t.TempDir(), memPairs)
			if i >= 4 {
				s.SpillInBackground()
			}
			want := map[uint64]uint64{}
			n := 5000
			if memPairs == 1 {
				n = 50
			}
			for i := range n {
				k, v := rng.Uint64N(300)<<50|rng.Uint64N(2), c.value(rng)
				if i%3 == 0 {
					k, v = ^uint64(0)-uint64(i%5), ^uint64(0)-uint64(i%7) // the largest keys and values
				}
				old, ok := want[k]
				want[k] = c.combine(old, ok, v)
				if err := s.Add(k, v); err != nil {
					t.Fatal(err)
				}
			}
			var keys []uint64
			err := s.Merge(func(k, v uint64) error {
				if v != want[k] {
					t.Errorf("%s, memPairs %d: key %#x with %#x, want %#x", c.name, memPairs, k, v, want[k])
				}
				keys = append(keys, k)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.IsSorted(keys) || len(keys) != len(want) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
				t.Errorf("%s, memPairs %d: %d keys out, want %d, each once, in order", c.name, memPairs, len(keys), len(want))
			}
		}
		if err := c.new(t.TempDir(), 4).Merge(func(k, v uint64) error {
			t.Errorf("%s: an empty sorter gave %#x, %#x", c.name, k, v)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRadixSortByKey: pairs come out sorted by key, those of one key in
// the order they went in (the values here are their places), for keys
// spread over all 64 bits, over a few, and all equal.
func TestRadixSortByKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, keyBits := range []uint{64, 49, 20, 3, 0} {
		for _, n := range []int{0, 1, 2, 1000, 100000} {
			pairs := make([]Pair, n)
			for i := range pairs {
				k := rng.Uint64()
				if keyBits < 64 {
					k &= 1<<keyBits - 1
				}
				pairs[i] = Pair{Key: k + 12345, Value: uint64(i)}
			}
			want := slices.Clone(pairs)
			slices.SortStableFunc(want, func(a, b Pair) int { return cmp.Compare(a.Key, b.Key) })
			got, spare := radixSortByKey(pairs, make([]Pair, n))
			if !slices.Equal(got, want) || len(spare) != n {
				t.Fatalf("%d keys of %d bits: not sorted stably by key", n, keyBits)
			}
		}
	}
}

// TestSorter_damagedRun: a run cut short by a byte or by a whole pair, or
// with a byte more, is an error of Merge, not pairs made up.
func TestSorter_damagedRun(t *testing.T) {
	for _, change := range []int64{-1, -12, 1} { // a pair takes 12 bytes here
		dir := t.TempDir()
		s := NewSorter(dir, 4)
		for i := range 10 {
			if err := s.Add(uint64(i)<<40, uint64(i)<<40); err != nil {
				t.Fatal(err)
			}
		}
		s.Runs() // the last spill done
		runs, _ := filepath.Glob(filepath.Join(dir, "run-*"))
		if len(runs) == 0 {
			t.Fatal("no run spilled")
		}
		st, _ := os.Stat(runs[0])
		if err := os.Truncate(runs[0], st.Size()+change); err != nil {
			t.Fatal(err)
		}
		err := s.Merge(func(k, v uint64) error { return nil })
		if !errors.Is(err, ErrFormat) {
			t.Errorf("Merge of a run of %d bytes, written %d: %v, want ErrFormat", st.Size()+change, st.Size(), err)
		}
	}
}

// TestSorter_spillFails: a run that cannot be written is an error of the
// Add that spills it (in the background, of the Add that spills after it,
// or of Merge), never pairs lost in silence; a sorter merged is empty and
// takes pairs again.
func TestSorter_spillFails(t *testing.T) {
	for _, c := range []struct {
		adds       int
		background bool
	}{{5, false}, {5, true}, {20, true}} { // in the background, the error from Merge; from Add
		dir := filepath.Join(t.TempDir(), "gone")
		s := NewFirstSorter(dir, 4) // dir does not exist: every run fails
		if c.background {
			s.SpillInBackground()
		}
		adds := c.adds
		var err error
		for i := 0; i < adds && err == nil; i++ {
			err = s.Add(uint64(i), 0)
		}
		s.Runs() // waits for the spill: its error must stay for Merge
		if err == nil {
			err = s.Merge(func(k, v uint64) error { return nil })
		}
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%d pairs added to a sorter whose runs cannot be written (background %v): %v, want the run's error", adds, c.background, err)
		}
		s.Close()
	}

	s := NewSorter(t.TempDir(), 3)
	s.SpillInBackground()
	for round := range 2 {
		for i := range 10 {
			if err := s.Add(uint64(10-i), uint64(round)); err != nil {
				t.Fatal(err)
			}
		}
		var got []Pair
		if err := s.Merge(func(k, v uint64) error { got = append(got, Pair{k, v}); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 10 || got[0] != (Pair{1, uint64(round)}) || !slices.IsSortedFunc(got, Pair.compare) {
			t.Errorf("round %d: %v, want the 10 pairs of the round in order", round, got)
		}
	}
}

// TestList: a list keeps its values in the order added, repeats
// included, and is not opened as a key file, nor a key file as a list.
func TestList(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "order")
	w, err := CreateList(path)
	if err != nil {
		t.Fatal(err)
	}
	values := []uint64{9, 1, 1, 5, 0}
	for _, v := range values {
		if err := w.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := OpenList(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got, err := l.Keys(nil, 0, l.Len()); err != nil || !slices.Equal(got, values) {
		t.Errorf("the list's values = %v, %v; want %v", got, err, values)
	}
	if _, err := Open(path); !errors.Is(err, ErrFormat) {
		t.Errorf("Open of a list = %v, want ErrFormat", err)
	}
	kw, _ := Create(filepath.Join(dir, "keys"))
	kw.Add(1)
	if err := kw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenList(filepath.Join(dir, "keys")); !errors.Is(err, ErrFormat) {
		t.Errorf("OpenList of a key file = %v, want ErrFormat", err)
	}
}
