package queue

import (
	"fmt"
	"strconv"
	"strings"
)

// Names of the JetStream objects. They are part of the protocol between a
// coordinator and its workers: changing one strands the other side.
const (
	TaskStream   = "C4BOOK_TASKS"   // stream of tasks, subjects "c4book.tasks.<job>.<lane>", a consumer per lane (lanes.go)
	ResultStream = "C4BOOK_RESULTS" // stream of results, subjects "c4book.results.<job>.<worker>"
	StatusBucket = "c4book-status"  // KV bucket of job and worker status

	taskSubjectPrefix   = "c4book.tasks."
	resultSubjectPrefix = "c4book.results."
	coordConsumerPrefix = "c4book-coord-"
	// statusStream is the stream that holds the status bucket (NATS names
	// a bucket's stream KV_<bucket>).
	statusStream = "KV_" + StatusBucket

	// maxDeliveriesAdvisory is the subject on which the server announces a
	// task that reached MaxDeliver, in any lane.
	maxDeliveriesAdvisory = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + TaskStream + ".*"

	// senderHeader names the publisher of a message ("coordinator" or the
	// worker id), so that a message that does not decode can still be
	// traced to who sent it.
	senderHeader = "C4book-Sender"
)

// Limits of ids.
const (
	MaxJobIDLen    = 64  // bytes in a job id
	MaxWorkerIDLen = 128 // bytes in a worker id
)

// TaskSubject returns the prefix of the subjects of the tasks of job:
// "c4book.tasks.<job>", followed by a lane (TaskLaneSubject).
func TaskSubject(job string) string { return taskSubjectPrefix + job }

// ResultSubject returns the subject of the results of job as workers
// before per-worker subjects published them: "c4book.results.<job>". The
// coordinator still reads it, trusting such a result's own worker id (a
// worker with a key cannot publish there).
func ResultSubject(job string) string { return resultSubjectPrefix + job }

// WorkerResultSubject returns the subject on which worker publishes the
// results of job: "c4book.results.<job>.<worker>", the worker id escaped
// as in status keys (workerKey), so that it is one subject token. A worker
// with a key may publish on its own subjects only (WorkerPermissions), so
// the coordinator takes the worker's identity from the subject.
func WorkerResultSubject(job, worker string) string {
	return resultSubjectPrefix + job + "." + escapeID(worker)
}

// subjectWorker returns the worker a result subject of job names: "" for
// the per-job subject, the unescaped worker id for a per-worker one; ok is
// false for any other subject.
func subjectWorker(subject, job string) (worker string, ok bool) {
	rest, ok := strings.CutPrefix(subject, resultSubjectPrefix+job)
	switch {
	case !ok:
		return "", false
	case rest == "":
		return "", true
	case rest[0] != '.':
		return "", false
	}
	worker, err := unescapeID(rest[1:])
	if err != nil || ValidWorkerID(worker) != nil {
		return "", false
	}
	return worker, true
}

// ResultConsumer returns the name of the durable consumer through which the
// coordinator reads the results of job: "c4book-coord-<job>".
func ResultConsumer(job string) string { return coordConsumerPrefix + job }

// ValidJobID returns nil if job can name a job: 1 to MaxJobIDLen bytes of
// ASCII letters, digits, '-' and '_'. Such an id is one subject token and
// fits in a consumer name and a KV key.
func ValidJobID(job string) error {
	if job == "" {
		return fmt.Errorf("%w: empty job id", ErrInvalidID)
	}
	if len(job) > MaxJobIDLen {
		return fmt.Errorf("%w: job id %.20q... is %d bytes, at most %d", ErrInvalidID, job, len(job), MaxJobIDLen)
	}
	for i := 0; i < len(job); i++ {
		if !isIDByte(job[i]) {
			return fmt.Errorf("%w: job id %q: byte %d (%q) is not a letter, digit, '-' or '_'", ErrInvalidID, job, i, job[i])
		}
	}
	return nil
}

// ValidWorkerID returns nil if id can name a worker: 1 to MaxWorkerIDLen
// bytes of printable ASCII without spaces (0x21..0x7E), such as
// "host-3/1234".
func ValidWorkerID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty worker id", ErrInvalidID)
	}
	if len(id) > MaxWorkerIDLen {
		return fmt.Errorf("%w: worker id %.20q... is %d bytes, at most %d", ErrInvalidID, id, len(id), MaxWorkerIDLen)
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7E {
			return fmt.Errorf("%w: worker id %q: byte %d (%#02x) is not printable ASCII", ErrInvalidID, id, i, id[i])
		}
	}
	return nil
}

// isIDByte reports whether c may appear in a job id.
func isIDByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// taskMsgID is the message id of a task, "<job>/<task>": publishing the
// same task twice within DuplicateWindow stores it once.
func taskMsgID(job string, task uint64) string {
	return job + "/" + strconv.FormatUint(task, 10)
}

// resultMsgID is the message id of a result, "<job>/<task>/<worker>".
func resultMsgID(job string, task uint64, worker string) string {
	return taskMsgID(job, task) + "/" + worker
}

// Keys of the status bucket.
const (
	jobKeyPrefix    = "job."
	workerKeyPrefix = "worker."
)

// jobKey is the status bucket key of a job: "job.<job>".
func jobKey(job string) string { return jobKeyPrefix + job }

// workerKey is the status bucket key of a worker: "worker.<id>", with every
// byte of the id other than a letter, digit, '-' or '_' written as "=XX"
// (hex), since KV keys allow few characters: "host-3/1234" is
// "worker.host-3=2F1234". The encoding is one-to-one.
func workerKey(id string) string { return workerKeyPrefix + escapeID(id) }

// escapeID writes every byte of id other than a letter, digit, '-' or '_'
// as "=XX" (hex, upper case): the result is one subject token and a KV
// key part.
func escapeID(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		if c := id[i]; isIDByte(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "=%02X", c)
		}
	}
	return b.String()
}

// unescapeID inverts escapeID; it refuses what escapeID never writes, so
// that one id has one escaped form.
func unescapeID(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isIDByte(c) {
			b.WriteByte(c)
			continue
		}
		if c != '=' || i+2 >= len(s) {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil || isIDByte(byte(v)) || strings.ToUpper(s[i+1:i+3]) != s[i+1:i+3] {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}
