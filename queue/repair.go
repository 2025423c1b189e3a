package queue

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// Repair. Whoever holds the operator's credentials may delete what
// EnsureStreams sets up: the task stream, a lane's consumer, the
// result stream, the status bucket, a job's result consumer. A job would
// then wait for ever: no task is delivered, no result stored. The
// coordinator looks for them while it runs (RepairQueue) and sets up
// again what is missing, saying what it was.

// Parts of the queue RepairQueue may set up again, as it names them.
const (
	PartTaskStream     = "the task stream " + TaskStream
	PartLaneConsumers  = "the consumers of the task lanes " + laneConsumerPrefix + "NN"
	PartResultStream   = "the result stream " + ResultStream
	PartStatusBucket   = "the status bucket " + StatusBucket
	PartResultConsumer = "the job's result consumer"
)

// RepairQueue sets up again the parts of the queue that are missing for
// job, with cfg, and returns those it set up again (Part...): the streams,
// the workers' consumer and the status bucket with EnsureStreams; job's
// result consumer, and the result stream's subjects of job, only when
// they are gone, and then the caller must bind to its results again
// (Results), the old source being dead. A task stream set up again is
// empty: the caller publishes again what it had out.
func (c *Conn) RepairQueue(ctx context.Context, cfg StreamConfig, job string) ([]string, error) {
	var missing []string
	gone := func(err error) bool {
		return errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound) ||
			errors.Is(err, jetstream.ErrBucketNotFound)
	}
	check := func(part string, err error) error {
		switch {
		case err == nil:
		case gone(err):
			missing = append(missing, part)
		default:
			return c.notReady("look for "+part, err)
		}
		return nil
	}
	tasks, err := c.js.Stream(ctx, TaskStream)
	if err := check(PartTaskStream, err); err != nil {
		return nil, err
	}
	if err == nil {
		lanes, err := c.laneConsumersFound(ctx, tasks)
		if err != nil {
			return nil, err
		}
		if lanes < Lanes {
			missing = append(missing, PartLaneConsumers)
		}
	} else if gone(err) {
		missing = append(missing, PartLaneConsumers) // gone with their stream
	}
	results, err := c.js.Stream(ctx, ResultStream)
	if err := check(PartResultStream, err); err != nil {
		return nil, err
	}
	var resultConsumerGone bool
	if err == nil {
		_, err = results.Consumer(ctx, ResultConsumer(job))
		resultConsumerGone = gone(err)
		if err := check(PartResultConsumer, err); err != nil {
			return nil, err
		}
	}
	_, err = c.js.KeyValue(ctx, StatusBucket)
	if err := check(PartStatusBucket, err); err != nil {
		return nil, err
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if len(missing) > 1 || !resultConsumerGone {
		c.mu.Lock()
		clear(c.streams) // bound to streams that may be gone
		c.kv = nil
		c.mu.Unlock()
		if err := c.EnsureStreams(ctx, cfg); err != nil {
			return missing, err
		}
	}
	return missing, nil
}

// laneConsumersFound returns how many of the lanes' consumers the task
// stream has.
func (c *Conn) laneConsumersFound(ctx context.Context, tasks jetstream.Stream) (int, error) {
	found := 0
	names := tasks.ConsumerNames(ctx)
	for name := range names.Name() {
		if _, ok := parseLaneConsumer(name); ok {
			found++
		}
	}
	if err := names.Err(); err != nil {
		return 0, c.notReady("look for "+PartLaneConsumers, err)
	}
	return found, nil
}
