package book

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/c4book/c4book/solver"
)

// # On-disk format of metadata
//
// Metadata keys start with metaPrefix (0xFF), then a kind byte. The format
// is stable, like the one of positions (format.go).
//
//	 byte 0  1      2 ...
//	+------+------+---------------------+
//	| 0xFF | 'B'  |                     |   the book record (one per book)
//	+------+------+---------------------+
//	| 0xFF | 'J'  | job id (1..255 B)   |   one record per generation job
//	+------+------+---------------------+
//	| 0xFF | 'T'  | len, id, index      |   the tasks of a job (tasks.go)
//	+------+------+---------------------+
//	| 0xFF | 'W'  | name (1..64 B)      |   one record per registered worker
//	+------+------+---------------------+   (registry.go)
//
// The book record says what the book is. Its first byte is the book format
// version, at that place in every version; version 1 has three bytes:
//
//	 byte 0           1       2
//	+----------------+-------+--------+
//	| FormatVersion  | width | height |
//	+----------------+-------+--------+
//
// A book whose format version is above FormatVersion is refused
// (ErrNewerFormat); later versions may append fields.
//
// A job record is a version byte (jobVersion, 1) followed by the job as a
// JSON object with the fields of Job (id, root, depth, state, planned,
// solved, derived, tasks, task_size, runs, created, updated, message,
// quarantined, replan, plan_run).
// Readers ignore fields they do not know, so fields can be added without a
// new version.
//
// A worker record has the same shape: a version byte (workerVersion, 1)
// followed by the worker as a JSON object with the fields of Worker:
//
//	 byte 0          1 ...
//	+---------------+----------------------------------------------------+
//	| workerVersion | {"name":..,"public_key":..,"number":..,"added":..,  |
//	| 1             |  "removed":..}  (JSON, fields of Worker)           |
//	+---------------+----------------------------------------------------+
//
//	name:       the key's name part, again; 1..64 bytes of ASCII letters,
//	            digits, '-' and '_' (one NATS subject token).
//	public_key: the worker's NATS nkey user public key ("U" and 55 more
//	            base32 characters); the seed stays on the worker's machine.
//	number:     1, 2, ... in the order of registration, never reused.
//	removed:    when the worker was removed; absent while it is active. A
//	            removed worker's record stays, so that its name and number
//	            are never given to another.
//
// An observer's record (a key that may only read the cluster's status)
// has version observerVersion, 2, and one more field:
//
//	role:       "observer".
//
// A record of version 1 has no role: it is a worker's, in books written
// before observers and since. An observer's record has its own version
// so that a c4book from before observers, which would take it for a
// worker's and give its key a worker's rights, refuses it instead (a
// record of an unknown version). Workers and observers share names and
// numbers.

// FormatVersion is the book format version this package writes and the
// newest it reads.
const FormatVersion = 1

// Metadata key kinds and record versions; see the diagrams above.
const (
	kindBook = 'B'
	kindJob  = 'J'
	// 'T' was the kind of the task records of a job's plan, before plans
	// moved to files beside the book: books written then may hold some,
	// which nothing reads.
	kindWorker      = 'W'
	bookRecordLen   = 3
	jobVersion      = 1
	workerVersion   = 1
	observerVersion = 2
	maxJobIDLen     = 255
)

// bookKey is the key of the book record.
var bookKey = []byte{metaPrefix, kindBook}

// encodeBookRecord returns the book record of a book of board b.
func encodeBookRecord(b *solver.Board) []byte {
	return []byte{FormatVersion, byte(b.Width()), byte(b.Height())}
}

// decodeBookRecord returns the format version and board of a book record.
// A version above FormatVersion gives ErrNewerFormat; a record too short or
// naming an impossible board a *CorruptError.
func decodeBookRecord(v []byte) (version int, b *solver.Board, err error) {
	if len(v) == 0 {
		return 0, nil, newCorrupt(bookKey, "empty book record")
	}
	version = int(v[0])
	if version > FormatVersion {
		return version, nil, fmt.Errorf("%w: format version %d, this program reads up to %d", ErrNewerFormat, version, FormatVersion)
	}
	if version < 1 || len(v) != bookRecordLen {
		return version, nil, newCorrupt(bookKey, fmt.Sprintf("book record version %d of %d bytes", version, len(v)))
	}
	b, err = solver.NewBoard(int(v[1]), int(v[2]))
	if err != nil {
		return version, nil, newCorrupt(bookKey, err.Error())
	}
	return version, b, nil
}

