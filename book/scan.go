package book

import (
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
func (b *Book) Entries(minDepth, maxDepth int) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		err := b.scan(minDepth, maxDepth, func(k, v []byte) error {
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
	if err := b.check(false); err != nil {
		return err
	}
	minDepth = max(minDepth, 0)
	maxDepth = min(maxDepth, b.board.Cells())
	if minDepth > maxDepth {
		return nil
	}
	it, err := b.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte{byte(minDepth)},
		UpperBound: []byte{byte(maxDepth + 1)},
	})
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fmt.Errorf("at key %s: %w", FormatKey(it.Key()), err)
		}
		if err := fn(it.Key(), v); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
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
		return Entry{}, &CorruptError{Key: k, Reason: err.Error()}
	}
	if lo, hi := scoreBounds(b.board, depth); val.Score < lo || val.Score > hi {
		return Entry{}, &CorruptError{Key: k, Reason: fmt.Sprintf("score %d outside [%d, %d], the range at depth %d", val.Score, lo, hi, depth)}
	}
	return e, nil
}
