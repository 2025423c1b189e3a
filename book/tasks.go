package book

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// # Task records
//
// A generation coordinator stores the plan of a job, its tasks, in the book
// it fills, so that a restarted coordinator issues exactly the tasks it
// issued before and recognises the results of tasks solved while it was
// down. A task is a list of position keys (solver.Position.Key, not
// canonical: the position as enumerated). The format is stable.
//
//	 byte 0      1      2          3 .. 3+n-1     3+n .. 3+n+7
//	+------+------+-----------+---------------+----------------------+
//	| 0xFF | 'T'  | n = len id|  job id       | task index, uint64 BE |   key
//	+------+------+-----------+---------------+----------------------+
//
//	 byte 0                1 ..
//	+----------------+--------------------------------------+
//	| taskVersion (1)| position keys, uint64 little endian   |   value
//	+----------------+--------------------------------------+
//
// The tasks of a job sort by index, so Tasks reads a plan in order.

const (
	kindTask    = 'T'
	taskVersion = 1
)

// taskPrefix returns the key prefix of the tasks of job id.
func taskPrefix(id string) []byte {
	return append([]byte{metaPrefix, kindTask, byte(len(id))}, id...)
}

// taskKey returns the key of task index of job id.
func taskKey(id string, index uint64) []byte {
	return binary.BigEndian.AppendUint64(taskPrefix(id), index)
}

// PutTasks stores tasks as the tasks first, first+1, ... of job id, synced,
// in one batch: all or none are stored.
func (b *Book) PutTasks(id string, first uint64, tasks [][]uint64) error {
	if err := b.check(true); err != nil {
		return err
	}
	if len(id) == 0 || len(id) > maxJobIDLen {
		return fmt.Errorf("job id %q: must be 1..%d bytes", id, maxJobIDLen)
	}
	batch := b.db.NewBatch()
	defer batch.Close()
	var v []byte
	for i, keys := range tasks {
		v = append(v[:0], taskVersion)
		for _, k := range keys {
			v = binary.LittleEndian.AppendUint64(v, k)
		}
		if err := batch.Set(taskKey(id, first+uint64(i)), v, nil); err != nil {
			return err
		}
	}
	return batch.Commit(pebble.Sync)
}

// Tasks calls fn with the index and the position keys of every stored task
// of job id, in index order, and stops at the first error fn returns. The
// keys slice is only valid during the call. A record that does not decode
// is a *CorruptError naming its key.
func (b *Book) Tasks(id string, fn func(index uint64, keys []uint64) error) error {
	if err := b.check(false); err != nil {
		return err
	}
	prefix := taskPrefix(id)
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer it.Close()
	var keys []uint64
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) != len(prefix)+8 {
			return &CorruptError{Key: k, Reason: "task key of the wrong length"}
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return readError(err)
		}
		if len(v) == 0 || v[0] != taskVersion || (len(v)-1)%8 != 0 {
			return &CorruptError{Key: k, Reason: fmt.Sprintf("task record of %d bytes, version %d", len(v), firstByte(v))}
		}
		keys = keys[:0]
		for i := 1; i < len(v); i += 8 {
			keys = append(keys, binary.LittleEndian.Uint64(v[i:]))
		}
		if err := fn(binary.BigEndian.Uint64(k[len(prefix):]), keys); err != nil {
			return err
		}
	}
	return readError(it.Error())
}

// DeleteTasks removes every task of job id, synced.
func (b *Book) DeleteTasks(id string) error {
	if err := b.check(true); err != nil {
		return err
	}
	prefix := taskPrefix(id)
	return b.db.DeleteRange(prefix, prefixEnd(prefix), pebble.Sync)
}

// firstByte returns v[0], or 0 for an empty v.
func firstByte(v []byte) byte {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// prefixEnd returns the smallest key above every key that starts with
// prefix: prefix with its last byte below 0xFF incremented and the bytes
// after that one dropped.
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // every byte 0xFF: no upper bound
}
