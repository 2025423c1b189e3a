package fuse

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// randomKeys returns n distinct random keys and a random bit for each.
func randomKeys(rng *rand.Rand, n int) ([]uint64, []uint8) {
	seen := make(map[uint64]bool, n)
	keys := make([]uint64, 0, n)
	for len(keys) < n {
		k := rng.Uint64() >> rng.IntN(40) // some small keys, as position keys are
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	vals := make([]uint8, n)
	for i := range vals {
		vals[i] = uint8(rng.IntN(2))
	}
	return keys, vals
}

// TestBuild: every key gets its bit back, for sizes from none to a
// million, and sequential keys (as the keys of one column's positions
// are) as well as random ones.
func TestBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 2, 3, 7, 100, 1000, 65536, 300000}
	if !testing.Short() {
		sizes = append(sizes, 1<<20)
	}
	for _, n := range sizes {
		keys, vals := randomKeys(rng, n)
		check(t, "random", keys, vals)
		seq := make([]uint64, n)
		for i := range seq {
			seq[i] = uint64(i)
		}
		check(t, "sequential", seq, vals)
	}
}

func check(t *testing.T, name string, keys []uint64, vals []uint8) {
	t.Helper()
	p, array, err := Build(keys, func(i int) uint8 { return vals[i] }, 42)
	if err != nil {
		t.Fatalf("%s, %d keys: %v", name, len(keys), err)
	}
	if err := p.Valid(); err != nil {
		t.Fatalf("%s, %d keys: %v", name, len(keys), err)
	}
	if uint64(len(array)) != p.Bytes() {
		t.Fatalf("%s, %d keys: array of %d bytes, params say %d", name, len(keys), len(array), p.Bytes())
	}
	for i, k := range keys {
		if got := p.Get(array, k); got != vals[i] {
			t.Fatalf("%s, %d keys: key %d (%#x) gets %d, want %d", name, len(keys), i, k, got, vals[i])
		}
	}
	if n := len(keys); n >= 1<<20 {
		if per := float64(p.Slots()) / float64(n); per > 1.14 {
			t.Errorf("%s, %d keys: %.3f bits a key, want about 1.125", name, n, per)
		}
	}
}

// TestBuild_deterministic: the same keys and bits give the same array.
func TestBuild_deterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	keys, vals := randomKeys(rng, 5000)
	bit := func(i int) uint8 { return vals[i] }
	p1, a1, err1 := Build(keys, bit, 7)
	p2, a2, err2 := Build(keys, bit, 7)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if p1 != p2 || !bytes.Equal(a1, a2) {
		t.Error("two builds of the same keys differ")
	}
}

// TestBuild_duplicate: equal keys cannot be given bits, and say so.
func TestBuild_duplicate(t *testing.T) {
	keys := []uint64{1, 2, 3, 2}
	_, _, err := Build(keys, func(i int) uint8 { return uint8(i & 1) }, 1)
	if !errors.Is(err, ErrDuplicate) {
		t.Errorf("Build of a duplicate key: %v, want ErrDuplicate", err)
	}
}

// TestParams_Positions: the positions of a key lie in three consecutive
// segments, inside the array.
func TestParams_Positions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 50, 10000, 5000000} {
		sb, sc := ShapeFor(n, 1)
		p := Params{Seed: rng.Uint64(), SegmentBits: sb, SegmentCount: sc}
		for range 10000 {
			p0, p1, p2 := p.Positions(rng.Uint64())
			s0 := p0 >> sb
			if s0 >= uint64(sc) || p1>>sb != s0+1 || p2>>sb != s0+2 || p2 >= p.Slots() {
				t.Fatalf("n %d: positions %d %d %d of segments of 2^%d, %d counted", n, p0, p1, p2, sb, sc)
			}
		}
	}
}

func BenchmarkBuild(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	keys, vals := randomKeys(rng, 1<<20)
	bit := func(i int) uint8 { return vals[i] }
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Build(keys, bit, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(keys)), "ns/key")
}

func BenchmarkGet(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	keys, vals := randomKeys(rng, 1<<22)
	p, array, err := Build(keys, func(i int) uint8 { return vals[i] }, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var sum uint8
	i := 0
	for b.Loop() {
		sum += p.Get(array, keys[i&(len(keys)-1)])
		i += 7919
	}
	_ = sum
}
