// Package fuse stores one bit for each key of a set without storing the
// keys: a retrieval structure, or static function, built on a binary fuse
// graph of three positions a key (Graf and Lemire, "Binary Fuse Filters:
// Fast and Smaller Than Xor Filters", 2022). The bit of a key of the set
// is the xor of the three bits of the array at its positions; a key not
// in the set gets an arbitrary bit. It takes about 1.125 bits a key for a
// million keys or more, a little more for fewer.
//
// The filters of that paper store a fingerprint of each key; here the
// value is whatever the caller gives, which is what the packed book needs
// (package book/packed stores the bits of a score's code with it). The
// array is built by peeling: a slot that only one key touches is that
// key's to set, last; the key is taken out and its other slots may then
// be touched by one key only; and so on. When peeling stops before every
// key is out (the graph has a 2-core), Build tries another seed.
package fuse

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/c4book/c4book/internal/splitmix"
)

// # Positions of a key
//
// The array has SegmentCount+2 segments of 2^SegmentBits bits each. A key
// is hashed with the seed, h = splitmix.Mix(key ^ Seed); its first
// position lies in the first SegmentCount segments, the two others in the
// next two segments, at offsets that other bits of h scramble:
//
//	p0 = (h * (SegmentCount << SegmentBits)) >> 64        (the high word)
//	p1 = (p0 + 2^SegmentBits)   ^ ((h >> 18) & (2^SegmentBits - 1))
//	p2 = (p0 + 2*2^SegmentBits) ^ (h & (2^SegmentBits - 1))
//
// The xors change only the bits below the segment's, so each position stays
// in its segment. SegmentBits is at most MaxSegmentBits, so that the two
// offsets are taken from bits of h that do not overlap. The array's bit i
// is bit i%8 of byte i/8.

// MaxSegmentBits is the largest SegmentBits.
const MaxSegmentBits = 18

// Params are what a lookup needs besides the array: the seed of the hash
// and the shape of the array.
type Params struct {
	Seed         uint64
	SegmentBits  uint8  // each segment has 2^SegmentBits bits; at most MaxSegmentBits
	SegmentCount uint32 // segments where a first position falls; at least 1
}

// Slots returns the number of bits of the array.
func (p Params) Slots() uint64 { return (uint64(p.SegmentCount) + 2) << p.SegmentBits }

// Bytes returns the length of the array in bytes.
func (p Params) Bytes() uint64 { return (p.Slots() + 7) / 8 }

// Valid returns an error unless p describes an array a lookup can read.
func (p Params) Valid() error {
	switch {
	case p.SegmentBits > MaxSegmentBits:
		return fmt.Errorf("fuse: segments of 2^%d bits, at most 2^%d", p.SegmentBits, MaxSegmentBits)
	case p.SegmentCount == 0:
		return errors.New("fuse: no segment")
	}
	return nil
}

// Positions returns the three bit positions of key in the array.
func (p Params) Positions(key uint64) (p0, p1, p2 uint64) {
	h := splitmix.Mix(key ^ p.Seed)
	length := uint64(1) << p.SegmentBits
	mask := length - 1
	p0, _ = bits.Mul64(h, uint64(p.SegmentCount)<<p.SegmentBits)
	p1 = (p0 + length) ^ (h >> 18 & mask)
	p2 = (p0 + 2*length) ^ (h & mask)
	return p0, p1, p2
}

// Get returns the bit of key: the xor of the bits of array at its
// positions. array must be p.Bytes() long.
func (p Params) Get(array []byte, key uint64) uint8 {
	p0, p1, p2 := p.Positions(key)
	return (array[p0>>3]>>(p0&7) ^ array[p1>>3]>>(p1&7) ^ array[p2>>3]>>(p2&7)) & 1
}

// ShapeFor returns the shape (SegmentBits, SegmentCount) of an array for n
// keys, grown by the factor grow (1 at first; more after failures). The
// sizes follow Graf and Lemire's for three positions: segments of about
// n^(1/log2(3.33)) * 4.76 bits and 1.125 bits a key for a million keys and
// more, up to 1.375 for a thousand.
func ShapeFor(n int, grow float64) (segmentBits uint8, segmentCount uint32) {
	if n < 2 {
		n = 2
	}
	logN := math.Log(float64(n))
	sb := int(math.Floor(logN/math.Log(3.33) + 2.25))
	sb = min(max(sb, 2), MaxSegmentBits)
	factor := max(1.125, 0.875+0.25*math.Log(1e6)/logN) * grow
	capacity := uint64(math.Ceil(float64(n) * factor))
	length := uint64(1) << sb
	count := (capacity + length - 1) / length
	if count > 2 {
		count -= 2
	} else {
		count = 1
	}
	return uint8(sb), uint32(count)
}

