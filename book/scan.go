package book

import (
	"bytes"
	"errors"
	"fmt"
	"iter"

	"github.com/cockroachdb/pebble/v2"
)

// Entries returns the entries of depths minDepth..maxDepth (inclusive), in
// key order: by depth, then by canonical key. The sequence ends after an
// entry that cannot be decoded, with a *CorruptError naming its key, or
// after any other error.
//
//	for e, err := range bk.Entries(0, 8) {
//		if err != nil {
//			return err
//		}
//		...
//	}
//
// A packed book's entries are those of its set, enumerated from its root
// one depth at a time (as a digest reads them), sorted with at most
// DefaultDigestMemKeys keys in memory and the rest in the temporary
// directory: reading a whole large packed book takes minutes.
func (b *Book) Entries(minDepth, maxDepth int) iter.Seq2[Entry, error] {
	return b.entries(b.db, minDepth, maxDepth)
}

// entries is Entries over r: the database or a snapshot of it (View).
func (b *Book) entries(r pebble.Reader, minDepth, maxDepth int) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		err := b.scanIn(r, minDepth, maxDepth, func(k, v []byte) error {
			e, err := b.decodeEntry(k, v)
			if err != nil {
				return err
			}
			if !yield(e, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && err != errStop {
			yield(Entry{}, err)
		}
	}
}

// errStop ends a scan early without an error.
var errStop = fmt.Errorf("stop")

// scan calls fn with the raw key and value of every position of depths
// minDepth..maxDepth, in key order, until fn returns an error. The slices
// are valid only during the call.
func (b *Book) scan(minDepth, maxDepth int, fn func(k, v []byte) error) error {
	return b.scanIn(b.db, minDepth, maxDepth, fn)
}

// scanIn is scan over r: the database or a snapshot of it (View).
func (b *Book) scanIn(r pebble.Reader, minDepth, maxDepth int, fn func(k, v []byte) error) error {
	if err := b.check(false); err != nil {
		return err
	}
	minDepth = max(minDepth, 0)
	maxDepth = min(maxDepth, b.board.Cells())
	if minDepth > maxDepth {
		return nil
	}
	if b.pk != nil {
		return b.packedScan(minDepth, maxDepth, fn)
	}
	return scanKeys(r, []byte{byte(minDepth)}, []byte{byte(maxDepth + 1)}, fn)
}

// scanKeys calls fn with the raw key and value of every key of r (the
// database, a snapshot or a batch) in [lower, upper), in key order, until
// fn returns an error, which it returns as is. A failed read is returned
// through readError. The slices are valid only during the call. This is
// the one loop over a Pebble iterator of the package.
func scanKeys(r pebble.Reader, lower, upper []byte, fn func(k, v []byte) error) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return readError(err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = fn(it.Key(), v)
		} else {
			err = readError(err)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return readError(err)
	}
	return it.Close()
}

// scanPast is scanKeys of [lower, upper) that goes on past damaged files:
// it calls damaged for each, once, and reads the keys before and after
// the keys the file may hold. It fails as scanKeys does otherwise, or when
// Pebble does not say which keys a damaged file holds.
func (b *Book) scanPast(lower, upper []byte, fn func(k, v []byte) error, damaged func(*FileCorruptError)) error {
	if b.pk != nil {
		// Positions only: the bounds are depths.
		return b.packedScan(int(lower[0]), int(upper[0])-1, fn)
	}
	var last []byte // the last key given to fn
	track := func(k, v []byte) error {
		last = append(last[:0], k...)
		return fn(k, v)
	}
	for bytes.Compare(lower, upper) < 0 {
		err := scanKeys(b.db, lower, upper, track)
		fe, ok := errors.AsType[*FileCorruptError](err)
		if !ok {
			return err
		}
		if last != nil && bytes.Compare(last, lower) >= 0 {
			lower = append(append([]byte(nil), last...), 0) // done up to last
		}
		// The keys before the file's, as far as the scan did not reach.
		if fe.Start != nil && bytes.Compare(lower, fe.Start) < 0 {
			if err := b.scanPast(lower, fe.Start, track, damaged); err != nil {
				return err
			}
		}
		damaged(fe)
		next := fe.after()
		if next == nil || bytes.Compare(next, lower) <= 0 {
			return fe // no way past it
		}
		lower = next
	}
	return nil
}

// decodeEntry decodes a raw position key and value and checks that they
// are an entry of the book's board.
func (b *Book) decodeEntry(k, v []byte) (Entry, error) {
	depth, key, err := DecodeKey(k)
	if err != nil {
		return Entry{}, err
	}
	val, err := DecodeValue(k, v)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Depth: depth, Key: key, Value: val}
	if _, err := b.entryPosition(depth, key); err != nil {
		return Entry{}, newCorrupt(k, err.Error())
	}
	if lo, hi := scoreBounds(b.board, depth); val.Score < lo || val.Score > hi {
		return Entry{}, newCorrupt(k, fmt.Sprintf("score %d outside [%d, %d], the range at depth %d", val.Score, lo, hi, depth))
	}
	return e, nil
}
