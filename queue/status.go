package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The status bucket holds JSON, so that people read it with the nats CLI
// (nats kv get c4book-status job.<job>):
//
//	job.<job>      JobStatus, put by the coordinator
//	worker.<id>    WorkerStatus, put by each worker; removed WorkerStatusTTL
//	               after its last put (the id escaped, see workerKey)

// WorkerStatus is a worker's heartbeat: who it is and what it has done.
type WorkerStatus struct {
	WorkerID string    `json:"worker_id"`
	Host     string    `json:"host"`
	Solved   uint64    `json:"solved"` // positions solved since Started
	Nodes    uint64    `json:"nodes"`  // positions searched since Started
	Tasks    uint64    `json:"tasks"`  // tasks completed since Started
	Started  time.Time `json:"started"`
	Seen     time.Time `json:"seen"` // when this status was put
	Busy     bool      `json:"busy"` // on a task now, or took one since its previous status
	JobID    string    `json:"job_id,omitempty"`
	// Paused says why the worker takes no task now, its machine's owner
	// coming first (worker.RunGated); empty while it works.
	Paused string `json:"paused,omitempty"`
}

// JobStatus is the coordinator's account of a job.
type JobStatus struct {
	JobID string `json:"job_id"`
	State string `json:"state"` // a book.JobState: "planning", "solving", "deriving", "done", ...
	Total uint64 `json:"total"` // positions of the phase (0 while planning: not known yet)
	Done  uint64 `json:"done"`  // of them, made, solved or scored
	// Message says what holds the job up, if anything ("waiting for disk
	// space").
	Failed  uint64    `json:"failed"`
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	Message string    `json:"message,omitempty"`
	// Quarantined are the workers whose results the coordinator ignores,
	// after rejecting too many of them.
	Quarantined []string `json:"quarantined,omitempty"`
	// Workers counts, by worker (the sender of the results), what the
	// coordinator made of their results in its run.
	Workers map[string]WorkerResults `json:"workers,omitempty"`
}

// WorkerResults counts what a coordinator made of one worker's results.
type WorkerResults struct {
	// Accepted are the results that passed the checks (a task solved
	// twice included), less those a cross-check later found wrong.
	Accepted uint64 `json:"accepted"`
	// Rejected are the results rejected: forged, for a task not issued,
	// with impossible scores, or found wrong by a cross-check.
	Rejected uint64 `json:"rejected"`
	// CrossPassed and CrossFailed are the results of cross-checked tasks
	// that another worker or the coordinator confirmed, and those it
	// found wrong.
	CrossPassed uint64 `json:"cross_passed,omitempty"`
	CrossFailed uint64 `json:"cross_failed,omitempty"`
	// Positions are the positions of its results that the job stored on
	// its word, or with a cross-check's: the worker's share of the job's
	// DONE, as current as the job's status (a worker's own report,
	// WorkerStatus.Solved, comes every 15 s). Absent from the status of
	// a coordinator from before it: 0.
	Positions uint64 `json:"positions,omitempty"`
}

// statusKV returns the status bucket, bound once and kept.
func (c *Conn) statusKV(ctx context.Context) (jetstream.KeyValue, error) {
	c.mu.Lock()
	kv := c.kv
	c.mu.Unlock()
	if kv != nil {
		return kv, nil
	}
	kv, err := c.js.KeyValue(ctx, StatusBucket)
	if err != nil {
		return nil, c.notReady("bucket "+StatusBucket, err)
	}
	c.mu.Lock()
	c.kv = kv
	c.mu.Unlock()
	return kv, nil
}

// PutWorkerStatus stores s under its worker id, to be removed
// WorkerStatusTTL later unless put again. Seen is set to now if zero.
func (c *Conn) PutWorkerStatus(ctx context.Context, s WorkerStatus) error {
	if err := ValidWorkerID(s.WorkerID); err != nil {
		return fmt.Errorf("queue: put worker status: %w", err)
	}
	if s.Seen.IsZero() {
		s.Seen = time.Now()
	}
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("queue: put worker status: %w", err)
	}
	if _, err := c.statusKV(ctx); err != nil {
		return err
	}
	// A KV put is a publish on the bucket's subject; published directly, it
	// can carry a per-message TTL, which the KV Put API does not offer.
	subject := "$KV." + StatusBucket + "." + workerKey(s.WorkerID)
	if _, err := c.js.Publish(ctx, subject, data, jetstream.WithMsgTTL(c.workerTTL)); err != nil {
		return c.notReady("put worker status "+s.WorkerID, err)
	}
	return nil
}

