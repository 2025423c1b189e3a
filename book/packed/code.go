package packed

import (
	"container/heap"
	"fmt"
	"slices"
)

// # Codes
//
// A context's scores are coded with a canonical Huffman code: each symbol
// (a score less the level's lowest) has a code length, and the codes are
// given in order of length, then symbol: the first is all zeros, and each
// next one is the one before plus one, shifted left by the difference of
// their lengths. So the lengths say the whole code. A context with one
// score codes it in 0 bits; lengths are at most maxCodeLen.

// code is the code of one context: its symbols' lengths, and what decoding
// needs.
type code struct {
	lengths []uint8 // by symbol; 0: the symbol does not occur
	only    int     // the one symbol of a code of 0 bits, or -1

	// Decoding: count[l] codes of length l, the first of which is
	// first[l] and whose symbols, in code order, start at sorted[start[l]].
	count, first, start [maxCodeLen + 1]uint32
	sorted              []uint8
	maxLen              int

	// Encoding: each symbol's code, right-aligned.
	codes []uint32
}

// newCode returns the code of the given lengths by symbol, or an error if
// they are not the lengths of a complete prefix code (or, for one symbol,
// of none).
func newCode(lengths []uint8) (code, error) {
	c := code{lengths: lengths, only: -1}
	n := 0
	for s, l := range lengths {
		if l > maxCodeLen {
			return c, fmt.Errorf("symbol %d has a code of %d bits, at most %d", s, l, maxCodeLen)
		}
		if l > 0 {
			n++
			c.count[l]++
			c.maxLen = max(c.maxLen, int(l))
		}
	}
	if n == 0 {
		return c, nil
	}
	// Kraft: a complete code fills the space of codes exactly.
	var kraft uint64
	for l := 1; l <= maxCodeLen; l++ {
		kraft += uint64(c.count[l]) << (maxCodeLen - l)
	}
	if kraft != 1<<maxCodeLen {
		return c, fmt.Errorf("code lengths %v do not make a complete code", lengths)
	}
	var next uint32
	for l := 1; l <= maxCodeLen; l++ {
		next <<= 1
		c.first[l] = next
		next += c.count[l]
		if l < maxCodeLen {
			c.start[l+1] = c.start[l] + c.count[l]
		}
	}
	c.sorted = make([]uint8, n)
	c.codes = make([]uint32, len(lengths))
	fill := c.start
	for s, l := range lengths {
		if l > 0 {
			i := fill[l]
			c.sorted[i] = uint8(s)
			c.codes[s] = c.first[l] + (i - c.start[l])
			fill[l]++
		}
	}
	return c, nil
}

// singleCode returns the code of a context whose only symbol is s.
func singleCode(symbols, s int) code {
	return code{lengths: make([]uint8, symbols), only: s}
}

// symbols returns how many symbols the context codes.
func (c *code) symbols() int {
	if c.only >= 0 {
		return 1
	}
	return len(c.sorted)
}

// length returns the length of the code of symbol s, which must occur.
func (c *code) length(s int) int {
	if c.only >= 0 {
		return 0
	}
	return int(c.lengths[s])
}

// decodeStep is one step of decoding: given the bits read so far (value,
// of length bits, the first bit highest), it returns the symbol if they
// are a code, and false if more bits are needed.
func (c *code) decodeStep(value uint32, length int) (int, bool) {
	if off := value - c.first[length]; off < c.count[length] {
		return int(c.sorted[c.start[length]+off]), true
	}
	return 0, false
}

// encode appends the code's record to the header (format.go).
func (c *code) encode(e *encoder) {
	switch c.symbols() {
	case 0:
		e.u8(0)
	case 1:
		e.u8(1)
		e.u8(uint8(c.only))
	default:
		e.u8(uint8(len(c.sorted)))
		for s := 0; s < len(c.lengths); s += 2 {
			b := c.lengths[s]
			if s+1 < len(c.lengths) {
				b |= c.lengths[s+1] << 4
			}
			e.u8(b)
		}
	}
}

// decode reads a code's record of a level of the given number of symbols.
func (c *code) decode(d *decoder, symbols int) error {
	n := int(d.u8())
	switch {
	case d.err != nil:
		return d.err
	case n == 0:
		*c = code{lengths: make([]uint8, symbols), only: -1}
	case n == 1:
		s := int(d.u8())
		if d.err != nil {
			return d.err
		}
		if s >= symbols {
			return fmt.Errorf("symbol %d of %d", s, symbols)
		}
		*c = singleCode(symbols, s)
	default:
		raw := d.take((symbols + 1) / 2)
		if d.err != nil {
			return d.err
		}
		lengths := make([]uint8, symbols)
		for s := range lengths {
			lengths[s] = raw[s/2] >> (4 * (s % 2)) & 0xf
		}
		if s := symbols; s%2 == 1 && raw[s/2]>>4 != 0 {
			return fmt.Errorf("a length for symbol %d of %d", s, symbols)
		}
		var err error
		if *c, err = newCode(lengths); err != nil {
			return err
		}
		if c.symbols() != n {
			return fmt.Errorf("%d symbols said, %d coded", n, c.symbols())
		}
	}
	return nil
}

// huffmanLengths returns the code lengths of a Huffman code for the
// symbol counts freq (0: the symbol does not occur), at most maxLen bits:
// when the Huffman code of the counts is longer, the counts are halved
// (a count stays at least 1) and the code made again, which flattens it.
// There must be two symbols or more.
func huffmanLengths(freq []uint64, maxLen int) []uint8 {
	f := slices.Clone(freq)
	for {
		lengths := huffman(f)
		if int(slices.Max(lengths)) <= maxLen {
			return lengths
		}
		for i := range f {
			if f[i] > 0 {
				f[i] = max(1, f[i]/2)
			}
		}
	}
}

// huffman returns the Huffman code lengths of the counts: the two least
// frequent nodes are merged until one is left, ties broken by the order
// nodes were made in (so the lengths depend on the counts only).
func huffman(freq []uint64) []uint8 {
	h := &nodeHeap{}
	parent := make([]int, 0, 2*len(freq))
	for s, f := range freq {
		if f > 0 {
			heap.Push(h, node{weight: f, id: s})
		}
	}
	// Nodes 0..len(freq)-1 are the symbols; merged ones follow.
	for range 2 * len(freq) {
		parent = append(parent, -1)
	}
	next := len(freq)
	for h.Len() > 1 {
		a, b := heap.Pop(h).(node), heap.Pop(h).(node)
		parent[a.id], parent[b.id] = next, next
		heap.Push(h, node{weight: a.weight + b.weight, id: next})
		next++
	}
	lengths := make([]uint8, len(freq))
	for s, f := range freq {
		if f == 0 {
			continue
		}
		l := 0
		for n := s; parent[n] >= 0; n = parent[n] {
			l++
		}
		lengths[s] = uint8(min(l, 255))
	}
	return lengths
}

// node is a node of the Huffman tree being made.
type node struct {
	weight uint64
	id     int
}

// nodeHeap is a min-heap of nodes by weight, then id.
type nodeHeap []node

func (h nodeHeap) Len() int { return len(h) }
func (h nodeHeap) Less(i, j int) bool {
	return h[i].weight < h[j].weight || h[i].weight == h[j].weight && h[i].id < h[j].id
}
func (h nodeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *nodeHeap) Push(x any)   { *h = append(*h, x.(node)) }
func (h *nodeHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}
