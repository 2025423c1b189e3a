package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Repair. Whoever holds the operator's credentials may delete what
// EnsureStreams sets up: the task stream, a lane's consumer, the
// result stream, the status bucket, a job's result consumer. A job would
// then wait for ever: no task is delivered, no result stored. The
// coordinator looks for them while it runs (RepairQueue) and sets up
// again what is missing, saying what it was.
//
// A stream deleted is not gone at once: the server takes it out of its
// account's list first, then closes it and its consumers, and removes its
// files last. A stream created again in between (the coordinator looks
// for deleted parts every few seconds) takes over the old one's files,
// with its messages (its last sequence is not 0), and then loses them
// under it: the server takes no message into it again, and every publish
// waits for an answer that never comes, the job with it (seen on a loaded
// machine: TestRun_queueDeleted hung for 9 minutes). So RepairQueue waits
// streamGonePause before it creates a deleted stream again, and a stream
// it created that is not empty is deleted and created again.

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
		if err := c.setUpAgain(ctx, cfg, missing); err != nil {
			return missing, err
		}
	}
	return missing, nil
}

// streamGonePause is how long RepairQueue leaves the server to finish
// deleting a stream before it creates it again; staleStreamTries is how
// many times it creates it before it gives up for this look.
const (
	streamGonePause  = time.Second
	staleStreamTries = 3
)

// setUpAgain sets up the queue again with EnsureStreams, missing being the
// parts found missing, until the streams among them are new when created
// (see Repair).
func (c *Conn) setUpAgain(ctx context.Context, cfg StreamConfig, missing []string) error {
	var recreated []string // the names of the streams missing
	for part, name := range map[string]string{PartTaskStream: TaskStream, PartResultStream: ResultStream} {
		if slices.Contains(missing, part) {
			recreated = append(recreated, name)
		}
	}
	for try := 1; ; try++ {
		if len(recreated) > 0 {
			if err := sleep(ctx, streamGonePause); err != nil {
				return err
			}
		}
		c.mu.Lock()
		clear(c.streams) // bound to streams that may be gone
		c.kv = nil
		c.mu.Unlock()
		if err := c.EnsureStreams(ctx, cfg); err != nil {
			return err
		}
		var stale []string
		for _, name := range recreated {
			c.mu.Lock()
			s := c.streams[name]
			c.mu.Unlock()
			if s != nil && s.CachedInfo().State.LastSeq > 0 {
				stale = append(stale, name)
			}
		}
		if len(stale) == 0 {
			return nil
		}
		if try == staleStreamTries {
			return fmt.Errorf("queue: streams %v created again over their deleted files %d times: %w", stale, try, ErrNotReady)
		}
		c.log.Warn("queue: a stream created again took over the deleted one's files: deleting it and creating it again", "streams", stale)
		for _, name := range stale {
			if err := c.js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
				return c.notReady("delete stream "+name, err)
			}
		}
		recreated = stale
	}
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
