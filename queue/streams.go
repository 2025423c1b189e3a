package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamConfig is what the coordinator chooses about task delivery.
type StreamConfig struct {
	// AckWait is how long a worker holds a task without acking it or
	// reporting progress (TaskMsg.InProgress) before the server delivers it
	// again; at least a second (queue.ack-wait). Later deliveries of the
	// same task wait longer: see taskBackOff.
	AckWait time.Duration
	// MaxDeliver is how many times a task is delivered before it is given
	// up on and reported (WatchMaxDeliveries); at least 1
	// (queue.max-deliver).
	MaxDeliver int
	// Replicas is how many servers of a NATS cluster keep a copy of the
	// streams, the consumers and the status bucket, 1..MaxReplicas
	// (queue.replicas); more than 1 needs a JetStream cluster of at least
	// as many servers. The default value (0) is 1.
	Replicas int
}

// MaxReplicas is the most copies JetStream keeps of a stream.
const MaxReplicas = 5

// Fixed settings of the streams, consumers and the status bucket.
const (
	// DuplicateWindow is how long the streams remember message ids: a task
	// or result published again within it is stored once. It covers the
	// retries of a publish whose ack was lost; a copy stored later is
	// harmless (a task solved twice, a result ignored as a duplicate), and
	// the server keeps every id of the window in memory, a few hundred
	// bytes each, in the coordinator's heap when the server is embedded:
	// at the message rates of the scale benchmark a window of minutes
	// holds tens of MB (docs/benchmarks.md), so the window is short.
	DuplicateWindow = 20 * time.Second
	// WorkerStatusTTL is how long a worker's status stays in the status
	// bucket after its last PutWorkerStatus. Workers put theirs well
	// within it (the worker's status interval, worker.Config.StatusEvery,
	// 15 s by default); an entry that disappears is a worker gone.
	WorkerStatusTTL = 2 * time.Minute

	// minAckWait is the least StreamConfig.AckWait.
	minAckWait = time.Second
	// taskMaxAckPending is the most tasks of a lane delivered and not yet
	// acked, over all workers: each worker thread holds one or two, so
	// this bounds the worker threads one lane serves at once.
	taskMaxAckPending = 10_000
	// taskMaxWaiting is the most pull requests waiting on a lane's
	// consumer at once: one per idle worker thread. It cannot be changed
	// once the consumer exists.
	taskMaxWaiting = 4096
	// maxBackOffSteps bounds the length of the task consumer's BackOff.
	maxBackOffSteps = 4

	// taskStreamMaxBytes and resultStreamMaxBytes bound the streams: past
	// them, publishing is refused (and retried) rather than filling the
	// server's disk. Coordinators keep a window of tasks in the stream
	// (coordinator.Config.Window, 4096 by default: a few MB); results
	// pile up only while no coordinator takes them, and those of a whole
	// deep book fit well within the bound.
	taskStreamMaxBytes   = 256 << 20
	resultStreamMaxBytes = 1 << 30

	// resultAckWait is how long the coordinator holds a result before it is
	// delivered again: it writes a batch of results and then acks them.
	resultAckWait = 2 * time.Minute
	// resultMaxAckPending is the most results delivered to the coordinator
	// and not yet acked.
	resultMaxAckPending = 20_000

	// statusMarkerTTL is how long the status bucket keeps the marker of a
	// worker entry removed by its TTL (required for per-key TTLs).
	statusMarkerTTL = time.Minute
)

// Validate checks that cfg can configure the task consumer. The error
// wraps ErrInvalidOptions.
func (cfg StreamConfig) Validate() error {
	if cfg.AckWait < minAckWait {
		return fmt.Errorf("%w: AckWait %v is below %v (queue.ack-wait)", ErrInvalidOptions, cfg.AckWait, minAckWait)
	}
	if cfg.MaxDeliver < 1 {
		return fmt.Errorf("%w: MaxDeliver %d is below 1 (queue.max-deliver)", ErrInvalidOptions, cfg.MaxDeliver)
	}
	if cfg.Replicas < 0 || cfg.Replicas > MaxReplicas {
		return fmt.Errorf("%w: Replicas %d is out of range 1..%d (queue.replicas)", ErrInvalidOptions, cfg.Replicas, MaxReplicas)
	}
	return nil
}

// taskBackOff is the ack wait of each delivery of a task: AckWait for the
// first, then doubling (2, 4, 8 times AckWait) so that a task that outlived
// its worker's AckWait, or keeps killing workers, is tried again with more
// room and less haste. There are min(MaxDeliver, maxBackOffSteps) steps;
// later deliveries use the last one. Progress reports (InProgress) restart
// the current step's wait.
func taskBackOff(cfg StreamConfig) []time.Duration {
	n := min(cfg.MaxDeliver, maxBackOffSteps)
	b := make([]time.Duration, n)
	for i := range b {
		b[i] = cfg.AckWait << i
	}
	return b
}

