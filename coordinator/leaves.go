package coordinator

import (
	"errors"
	"fmt"
	"io/fs"
	"iter"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/internal/keyfile"
)

// jobLeaves are a plan's leaves in the job's order (see MakePlan): leaf i
// of the job is leaves[order[i]], or leaves[i] in a plan made before
// orders. Its methods may be called from several goroutines at once.
type jobLeaves struct {
	keys  *keyfile.File // the leaves file, in key order
	order *keyfile.File // the order list; nil: key order
}

// openLeaves opens the leaves of the whole plan in dir, and checks that
// the order names each leaf once: a leaf left out would never be solved,
// and the job could not derive (ErrMissingLeaf).
func openLeaves(dir string) (*jobLeaves, error) {
	keys, err := keyfile.Open(leavesFile(dir))
	if err != nil {
		return nil, err
	}
	l := &jobLeaves{keys: keys}
	order, err := keyfile.OpenList(orderFile(dir))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return l, nil // a plan made before orders
	case err != nil:
		keys.Close()
		return nil, err
	case order.Len() != keys.Len():
		keys.Close()
		order.Close()
		return nil, fmt.Errorf("plan %s: an order of %d leaves for %d leaves", dir, order.Len(), keys.Len())
	}
	seen := newBitset(keys.Len())
	sc := order.Scan(0, order.Len())
	for sc.Next() {
		i := sc.Key()
		if i >= uint64(keys.Len()) || seen.has(int64(i)) {
			err = fmt.Errorf("plan %s: the order names leaf %d of %d twice or out of range: remove the plan to make it again", dir, i, keys.Len())
			break
		}
		seen.set(int64(i))
	}
	if err == nil {
		err = sc.Err()
	}
	if err != nil {
		keys.Close()
		order.Close()
		return nil, err
	}
	l.order = order
	return l, nil
}

// Close closes the files.
func (l *jobLeaves) Close() error {
	err := l.keys.Close()
	if l.order != nil {
		if oerr := l.order.Close(); err == nil {
			err = oerr
		}
	}
	return err
}

// Len returns the number of leaves.
func (l *jobLeaves) Len() int64 { return l.keys.Len() }

// Keys appends to dst the keys of the job's leaves [from, to), in the
// job's order, and returns it.
func (l *jobLeaves) Keys(dst []uint64, from, to int64) ([]uint64, error) {
	if l.order == nil {
		return l.keys.Keys(dst, from, to)
	}
	idx, err := l.order.Keys(nil, from, to)
	if err != nil {
		return dst, err
	}
	var one [1]uint64
	for _, i := range idx {
		if i >= uint64(l.keys.Len()) {
			return dst, fmt.Errorf("%s: leaf %d of %d", l.order.Path(), i, l.keys.Len())
		}
		k, err := l.keys.Keys(one[:0], int64(i), int64(i)+1)
		if err != nil {
			return dst, err
		}
		dst = append(dst, k[0])
	}
	return dst, nil
}

// bitset is a set of leaves, by their place in the job's order.
type bitset []uint64

func newBitset(n int64) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) set(i int64)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int64) bool { return b[i/64]&(1<<(i%64)) != 0 }

// having returns the leaves, by their place in the job's order, that have
// an entry in entries (the book's entries of the leaves' depth, in key
// order) for which match is true. It reads the leaves file and the order
// once, beside entries, and keeps two bits a leaf in memory.
func (l *jobLeaves) having(entries iter.Seq2[book.Entry, error], match func(book.Entry) bool) (bitset, error) {
	next, stop := iter.Pull2(entries)
	defer stop()
	e, err, ok := next()
	byKey := newBitset(l.Len())
	sc := l.keys.Scan(0, l.keys.Len())
	for sc.Next() {
		for ok && err == nil && e.Key < sc.Key() {
			e, err, ok = next()
		}
		if err != nil {
			return nil, err
		}
		if ok && e.Key == sc.Key() && match(e) {
			byKey.set(sc.Index())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if l.order == nil {
		return byKey, nil
	}
	inOrder := newBitset(l.Len())
	oc := l.order.Scan(0, l.order.Len())
	for oc.Next() {
		if oc.Key() >= uint64(l.Len()) {
			return nil, fmt.Errorf("%s: leaf %d of %d", l.order.Path(), oc.Key(), l.Len())
		}
		if byKey.has(int64(oc.Key())) {
			inOrder.set(oc.Index())
		}
	}
	return inOrder, oc.Err()
}
