package coordinator

import (
	"math/rand/v2"
	"testing"
)

func TestKeySet(t *testing.T) {
	s := newKeySet(0)
	ref := map[uint64]bool{}
	rng := rand.New(rand.NewPCG(3, 4))
	keys := []uint64{0, 1, ^uint64(0), ^uint64(0) - 1}
	for range 100000 {
		keys = append(keys, rng.Uint64()>>rng.IntN(64))
	}
	for i, k := range keys {
		if got, want := s.add(k), !ref[k]; got != want {
			t.Fatalf("add(%d) #%d = %v, want %v", k, i, got, want)
		}
		ref[k] = true
		if i%7 == 0 {
			probe := keys[rng.IntN(i+1)] ^ uint64(rng.IntN(2))
			if s.has(probe) != ref[probe] {
				t.Fatalf("has(%d) = %v, want %v", probe, s.has(probe), ref[probe])
			}
		}
	}
	if s.len() != len(ref) {
		t.Fatalf("len = %d, want %d", s.len(), len(ref))
	}
	for k := range ref {
		if !s.has(k) {
			t.Fatalf("lost key %d", k)
		}
	}
}
