package solver

import (
	"math/big"
	"strings"
	"testing"
)

func TestNewTable(t *testing.T) {
	for _, tc := range []struct {
		board *Board
		bytes int64
		ok    bool
	}{
		{Standard, 64 << 20, true},
		{Standard, MinTableBytes, true},
		{Standard, MinTableBytes - 1, false},
		{MustBoard(8, 7), 1 << 20, false}, // 64-bit keys need 2^18 buckets
		{MustBoard(8, 7), 8 << 20, true},
	} {
		tab, err := NewTable(tc.board, tc.bytes)
		if (err == nil) != tc.ok {
			t.Errorf("NewTable(%v, %d): error %v, want ok %v", tc.board, tc.bytes, err, tc.ok)
			continue
		}
		if err == nil && (tab.Bytes() > tc.bytes || !new(big.Int).SetUint64(uint64(tab.Entries()/2)).ProbablyPrime(0)) {
			t.Errorf("NewTable(%v, %d): %d bytes, %d buckets", tc.board, tc.bytes, tab.Bytes(), tab.Entries()/2)
		}
	}
}

// TestNewTable_memory: a table larger than the machine's memory is refused
// with an error that says so, before anything is allocated.
func TestNewTable_memory(t *testing.T) {
	most := MaxTableBytes()
	if most == 0 {
		t.Skip("the memory of this machine is not known")
	}
	_, err := NewTable(Standard, most+1)
	if err == nil || !strings.Contains(err.Error(), "more than the memory of this machine") {
		t.Errorf("NewTable of %d bytes: %v, want an error naming the machine's memory", most+1, err)
	}
}

func TestTable_putGet(t *testing.T) {
	tab, err := NewTable(Standard, MinTableBytes)
	if err != nil {
		t.Fatal(err)
	}
	n := tab.buckets
	key := uint64(12345)
	if e := tab.get(key); e.bound() != NoBound {
		t.Fatalf("empty table holds key: %v", e.bound())
	}
	for _, tc := range []struct {
		score int
		bound Bound
		move  int
	}{{-18, Upper, 3}, {0, Exact, -1}, {18, Lower, 6}, {-32, Exact, 0}, {32, Upper, 8}} {
		tab.put(key, tc.score, tc.bound, tc.move, 1000)
		e := tab.get(key)
		if e.score() != tc.score || e.bound() != tc.bound || e.move() != tc.move || e.work() != 10 {
			t.Errorf("put(%d, %v, %d): got %d, %v, %d, work %d", tc.score, tc.bound, tc.move, e.score(), e.bound(), e.move(), e.work())
		}
	}
	// Keys in the same bucket with the same low 46 bits differ by a
	// multiple of buckets*2^46: beyond 49-bit keys, never both valid on
	// 7x6. Keys in the same bucket otherwise are told apart.
	other := key + n // same bucket, other partial key
	if e := tab.get(other); e.bound() != NoBound {
		t.Errorf("key %d found as %d", other, key)
	}
	// Two more keys in the bucket: the first slot keeps the costlier entry.
	tab.put(other, 5, Exact, 2, 1<<20)
	tab.put(other+n, 7, Exact, 2, 1)
	if tab.get(other).score() != 5 || tab.get(other+n).score() != 7 {
		t.Errorf("recent and costly entries not both kept")
	}
	if e := tab.get(key); e.bound() != NoBound {
		t.Errorf("cheapest, oldest entry still there")
	}
	tab.Clear()
	if e := tab.get(other); e.bound() != NoBound {
		t.Errorf("Clear left an entry")
	}
}

func BenchmarkTable_get(b *testing.B) {
	tab, _ := NewTable(Standard, DefaultTableBytes)
	keys := make([]uint64, 1<<16)
	for i := range keys {
		keys[i] = uint64(i) * 0x9E3779B97F4A7C15 >> 15
		tab.put(keys[i], 1, Exact, 3, 100)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var sum int
	for i := 0; b.Loop(); i++ {
		sum += tab.get(keys[i&(len(keys)-1)]).score()
	}
	_ = sum
}

func BenchmarkTable_put(b *testing.B) {
	tab, _ := NewTable(Standard, DefaultTableBytes)
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		tab.put(i*0x9E3779B97F4A7C15>>15, 1, Exact, 3, 100)
	}
}

func TestTable_bucket(t *testing.T) {
	for _, bytes := range []int64{MinTableBytes, 1 << 20, 64 << 20, 1 << 30} {
		tab, err := NewTable(Standard, bytes)
		if err != nil {
			t.Fatal(err)
		}
		keys := []uint64{0, 1, tab.buckets - 1, tab.buckets, tab.buckets + 1, 1<<49 - 1, ^uint64(0), ^uint64(0) - tab.buckets}
		for i := uint64(0); i < 100000; i++ {
			keys = append(keys, i*0x9E3779B97F4A7C15)
		}
		for _, k := range keys {
			if got, want := tab.bucket(k), k%tab.buckets*2; got != want {
				t.Fatalf("%d buckets: bucket(%d) = %d, want %d", tab.buckets, k, got, want)
			}
		}
	}
}

// TestTable_prefetchEach checks that prefetching never faults, whatever
// the indexes: a prefetch is a hint, and the search may pass any bucket.
func TestTable_prefetchEach(t *testing.T) {
	tab, err := NewTable(MustBoard(7, 6), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	index := [lineSlots]uint64{0, 1, uint64(tab.Entries()) - 2, 1 << 40, 1<<61 - 1}
	for n := 0; n <= lineSlots; n++ {
		tab.prefetchEach(&index, n)
	}
}