// MaxKeys is the most keys one Build takes: indexes of keys and of slots
// are 32 bits.
const MaxKeys = 1 << 30

// ErrDuplicate is the error of a Build whose keys are not distinct.
var ErrDuplicate = errors.New("fuse: two keys are equal")

// maxAttempts bounds the seeds Build tries. A seed fails with a small
// probability for large sets (and a larger one for tiny ones); the array
// grows by 10% every attemptsPerSize failed seeds, so a failure of every
// attempt means equal keys, which Build then reports.
const (
	maxAttempts      = 64
	attemptsPerSize  = 4
	growPerSizeRound = 1.1
)

// Build returns the params and the array that give each keys[i] the bit
// bit(i) (0 or 1). The keys must be distinct; seed is the first seed
// tried, and the params say which one worked. Build allocates about 12
// bytes a slot and 8 a key while it works.
func Build(keys []uint64, bit func(i int) uint8, seed uint64) (Params, []byte, error) {
	if len(keys) > MaxKeys {
		return Params{}, nil, fmt.Errorf("fuse: %d keys, at most %d", len(keys), MaxKeys)
	}
	var b builder
	grow := 1.0
	for attempt := range maxAttempts {
		if attempt > 0 && attempt%attemptsPerSize == 0 {
			grow *= growPerSizeRound
		}
		sb, sc := ShapeFor(len(keys), grow)
		p := Params{Seed: seed + uint64(attempt)*0x9e3779b97f4a7c15, SegmentBits: sb, SegmentCount: sc}
		if array, ok := b.build(keys, bit, p); ok {
			return p, array, nil
		}
	}
	return Params{}, nil, fmt.Errorf("%w (no array after %d seeds)", ErrDuplicate, maxAttempts)
}

// builder holds the work arrays of Build, reused from one attempt to the
// next.
type builder struct {
	count  []uint32 // keys touching each slot
	xorIdx []uint32 // xor of the indexes of the keys touching each slot
	queue  []uint32 // slots touched by one key
	order  []uint32 // keys in peeling order
	at     []uint32 // the slot each key of order was peeled at
}

// build tries the params p: it peels the graph and, if every key came
// out, sets the array's bits in reverse order.
func (b *builder) build(keys []uint64, bit func(i int) uint8, p Params) ([]byte, bool) {
	slots := p.Slots()
	b.count = resize(b.count, slots)
	b.xorIdx = resize(b.xorIdx, slots)
	clear(b.count)
	clear(b.xorIdx)
	for i, k := range keys {
		p0, p1, p2 := p.Positions(k)
		b.count[p0]++
		b.count[p1]++
		b.count[p2]++
		b.xorIdx[p0] ^= uint32(i)
		b.xorIdx[p1] ^= uint32(i)
		b.xorIdx[p2] ^= uint32(i)
	}
	b.queue = b.queue[:0]
	for s, c := range b.count {
		if c == 1 {
			b.queue = append(b.queue, uint32(s))
		}
	}
	b.order, b.at = b.order[:0], b.at[:0]
	for len(b.queue) > 0 {
		s := b.queue[len(b.queue)-1]
		b.queue = b.queue[:len(b.queue)-1]
		if b.count[s] != 1 {
			continue // emptied since it was queued
		}
		i := b.xorIdx[s]
		b.order = append(b.order, i)
		b.at = append(b.at, s)
		p0, p1, p2 := p.Positions(keys[i])
		for _, q := range [3]uint64{p0, p1, p2} {
			b.count[q]--
			b.xorIdx[q] ^= i
			if b.count[q] == 1 {
				b.queue = append(b.queue, uint32(q))
			}
		}
	}
	if len(b.order) != len(keys) {
		return nil, false
	}
	array := make([]byte, p.Bytes())
	for j := len(b.order) - 1; j >= 0; j-- {
		i, s := b.order[j], uint64(b.at[j])
		// The slot s is still 0, so the xor of the three is the xor of
		// the two others.
		v := (bit(int(i)) ^ p.Get(array, keys[i])) & 1
		array[s>>3] |= v << (s & 7)
	}
	return array, true
}

// resize returns s with length n, reusing its room when it has enough.
func resize(s []uint32, n uint64) []uint32 {
	if uint64(cap(s)) >= n {
		return s[:n]
	}
	return make([]uint32, n)
}
