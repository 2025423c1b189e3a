package keyfile

import (
	"errors"
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

// TestSorter: keys added in any order, with repeats, come out once each
// in order, spilled or not; the runs are removed.
func TestSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, memKeys := range []int{1, 97, 1000, 1 << 20} {
		dir := t.TempDir()
		s := NewSorter(dir, memKeys)
		want := map[uint64]bool{}
		n := 5000
		if memKeys == 1 {
			n = 50 // a run a key
		}
		for range n {
			k := rng.Uint64N(3000) << 20
			want[k] = true
			if err := s.Add(k); err != nil {
				t.Fatal(err)
			}
		}
		var got []uint64
		if err := s.Merge(func(k uint64) error { got = append(got, k); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(got) || len(got) != len(want) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("memKeys %d: %d keys out, want %d distinct in order", memKeys, len(got), len(want))
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("memKeys %d: runs left after Merge: %d", memKeys, len(entries))
		}
	}
}