// RemoveWorkerStatus removes a worker's status: the worker is leaving.
// Removing a status that is not there is not an error.
func (c *Conn) RemoveWorkerStatus(ctx context.Context, workerID string) error {
	if err := ValidWorkerID(workerID); err != nil {
		return fmt.Errorf("queue: remove worker status: %w", err)
	}
	kv, err := c.statusKV(ctx)
	if err != nil {
		return err
	}
	if err := kv.Purge(ctx, workerKey(workerID)); err != nil {
		return c.notReady("remove worker status "+workerID, err)
	}
	return nil
}

// Workers returns the statuses of the workers seen within WorkerStatusTTL,
// ordered by worker id. The error wraps ErrForbidden if the server
// refuses to let the connection read them. A key that holds no status of
// its own worker is left out (see Junk).
func (c *Conn) Workers(ctx context.Context) ([]WorkerStatus, error) {
	out, _, err := listStatuses(ctx, c, workerKeyPrefix+">", func(s WorkerStatus) string { return workerKey(s.WorkerID) })
	slices.SortFunc(out, func(a, b WorkerStatus) int { return strings.Compare(a.WorkerID, b.WorkerID) })
	return out, err
}

// Jobs returns the statuses of every job a coordinator reported, ordered by
// job id. The error wraps ErrForbidden if the server refuses to let the
// connection read them. A key that holds no status of its own job is
// left out (see Junk).
func (c *Conn) Jobs(ctx context.Context) ([]JobStatus, error) {
	out, _, err := listStatuses(ctx, c, jobKey("*"), func(s JobStatus) string { return jobKey(s.JobID) })
	slices.SortFunc(out, func(a, b JobStatus) int { return strings.Compare(a.JobID, b.JobID) })
	return out, err
}

// Junk returns the keys of the status bucket whose latest message is no
// status c4book wrote there, in order ("job.<job>", "worker.<id>"): what
// Workers and Jobs leave out.
//
// Any client may send a request to the JetStream API with any reply
// subject, and the server publishes its answer there, whatever the
// client's own permissions: a worker's key can thus have the server
// write on a job's status key, or on another worker's. The server cannot
// be told to refuse that, so readers tell junk from statuses instead: a
// status is one JSON object naming the key's own job or worker
// (decodeStatus). The owner's next put replaces the junk.
func (c *Conn) Junk(ctx context.Context) ([]string, error) {
	_, wj, err := listStatuses(ctx, c, workerKeyPrefix+">", func(s WorkerStatus) string { return workerKey(s.WorkerID) })
	if err != nil {
		return nil, err
	}
	_, jj, err := listStatuses(ctx, c, jobKey("*"), func(s JobStatus) string { return jobKey(s.JobID) })
	if err != nil {
		return nil, err
	}
	junk := append(jj, wj...)
	slices.Sort(junk)
	return junk, nil
}

// listStatuses reads the statuses of the status bucket whose keys match
// filter, each from the key keyOf names: the statuses, and the keys
// holding anything else (junk: see Junk). Entries gone meanwhile are
// skipped.
//
// The keys come from the bucket stream's subjects (a stream info
// request), not from nats.go's KV key lister: the lister creates a push
// consumer on the bucket, and a connection allowed to create one could
// choose where the consumer delivers, into the task stream for instance.
// Reading the status this way needs only requests that read
// (ObserverPermissions). A key whose latest message is a deletion, or the
// marker of an expired worker status, is listed but not read (Get says
// it is deleted).
//
// A request the server refuses ends the read at once with an error
// wrapping ErrForbidden (failOnRefusal): credentials that may not read the
// status, rather than a server that does not answer.
func listStatuses[T any](ctx context.Context, c *Conn, filter string, keyOf func(T) string) (statuses []T, junk []string, err error) {
	ctx, stop := c.failOnRefusal(ctx)
	defer stop()
	statuses, junk, err = readStatuses(ctx, c, filter, keyOf)
	return statuses, junk, refusedErr(ctx, err)
}

