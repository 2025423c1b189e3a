package splitmix

import (
	"math/rand/v2"
	"testing"
)

// TestMix: the first outputs of the SplitMix64 generator seeded with 0,
// which adds 0x9e3779b97f4a7c15 to its state before mixing it, as the
// reference implementation (Vigna, splitmix64.c) gives them.
func TestMix(t *testing.T) {
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	var state uint64
	for i, w := range want {
		state += 0x9e3779b97f4a7c15
		if got := Mix(state); got != w {
			t.Errorf("output %d: Mix(%#x) = %#x, want %#x", i, state, got, w)
		}
	}
}

// TestUnmix: Unmix undoes Mix (moved from book's TestMixKey).
func TestUnmix(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range 100000 {
		x := rng.Uint64()
		if i < 64 {
			x = 1 << i
		}
		if got := Unmix(Mix(x)); got != x {
			t.Fatalf("Unmix(Mix(%#x)) = %#x", x, got)
		}
	}
	if Mix(0) != 0 || Unmix(0) != 0 {
		t.Error("0 is not its own image")
	}
}
