package book

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/c4book/c4book/solver"
)

// # On-disk format of positions
//
// The format below is stable: a book written by this version of the
// package is readable by every later one. A change that old readers would
// misread bumps FormatVersion (the book) or the value version (one value).
//
// Keys. Every key starts with a prefix byte. Position keys start with
// their depth, the number of stones on the board (0..maxDepth), followed by
// the canonical key of the position (solver's Position.CanonicalKey, the
// smaller of the key and the mirror key, so a position and its mirror share
// an entry), big-endian so that byte order is numeric order:
//
//	 byte 0   1                                                   8
//	+-------+-----------------------------------------------------+
//	| depth |        canonical key, uint64 big-endian             |
//	+-------+-----------------------------------------------------+
//	  0x00..0x40                 9 bytes in all
//
// All positions of one depth are one contiguous key range [depth, depth+1).
// Metadata keys start with metaPrefix (0xFF), which no depth reaches; their
// layout is in meta.go. Prefix bytes 0x41..0xFE are unused and reserved.
//
// Values. A position's value is two bytes in version 1, and two bytes
// followed by the number of the worker that solved it in version 2:
//
//	        byte 0                  byte 1
//	+-------------+-------------+-------------------------+
//	| version (4) | origin (4)  | score (int8, 2's compl.)|   version 1
//	+-------------+-------------+-------------------------+
//	 bits 7..4     bits 3..0     bits 7..0
//
//	        byte 0                  byte 1                   bytes 2 .. 2+n-1
//	+-------------+-------------+-------------------------+-----------------------+
//	| version (4) | origin (4)  | score (int8, 2's compl.)| worker number, uvarint|   version 2
//	+-------------+-------------+-------------------------+-----------------------+
//	                                                          n = 1..5 bytes
//
//	version: valueVersion1 (1) or valueVersion2 (2). A value of another
//	         version is an error; a later version may make values longer.
//	origin:  how the score was obtained: OriginSolved (1), OriginDerived (2)
//	         or OriginImported (3); 0 and 4..15 are invalid.
//	score:   the exact score in Pons' convention, in [solver.MinScore,
//	         solver.MaxScore].
//	worker:  version 2 only: the number of the registered worker that
//	         solved the position (Worker.Number, meta.go), 1..2^32-1, as
//	         an unsigned varint (encoding/binary's Uvarint: 7 bits a byte,
//	         low bits first, the high bit set on every byte but the last),
//	         in its shortest form: 1 byte for workers 1..127, 2 bytes up
//	         to 16383.
//
// A value is written in version 2 only when it has a worker number: its
// origin is OriginSolved and the worker is known (Value.Worker != 0).
// Every other value (derived, imported, solved by a worker without a key
// or by the coordinator itself) is written in version 1, two bytes, as
// before version 2 existed; so a value has one encoding, and a version 2
// value of another origin, with worker 0, with a varint longer than its
// shortest form or with bytes after it is corrupt. Books written before
// version 2 hold version 1 values only, and read as they are: their
// solved entries have worker 0, unknown.
//
// Pebble compresses its blocks and shares key prefixes between neighbours,
// so an entry costs far less on disk than its 11 to 16 bytes.

// Key layout constants; see the diagram above.
const (
	positionKeyLen = 9    // depth byte + 8 bytes of canonical key
	metaPrefix     = 0xFF // first byte of every metadata key
	maxDepth       = 64   // no board has more cells than bits in a key
)

// Value layout constants; see the diagram above.
const (
	valueLen1     = 2 // a version 1 value
	maxValueLen   = valueLen1 + binary.MaxVarintLen32
	valueVersion1 = 1
	valueVersion2 = 2
	versionShift  = 4
	originMask    = 0x0F
	versionMask   = 0x0F
	valueScoreIdx = 1
	valueWorkerAt = 2 // where a version 2 value's worker number starts
)

// Origin says how the score of an entry was obtained.
type Origin uint8

// Origins. The zero value is not a valid origin: every entry says where
// its score comes from.
const (
	OriginSolved   Origin = 1 // solved by a worker's search
	OriginDerived  Origin = 2 // the negamax of the scores of the children
	OriginImported Origin = 3 // read from a "moves score" text file
)

// numOrigins bounds the valid origins: 1 <= o < numOrigins.
const numOrigins = 4

// Origins lists the valid origins in order.
var Origins = []Origin{OriginSolved, OriginDerived, OriginImported}

// Valid reports whether o is one of the defined origins.
func (o Origin) Valid() bool { return o >= 1 && o < numOrigins }

// String returns "solved", "derived", "imported", or "origin(N)" for an
// invalid origin.
func (o Origin) String() string {
	switch o {
	case OriginSolved:
		return "solved"
	case OriginDerived:
		return "derived"
	case OriginImported:
		return "imported"
	}
	return fmt.Sprintf("origin(%d)", uint8(o))
}

// Value is what a book stores about a position: its exact score, how the
// score was obtained and, for a solved score, which worker solved it.
type Value struct {
	Score  int    // exact score, Pons' convention: > 0 the side to move wins
	Origin Origin // how Score was obtained
	// Worker is the number of the registered worker (Worker.Number) that
	// solved the position, for OriginSolved; 0 when it is not known: a
	// worker without a key (a shared token, no authentication), the
	// coordinator's own solver, a book or file written before workers
	// were recorded. Always 0 for the other origins.
	Worker uint32
}

// Entry is one position of a book: its depth and canonical key, and its
// value.
type Entry struct {
	Depth int    // stones on the board
	Key   uint64 // canonical key (solver.Position.CanonicalKey)
	Value
}

