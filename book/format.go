package book

import (
	"encoding/binary"
	"fmt"

	"github.com/c4book/c4book/solver"
)

// # On-disk format of positions
//
// The format below is stable: a book written by this version of the
// package is readable by every later one. A change that old readers would
// misread bumps FormatVersion (the book) or valueVersion (one value).
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
// Values. A position's value is two bytes:
//
//	        byte 0                  byte 1
//	+-------------+-------------+-------------------------+
//	| version (4) | origin (4)  | score (int8, 2's compl.)|
//	+-------------+-------------+-------------------------+
//	 bits 7..4     bits 3..0     bits 7..0
//
//	version: valueVersion (1). A value of another version is an error;
//	         a later version may make values longer.
//	origin:  how the score was obtained: OriginSolved (1), OriginDerived (2)
//	         or OriginImported (3); 0 and 4..15 are invalid.
//	score:   the exact score in Pons' convention, in [solver.MinScore,
//	         solver.MaxScore].
//
// Pebble compresses its blocks and shares key prefixes between neighbours,
// so an entry costs far less on disk than its 11 bytes.

// Key layout constants; see the diagram above.
const (
	positionKeyLen = 9    // depth byte + 8 bytes of canonical key
	metaPrefix     = 0xFF // first byte of every metadata key
	maxDepth       = 64   // no board has more cells than bits in a key
)

// Value layout constants; see the diagram above.
const (
	valueLen      = 2
	valueVersion  = 1
	versionShift  = 4
	originMask    = 0x0F
	versionMask   = 0x0F
	valueScoreIdx = 1
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

// Value is what a book stores about a position: its exact score and how
// the score was obtained.
type Value struct {
	Score  int    // exact score, Pons' convention: > 0 the side to move wins
	Origin Origin // how Score was obtained
}

// Entry is one position of a book: its depth and canonical key, and its
// value.
type Entry struct {
	Depth int    // stones on the board
	Key   uint64 // canonical key (solver.Position.CanonicalKey)
	Value
}

// String formats e as "depth D key 0x... score S (origin)".
func (e Entry) String() string {
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
		return 0, 0, &CorruptError{Key: k, Reason: fmt.Sprintf("position key is %d bytes, want %d", len(k), positionKeyLen)}
	}
	if k[0] > maxDepth {
		return 0, 0, &CorruptError{Key: k, Reason: fmt.Sprintf("depth %d above %d", k[0], maxDepth)}
	}
	return int(k[0]), binary.BigEndian.Uint64(k[1:]), nil
}

// AppendValue appends the 2-byte encoding of v to dst. It returns an error
// if the score or the origin cannot be stored.
func AppendValue(dst []byte, v Value) ([]byte, error) {
	if v.Score < solver.MinScore || v.Score > solver.MaxScore {
		return dst, fmt.Errorf("score %d outside [%d, %d]", v.Score, solver.MinScore, solver.MaxScore)
	}
	if !v.Origin.Valid() {
		return dst, fmt.Errorf("invalid %v", v.Origin)
	}
	return append(dst, valueVersion<<versionShift|byte(v.Origin), byte(int8(v.Score))), nil
}

// DecodeValue decodes the value stored at key k. A value that is truncated,
// too long, of an unknown version, with an invalid origin or a score out of
// range gives a *CorruptError naming k; DecodeValue never panics.
func DecodeValue(k, v []byte) (Value, error) {
	if len(v) == 0 {
		return Value{}, &CorruptError{Key: k, Reason: "empty value"}
	}
	if version := v[0] >> versionShift & versionMask; version != valueVersion {
		return Value{}, &CorruptError{Key: k, Reason: fmt.Sprintf("value version %d, want %d", version, valueVersion)}
	}
	if len(v) != valueLen {
		return Value{}, &CorruptError{Key: k, Reason: fmt.Sprintf("value is %d bytes, want %d", len(v), valueLen)}
	}
	o := Origin(v[0] & originMask)
	if !o.Valid() {
		return Value{}, &CorruptError{Key: k, Reason: fmt.Sprintf("invalid %v", o)}
	}
	score := int(int8(v[valueScoreIdx]))
	if score < solver.MinScore || score > solver.MaxScore {
		return Value{}, &CorruptError{Key: k, Reason: fmt.Sprintf("score %d outside [%d, %d]", score, solver.MinScore, solver.MaxScore)}
	}
	return Value{Score: score, Origin: o}, nil
}
