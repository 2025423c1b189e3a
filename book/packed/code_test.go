package packed

import (
	"testing"
)

// TestHuffmanLengths: the lengths make a complete code within the limit,
// even for counts whose plain Huffman code is far longer (Fibonacci
// counts make a code as deep as there are symbols), and each symbol's
// code decodes back to it.
func TestHuffmanLengths(t *testing.T) {
	fib := make([]uint64, 40)
	fib[0], fib[1] = 1, 1
	for i := 2; i < len(fib); i++ {
		fib[i] = fib[i-1] + fib[i-2]
	}
	for _, freq := range [][]uint64{
		{5, 5},
		{1, 0, 0, 1000000},
		{10, 20, 30, 40, 0, 50},
		fib,
	} {
		lengths := huffmanLengths(freq, maxCodeLen)
		c, err := newCode(lengths)
		if err != nil {
			t.Fatalf("counts %v: %v", freq, err)
		}
		for s, f := range freq {
			if (f > 0) != (lengths[s] > 0) {
				t.Fatalf("counts %v: symbol %d of count %d has length %d", freq, s, f, lengths[s])
			}
			if f == 0 {
				continue
			}
			l := c.length(s)
			var got int
			ok := false
			for n := 1; n <= l && !ok; n++ {
				got, ok = c.decodeStep(c.codes[s]>>(l-n), n)
				if ok && n != l {
					t.Fatalf("counts %v: the code of %d has a code as prefix", freq, s)
				}
			}
			if !ok || got != s {
				t.Fatalf("counts %v: the code of %d decodes to %d, %v", freq, s, got, ok)
			}
		}
	}
}

// TestCode_record: a code's record in the header reads back as the same
// code; records that break the rules are refused.
func TestCode_record(t *testing.T) {
	for _, lengths := range [][]uint8{
		{1, 1},
		{2, 0, 2, 1},
		{1, 2, 3, 3, 0},
	} {
		c, err := newCode(lengths)
		if err != nil {
			t.Fatal(err)
		}
		e := &encoder{}
		c.encode(e)
		var back code
		if err := back.decode(&decoder{buf: e.buf}, len(lengths)); err != nil {
			t.Fatalf("%v: %v", lengths, err)
		}
		for s := range lengths {
			if back.lengths[s] != lengths[s] {
				t.Fatalf("%v read back as %v", lengths, back.lengths)
			}
		}
	}
	for _, rec := range [][]byte{
		{2, 0x11, 0x01}, // lengths 1, 1, 1: not a prefix code
		{2, 0x21},       // lengths 1, 2: not complete
		{1, 7},          // one symbol, 7, of 3
		{3, 0x11, 0x00}, // two coded, three said
		{2, 0x11, 0x10}, // a length for the fourth of 3 symbols
		{2},             // cut short
	} {
		var c code
		if err := c.decode(&decoder{buf: rec}, 3); err == nil {
			t.Errorf("record %x of 3 symbols: read as %v", rec, c.lengths)
		}
	}
}