// String formats e as "depth D key 0x... score S (origin)", with
// "worker N" after the origin when the worker is known.
func (e Entry) String() string {
	if e.Worker != 0 {
		return fmt.Sprintf("depth %d key %#x score %d (%v, worker %d)", e.Depth, e.Key, e.Score, e.Origin, e.Worker)
	}
	return fmt.Sprintf("depth %d key %#x score %d (%v)", e.Depth, e.Key, e.Score, e.Origin)
}

// AppendKey appends the 9-byte key of the position with the given depth and
// canonical key to dst.
func AppendKey(dst []byte, depth int, key uint64) []byte {
	dst = append(dst, byte(depth))
	return binary.BigEndian.AppendUint64(dst, key)
}

// DecodeKey decodes a position key. It returns an error, never panics, if
// k is not 9 bytes or its depth byte is out of range (which includes every
// metadata key).
func DecodeKey(k []byte) (depth int, key uint64, err error) {
	if len(k) != positionKeyLen {
		return 0, 0, newCorrupt(k, fmt.Sprintf("position key is %d bytes, want %d", len(k), positionKeyLen))
	}
	if k[0] > maxDepth {
		return 0, 0, newCorrupt(k, fmt.Sprintf("depth %d above %d", k[0], maxDepth))
	}
	return int(k[0]), binary.BigEndian.Uint64(k[1:]), nil
}

// AppendValue appends the encoding of v to dst: 2 bytes (version 1), or
// 3 to 7 for a solved value whose worker is known (version 2). It returns
// an error if the score or the origin cannot be stored, or if a worker is
// given for a score that was not solved.
func AppendValue(dst []byte, v Value) ([]byte, error) {
	if v.Score < solver.MinScore || v.Score > solver.MaxScore {
		return dst, fmt.Errorf("score %d outside [%d, %d]", v.Score, solver.MinScore, solver.MaxScore)
	}
	if !v.Origin.Valid() {
		return dst, fmt.Errorf("invalid %v", v.Origin)
	}
	if v.Worker == 0 {
		return append(dst, valueVersion1<<versionShift|byte(v.Origin), byte(int8(v.Score))), nil
	}
	if v.Origin != OriginSolved {
		return dst, fmt.Errorf("worker %d given for a %v score: only solved scores have a worker", v.Worker, v.Origin)
	}
	dst = append(dst, valueVersion2<<versionShift|byte(v.Origin), byte(int8(v.Score)))
	return binary.AppendUvarint(dst, uint64(v.Worker)), nil
}

// DecodeValue decodes the value stored at key k, of version 1 or 2. A
// value that is truncated, too long, of an unknown version, with an
// invalid origin, a score out of range or a malformed worker number (see
// the diagram) gives a *CorruptError naming k; DecodeValue never panics.
func DecodeValue(k, v []byte) (Value, error) {
	if len(v) == 0 {
		return Value{}, newCorrupt(k, "empty value")
	}
	version := v[0] >> versionShift & versionMask
	switch {
	case version != valueVersion1 && version != valueVersion2:
		return Value{}, newCorrupt(k, fmt.Sprintf("value version %d, want %d or %d", version, valueVersion1, valueVersion2))
	case version == valueVersion1 && len(v) != valueLen1:
		return Value{}, newCorrupt(k, fmt.Sprintf("version 1 value is %d bytes, want %d", len(v), valueLen1))
	case version == valueVersion2 && len(v) <= valueLen1:
		return Value{}, newCorrupt(k, fmt.Sprintf("version 2 value is %d bytes, want %d to %d", len(v), valueLen1+1, maxValueLen))
	}
	o := Origin(v[0] & originMask)
	if !o.Valid() {
		return Value{}, newCorrupt(k, fmt.Sprintf("invalid %v", o))
	}
	score := int(int8(v[valueScoreIdx]))
	if score < solver.MinScore || score > solver.MaxScore {
		return Value{}, newCorrupt(k, fmt.Sprintf("score %d outside [%d, %d]", score, solver.MinScore, solver.MaxScore))
	}
	val := Value{Score: score, Origin: o}
	if version == valueVersion1 {
		return val, nil
	}
	if o != OriginSolved {
		return Value{}, newCorrupt(k, fmt.Sprintf("version 2 value of a %v score: only solved scores have a worker", o))
	}
	w, err := decodeWorkerNumber(v[valueWorkerAt:])
	if err != nil {
		return Value{}, newCorrupt(k, "version 2 value: "+err.Error())
	}
	val.Worker = w
	return val, nil
}

// decodeWorkerNumber decodes the worker number of a version 2 value: one
// uvarint in its shortest form, 1..2^32-1, that fills b.
func decodeWorkerNumber(b []byte) (uint32, error) {
	n, size := binary.Uvarint(b)
	switch {
	case size == 0:
		return 0, fmt.Errorf("worker number truncated (% x)", b)
	case size < 0 || n > math.MaxUint32:
		return 0, fmt.Errorf("worker number above %d", uint32(math.MaxUint32))
	case size != len(b):
		return 0, fmt.Errorf("%d bytes after the worker number", len(b)-size)
	case n == 0:
		return 0, fmt.Errorf("worker number 0 (an unknown worker is written as version 1)")
	case size != len(binary.AppendUvarint(nil, n)):
		return 0, fmt.Errorf("worker number %d in %d bytes, not its shortest form", n, size)
	}
	return uint32(n), nil
}
