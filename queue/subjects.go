package queue

import (
	"fmt"
	"strconv"
	"strings"
)

// Names of the JetStream objects. They are part of the protocol between a
// coordinator and its workers: changing one strands the other side.
const (
	TaskStream     = "C4BOOK_TASKS"   // stream of tasks, subjects "c4book.tasks.<job>"
	ResultStream   = "C4BOOK_RESULTS" // stream of results, subjects "c4book.results.<job>"
	WorkerConsumer = "c4book-workers" // the durable consumer every worker pulls tasks from
	StatusBucket   = "c4book-status"  // KV bucket of job and worker status

	taskSubjectPrefix   = "c4book.tasks."
	resultSubjectPrefix = "c4book.results."
	coordConsumerPrefix = "c4book-coord-"

	// maxDeliveriesAdvisory is the subject on which the server announces a
	// task that reached MaxDeliver.
	maxDeliveriesAdvisory = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + TaskStream + "." + WorkerConsumer

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

// TaskSubject returns the subject of the tasks of job: "c4book.tasks.<job>".
func TaskSubject(job string) string { return taskSubjectPrefix + job }

// ResultSubject returns the subject of the results of job:
// "c4book.results.<job>".
func ResultSubject(job string) string { return resultSubjectPrefix + job }

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
func workerKey(id string) string {
	var b strings.Builder
	b.WriteString(workerKeyPrefix)
	for i := 0; i < len(id); i++ {
		if c := id[i]; isIDByte(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "=%02X", c)
		}
	}
	return b.String()
}