// JobState is where a generation job is. It is the one vocabulary of the
// book's job record, the job status a coordinator publishes and its
// progress lines.
type JobState string

// Job states, in the order a job goes through them.
const (
	JobPlanning JobState = "planning" // enumerating its positions
	JobSolving  JobState = "solving"  // the plan is stored: workers solve the leaves
	JobDeriving JobState = "deriving" // the leaves are in: shallower scores come from deeper ones
	JobDone     JobState = "done"     // every position of the job is in the book
	JobFailed   JobState = "failed"   // stopped on an error that needs a person
	JobStopped  JobState = "stopped"  // its coordinator stopped before the end; running it again resumes
)

// oldJobStates are the states of format 1 job records written before
// JobState had its present values, and what they are now.
var oldJobStates = map[JobState]JobState{"planned": JobSolving, "running": JobSolving}

// Job is the spec and the state of one generation job: every position under
// Root up to Depth stones. A generation coordinator keeps it in the book it
// fills, so a restarted run knows what it was doing.
type Job struct {
	ID       string    `json:"id"`        // unique within the book, 1..255 bytes
	Root     string    `json:"root"`      // move string of the root position; "" is the empty board
	Depth    int       `json:"depth"`     // deepest positions of the job, in stones on the board
	State    JobState  `json:"state"`     // where the job is
	Planned  int64     `json:"planned"`   // positions the plan holds
	Solved   int64     `json:"solved"`    // positions solved by workers and written
	Derived  int64     `json:"derived"`   // positions derived from their children and written
	Tasks    int64     `json:"tasks"`     // tasks of the plan in the last run
	TaskSize int       `json:"task_size"` // most positions a task holds
	Runs     int       `json:"runs"`      // times a coordinator started on the job
	Created  time.Time `json:"created"`   // when the job was first stored
	Updated  time.Time `json:"updated"`   // when the job was last stored
	Message  string    `json:"message,omitempty"`
	// Quarantined are the workers whose results the job ignores, after
	// rejecting too many of them or being revoked (RevokeWorker): kept
	// across runs of the job.
	Quarantined []string `json:"quarantined,omitempty"`
	// Replan is set when entries of the job were taken out of the book
	// after its plan was made (RevokeWorker): its next run makes the plan
	// again, solves the leaves the book lacks and derives the rest.
	Replan bool `json:"replan,omitempty"`
	// PlanRun is the run that made the job's plan after a revocation:
	// results of tasks of earlier runs name positions of another plan and
	// are not read. 0 when no plan was made again.
	PlanRun int `json:"plan_run,omitempty"`
}

// jobKey returns the key of the job record of id.
func jobKey(id string) []byte {
	return append([]byte{metaPrefix, kindJob}, id...)
}

// validate checks the fields PutJob relies on.
func (j *Job) validate(b *solver.Board) error {
	if len(j.ID) == 0 || len(j.ID) > maxJobIDLen {
		return fmt.Errorf("job id %q: must be 1..%d bytes", j.ID, maxJobIDLen)
	}
	root, err := b.Parse(j.Root)
	if err != nil {
		return fmt.Errorf("job %q: root: %w", j.ID, err)
	}
	if j.Depth < root.Moves() || j.Depth > b.Cells() {
		return fmt.Errorf("job %q: depth %d outside [%d, %d]", j.ID, j.Depth, root.Moves(), b.Cells())
	}
	switch j.State {
	case JobPlanning, JobSolving, JobDeriving, JobDone, JobFailed, JobStopped:
	default:
		return fmt.Errorf("job %q: unknown state %q", j.ID, j.State)
	}
	return nil
}

// encodeJob returns the job record of j.
func encodeJob(j *Job) ([]byte, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	return append([]byte{jobVersion}, data...), nil
}

// decodeJob decodes the job record v stored at key k.
func decodeJob(k, v []byte) (Job, error) {
	if len(v) == 0 {
		return Job{}, newCorrupt(k, "empty job record")
	}
	if v[0] != jobVersion {
		return Job{}, newCorrupt(k, fmt.Sprintf("job record version %d, want %d", v[0], jobVersion))
	}
	var j Job
	if err := json.Unmarshal(v[1:], &j); err != nil {
		return Job{}, newCorrupt(k, "job record: "+err.Error())
	}
	if len(k) < 2 || string(k[2:]) != j.ID {
		return Job{}, newCorrupt(k, fmt.Sprintf("job record holds id %q", j.ID))
	}
	if now, ok := oldJobStates[j.State]; ok {
		j.State = now
	}
	return j, nil
}