// EnsureStreams creates the task and result streams, the workers' task
// consumer and the status bucket, or updates them to this configuration.
// It is idempotent; the coordinator calls it before publishing.
func (c *Conn) EnsureStreams(ctx context.Context, cfg StreamConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// The result stream keeps the subjects of the jobs open now (see
	// jobsubjects.go).
	resultSubjects := []string{noJobSubject}
	if s, err := c.js.Stream(ctx, ResultStream); err == nil {
		if info, err := s.Info(ctx); err == nil {
			if open := slices.DeleteFunc(slices.Clone(info.Config.Subjects), func(s string) bool {
				return s == noJobSubject || !strings.HasPrefix(s, resultSubjectPrefix) || strings.HasSuffix(s, ">")
			}); len(open) > 0 {
				resultSubjects = open
			}
		}
	}
	if err := c.dropOneQueue(ctx); err != nil {
		return err
	}
	for _, sc := range []jetstream.StreamConfig{
		{
			Name:        TaskStream,
			Description: "c4book: tasks (positions to solve), one subject per job and lane",
			Subjects:    []string{taskSubjectPrefix + "*.*"},
			Retention:   jetstream.WorkQueuePolicy,
			Storage:     jetstream.FileStorage,
			Duplicates:  DuplicateWindow,
			MaxBytes:    taskStreamMaxBytes,
			Discard:     jetstream.DiscardNew,
			Replicas:    max(cfg.Replicas, 1),
		},
		{
			Name:        ResultStream,
			Description: "c4book: results (exact scores), one subject per job and worker",
			// "c4book.results.<job>.<worker>", and "c4book.results.<job>"
			// of workers before per-worker subjects, of open jobs only.
			Subjects:             resultSubjects,
			Retention:            jetstream.WorkQueuePolicy,
			Storage:              jetstream.FileStorage,
			Duplicates:           DuplicateWindow,
			MaxBytes:             resultStreamMaxBytes,
			MaxMsgSize:           resultMaxMsgBytes,
			MaxMsgsPerSubject:    resultMaxMsgsPerSubject,
			Discard:              jetstream.DiscardNew,
			DiscardNewPerSubject: true,
			Replicas:             max(cfg.Replicas, 1),
		},
	} {
		s, err := c.js.CreateOrUpdateStream(ctx, sc)
		if err != nil {
			return c.notReady("create stream "+sc.Name, err)
		}
		c.mu.Lock()
		c.streams[sc.Name] = s
		c.mu.Unlock()
	}
	if err := c.ensureLanes(ctx, cfg); err != nil {
		return err
	}
	kv, err := c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:         StatusBucket,
		Description:    "c4book: job status (job.<job>) and worker heartbeats (worker.<id>), JSON",
		History:        1,
		Storage:        jetstream.FileStorage,
		LimitMarkerTTL: statusMarkerTTL,
		Replicas:       max(cfg.Replicas, 1),
	})
	if err != nil {
		return c.notReady("create bucket "+StatusBucket, err)
	}
	c.mu.Lock()
	c.kv = kv
	c.mu.Unlock()
	return nil
}

// oneQueueConsumer is the consumer of the task stream before lanes, which
// every worker pulled from.
const oneQueueConsumer = "c4book-workers"

// dropOneQueue deletes what a coordinator before lanes set up in the task
// stream: its one consumer, which takes every subject and so forbids the
// lanes' (a work-queue stream's consumers may not overlap), and its tasks,
// on subjects "c4book.tasks.<job>" no lane takes. Their coordinators and
// workers cannot work with this version's.
func (c *Conn) dropOneQueue(ctx context.Context) error {
	s, err := c.js.Stream(ctx, TaskStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return c.notReady("look at stream "+TaskStream, err)
	}
	if err := s.DeleteConsumer(ctx, oneQueueConsumer); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return c.notReady("delete the consumer "+oneQueueConsumer+" of the task queue before lanes", err)
	}
	if slices.Equal(s.CachedInfo().Config.Subjects, []string{taskSubjectPrefix + "*"}) {
		if err := s.Purge(ctx); err != nil {
			return c.notReady("purge the tasks of the queue before lanes", err)
		}
	}
	return nil
}

// ensureLanes creates the consumer of each lane, or updates it to cfg.
func (c *Conn) ensureLanes(ctx context.Context, cfg StreamConfig) error {
	for lane := range Lanes {
		_, err := c.js.CreateOrUpdateConsumer(ctx, TaskStream, jetstream.ConsumerConfig{
			Durable:       LaneConsumer(lane),
			Description:   fmt.Sprintf("c4book: lane %d of the task queue, which one worker at a time pulls from (the tail: several)", lane),
			FilterSubject: laneFilter(lane),
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       cfg.AckWait,
			MaxDeliver:    cfg.MaxDeliver,
			BackOff:       taskBackOff(cfg),
			MaxAckPending: taskMaxAckPending,
			MaxWaiting:    taskMaxWaiting,
			DeliverPolicy: jetstream.DeliverAllPolicy,
		})
		if err != nil {
			return c.notReady("create consumer "+LaneConsumer(lane), err)
		}
	}
	return nil
}