// readStatuses is listStatuses without the watch for refusals.
func readStatuses[T any](ctx context.Context, c *Conn, filter string, keyOf func(T) string) (statuses []T, junk []string, err error) {
	kv, err := c.statusKV(ctx)
	if err != nil {
		return nil, nil, err
	}
	all, err := c.statusKeys(ctx, filter)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range all {
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue // expired meanwhile
		}
		if err != nil {
			return nil, nil, c.notReady("get "+k, err)
		}
		var s T
		if err := decodeStatus(e.Value(), &s); err != nil || keyOf(s) != k {
			c.log.Debug("queue: a status key holds no status of its own", "key", k, "err", err)
			junk = append(junk, k)
			continue
		}
		statuses = append(statuses, s)
	}
	return statuses, junk, nil
}

// decodeStatus decodes data, the latest message on a status key, into s:
// one JSON object, nothing after it. Fields s lacks are ignored, so that
// a reader reads the statuses of a later version. What the server
// answers to a request (stream information, an error, a task) names no
// job or worker, so the caller's check of the id tells it from a status.
func decodeStatus[T any](data []byte, s *T) error {
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(s); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one value")
	}
	return nil
}

// statusSubjectPrefix starts the subject of each key of the status bucket.
const statusSubjectPrefix = "$KV." + StatusBucket + "."

// statusKeys returns the keys of the status bucket that match filter, in
// order, from the subjects its stream holds messages on.
func (c *Conn) statusKeys(ctx context.Context, filter string) ([]string, error) {
	s, err := c.stream(ctx, statusStream)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(statusSubjectPrefix+filter))
	if err != nil {
		return nil, c.notReady("list "+filter, err)
	}
	keys := make([]string, 0, len(info.State.Subjects))
	for subject := range info.State.Subjects {
		if k, ok := strings.CutPrefix(subject, statusSubjectPrefix); ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// PutJobStatus stores s under its job id. Updated is set to now if zero.
func (c *Conn) PutJobStatus(ctx context.Context, s JobStatus) error {
	if err := ValidJobID(s.JobID); err != nil {
		return fmt.Errorf("queue: put job status: %w", err)
	}
	if s.Updated.IsZero() {
		s.Updated = time.Now()
	}
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("queue: put job status: %w", err)
	}
	kv, err := c.statusKV(ctx)
	if err != nil {
		return err
	}
	if _, err := kv.Put(ctx, jobKey(s.JobID), data); err != nil {
		return c.notReady("put job status "+s.JobID, err)
	}
	return nil
}

// JobStatus returns the status of job. The error wraps ErrNotFound if
// there is none, ErrForbidden if the server refuses to let the
// connection read it.
func (c *Conn) JobStatus(ctx context.Context, job string) (JobStatus, error) {
	if err := ValidJobID(job); err != nil {
		return JobStatus{}, fmt.Errorf("queue: job status: %w", err)
	}
	ctx, stop := c.failOnRefusal(ctx)
	defer stop()
	s, err := c.jobStatus(ctx, job)
	return s, refusedErr(ctx, err)
}

// jobStatus is JobStatus without the watch for refusals.
func (c *Conn) jobStatus(ctx context.Context, job string) (JobStatus, error) {
	kv, err := c.statusKV(ctx)
	if err != nil {
		return JobStatus{}, err
	}
	e, err := kv.Get(ctx, jobKey(job))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return JobStatus{}, fmt.Errorf("queue: job status of %s: %w", job, ErrNotFound)
	}
	if err != nil {
		return JobStatus{}, c.notReady("job status of "+job, err)
	}
	var s JobStatus
	if err := decodeStatus(e.Value(), &s); err != nil || s.JobID != job {
		return JobStatus{}, fmt.Errorf("queue: job status of %s: %w: its key holds no status of the job (see Junk)", job, ErrMalformed)
	}
	return s, nil
}
