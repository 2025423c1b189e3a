package book

import (
	"errors"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// PutJob stores job j, synced, replacing the job of the same ID. It sets
// j.Updated to now, and j.Created too when the book does not hold the job
// yet and j.Created is zero; it returns the job as stored.
func (b *Book) PutJob(j Job) (Job, error) {
	if err := b.check(true); err != nil {
		return Job{}, err
	}
	if err := j.validate(b.board); err != nil {
		return Job{}, err
	}
	j.Updated = time.Now().UTC()
	if j.Created.IsZero() {
		old, ok, err := b.Job(j.ID)
		if err != nil {
			return Job{}, err
		}
		j.Created = j.Updated
		if ok && !old.Created.IsZero() {
			j.Created = old.Created
		}
	}
	v, err := encodeJob(&j)
	if err != nil {
		return Job{}, err
	}
	if err := b.db.Set(jobKey(j.ID), v, pebble.Sync); err != nil {
		return Job{}, err
	}
	return j, nil
}

// Job returns the job of the given ID and whether the book holds it.
func (b *Book) Job(id string) (Job, bool, error) {
	if err := b.check(false); err != nil {
		return Job{}, false, err
	}
	if b.pk != nil {
		j := b.packedJob()
		return j, j.ID == id, nil
	}
	k := jobKey(id)
	v, closer, err := b.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return Job{}, false, nil
	}
	if err != nil {
		return Job{}, false, readError(err)
	}
	defer closer.Close()
	j, err := decodeJob(k, v)
	if err != nil {
		return Job{}, false, err
	}
	return j, true, nil
}

// Jobs returns every job of the book, ordered by ID.
func (b *Book) Jobs() ([]Job, error) {
	if err := b.check(false); err != nil {
		return nil, err
	}
	if b.pk != nil {
		return []Job{b.packedJob()}, nil
	}
	var jobs []Job
	err := scanKeys(b.db, []byte{metaPrefix, kindJob}, []byte{metaPrefix, kindJob + 1}, func(k, v []byte) error {
		j, err := decodeJob(k, v)
		if err != nil {
			return err
		}
		jobs = append(jobs, j)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return jobs, nil
}

// DeleteJob removes the job of the given ID, synced. Removing a job the
// book does not hold is not an error.
func (b *Book) DeleteJob(id string) error {
	if err := b.check(true); err != nil {
		return err
	}
	return b.db.Delete(jobKey(id), pebble.Sync)
}
