package queue

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/c4book/c4book/solver"
)

// # Message format
//
// Tasks and results travel as the binary messages drawn below. The format
// is stable: a message written by this version of the package is read by
// every later one. A change that old readers would misread takes a new
// version byte; a reader rejects versions it does not know, so mixed
// coordinators and workers fail loudly instead of misreading each other.
// All integers are big-endian; every length is checked against the bytes
// present and trailing bytes are an error.
//
// Task, version 1 (15 + J + 8N bytes):
//
//	 0        1         2       3        4                     12      13         13+J    15+J
//	+--------+---------+-------+--------+---------------------+-------+----------+-------+-----------------+
//	| 'T'    | version | width | height | task id (uint64)    | J (1) | job id   | N (2) | N keys (8 each) |
//	| 0x54   | 1       |       |        |                     |       | J bytes  |       | uint64          |
//	+--------+---------+-------+--------+---------------------+-------+----------+-------+-----------------+
//
//	width, height: a board the solver supports (solver.CheckSize).
//	J:             1..MaxJobIDLen; the job id passes ValidJobID.
//	N:             1..MaxKeys; every key is a position of the board
//	               (solver.Position.Key), checked by the worker.
//
// Result, version 1 (30 + J + W + 9N bytes):
//
//	 0      1         2                  10      11       11+J    12+J        12+J+W            20+J+W
//	+------+---------+------------------+-------+--------+-------+-----------+-----------------+---------------------+
//	| 'R'  | version | task id (uint64) | J (1) | job id | W (1) | worker id | nodes (uint64)  | elapsed (int64, ns) |
//	| 0x52 | 1       |                  |       |        |       | W bytes   |                 |                     |
//	+------+---------+------------------+-------+--------+-------+-----------+-----------------+---------------------+
//	 28+J+W   30+J+W            30+J+W+8N
//	+-------+-----------------+-------------------+
//	| N (2) | N keys (8 each) | N scores (1 each) |
//	|       | uint64          | int8              |
//	+-------+-----------------+-------------------+
//
//	W:       1..MaxWorkerIDLen; the worker id passes ValidWorkerID.
//	elapsed: at least 0.
//	N:       1..MaxKeys; keys echo the task's keys, scores[i] is the
//	         exact score of keys[i], in [solver.MinScore, solver.MaxScore].

// Message kinds and versions; see the diagrams above.
const (
	taskKind      = 'T'
	resultKind    = 'R'
	taskVersion   = 1
	resultVersion = 1

	taskHeaderLen   = 13 // kind, version, width, height, task id, J
	resultHeaderLen = 11 // kind, version, task id, J
	countLen        = 2  // N
	keyLen          = 8
)

// Limits of the message format.
const (
	// MaxKeys is the most positions in one task (and one result).
	MaxKeys = 4096
)

// Task is a batch of positions for one worker to solve. The positions are
// neighbours in the game tree, so one transposition table serves them all.
type Task struct {
	JobID         string   // the job the task belongs to (ValidJobID)
	TaskID        uint64   // unique within the job
	Width, Height uint8    // board size
	Keys          []uint64 // solver position keys (solver.Position.Key), 1..MaxKeys

	// How the task is delivered, not what it is: carried by its subject
	// and a header, not by the message body (lanes.go).
	Lane     int // the lane of the task stream it goes in, 0..Lanes-1
	LaneLeft int // tasks of its lane its coordinator has still to publish
}

// Result is the exact scores of the positions of one task, as one worker
// solved them.
type Result struct {
	JobID    string        // the job of the task
	TaskID   uint64        // the task solved
	WorkerID string        // the worker that solved it (ValidWorkerID)
	Scores   []int8        // one score per task key, in the task's order
	Keys     []uint64      // echo of the task's keys, so the coordinator can check them
	Nodes    uint64        // positions searched for the whole task
	Elapsed  time.Duration // time spent solving the task
}

// MarshalBinary encodes t in the format drawn at the top of codec.go. It returns an error
// wrapping ErrMalformed when t cannot be encoded (see Task.Validate).
func (t *Task) MarshalBinary() ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, taskHeaderLen+len(t.JobID)+countLen+keyLen*len(t.Keys))
	b = append(b, taskKind, taskVersion, t.Width, t.Height)
	b = binary.BigEndian.AppendUint64(b, t.TaskID)
	b = append(b, byte(len(t.JobID)))
	b = append(b, t.JobID...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(t.Keys)))
	for _, k := range t.Keys {
		b = binary.BigEndian.AppendUint64(b, k)
	}
	return b, nil
}

// UnmarshalBinary decodes a task written by MarshalBinary. Every field is
// checked as Validate does; an error wraps ErrMalformed and says what is
// wrong. On error t is unchanged. It never panics.
func (t *Task) UnmarshalBinary(data []byte) error {
	if len(data) < taskHeaderLen {
		return malformed("task: %d bytes, shorter than the %d-byte header", len(data), taskHeaderLen)
	}
	if data[0] != taskKind {
		return malformed("task: kind byte %#02x, want %#02x ('T')", data[0], taskKind)
	}
	if data[1] != taskVersion {
		return malformed("task: version %d, this program reads version %d", data[1], taskVersion)
	}
	var d Task
	d.Width, d.Height = data[2], data[3]
	d.TaskID = binary.BigEndian.Uint64(data[4:12])
	rest := data[taskHeaderLen:]
	job, rest, err := readString(rest, int(data[12]), "task: job id")
	if err != nil {
		return err
	}
	d.JobID = job
	n, rest, err := readCount(rest, keyLen, "task")
	if err != nil {
		return err
	}
	d.Keys = make([]uint64, n)
	for i := range d.Keys {
		d.Keys[i] = binary.BigEndian.Uint64(rest[keyLen*i:])
	}
	if err := d.Validate(); err != nil {
		return err
	}
	*t = d
	return nil
}

// Validate returns nil if t can be encoded: a valid job id, a board size
// the solver supports, 1..MaxKeys keys. The error wraps ErrMalformed. The
// keys are not looked at: whether each is a position to solve is checked
// where the task is used, by the worker.
func (t *Task) Validate() error {
	if err := ValidJobID(t.JobID); err != nil {
		return malformed("task: %v", err)
	}
	if err := solver.CheckSize(int(t.Width), int(t.Height)); err != nil {
		return malformed("task %s/%d: %v", t.JobID, t.TaskID, err)
	}
	if len(t.Keys) == 0 || len(t.Keys) > MaxKeys {
		return malformed("task %s/%d: %d keys, want 1..%d", t.JobID, t.TaskID, len(t.Keys), MaxKeys)
	}
	if t.Lane < 0 || t.Lane >= Lanes || t.LaneLeft < 0 {
		return malformed("task %s/%d: lane %d with %d left, want a lane 0..%d", t.JobID, t.TaskID, t.Lane, t.LaneLeft, Lanes-1)
	}
	return nil
}

// MarshalBinary encodes r in the format drawn at the top of codec.go. It returns an error
// wrapping ErrMalformed when r cannot be encoded (see Result.Validate).
func (r *Result) MarshalBinary() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	n := len(r.Keys)
	b := make([]byte, 0, resultHeaderLen+len(r.JobID)+1+len(r.WorkerID)+16+countLen+(keyLen+1)*n)
	b = append(b, resultKind, resultVersion)
	b = binary.BigEndian.AppendUint64(b, r.TaskID)
	b = append(b, byte(len(r.JobID)))
	b = append(b, r.JobID...)
	b = append(b, byte(len(r.WorkerID)))
	b = append(b, r.WorkerID...)
	b = binary.BigEndian.AppendUint64(b, r.Nodes)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Elapsed))
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	for _, k := range r.Keys {
		b = binary.BigEndian.AppendUint64(b, k)
	}
	for _, s := range r.Scores {
		b = append(b, byte(s))
	}
	return b, nil
}

// UnmarshalBinary decodes a result written by MarshalBinary. Every field
// is checked as Validate does; an error wraps ErrMalformed and says what is
// wrong. On error r is unchanged. It never panics.
func (r *Result) UnmarshalBinary(data []byte) error {
	if len(data) < resultHeaderLen {
		return malformed("result: %d bytes, shorter than the %d-byte header", len(data), resultHeaderLen)
	}
	if data[0] != resultKind {
		return malformed("result: kind byte %#02x, want %#02x ('R')", data[0], resultKind)
	}
	if data[1] != resultVersion {
		return malformed("result: version %d, this program reads version %d", data[1], resultVersion)
	}
	var d Result
	d.TaskID = binary.BigEndian.Uint64(data[2:10])
	rest := data[resultHeaderLen:]
	job, rest, err := readString(rest, int(data[10]), "result: job id")
	if err != nil {
		return err
	}
	d.JobID = job
	if len(rest) < 1 {
		return malformed("result %s/%d: ends before the worker id", d.JobID, d.TaskID)
	}
	worker, rest, err := readString(rest[1:], int(rest[0]), "result: worker id")
	if err != nil {
		return err
	}
	d.WorkerID = worker
	if len(rest) < 16 {
		return malformed("result %s/%d: %d bytes left, want 16 for nodes and elapsed", d.JobID, d.TaskID, len(rest))
	}
	d.Nodes = binary.BigEndian.Uint64(rest)
	d.Elapsed = time.Duration(binary.BigEndian.Uint64(rest[8:]))
	n, rest, err := readCount(rest[16:], keyLen+1, "result")
	if err != nil {
		return err
	}
	d.Keys = make([]uint64, n)
	for i := range d.Keys {
		d.Keys[i] = binary.BigEndian.Uint64(rest[keyLen*i:])
	}
	d.Scores = make([]int8, n)
	for i := range d.Scores {
		d.Scores[i] = int8(rest[keyLen*n+i])
	}
	if err := d.Validate(); err != nil {
		return err
	}
	*r = d
	return nil
}

// Validate returns nil if r can be encoded: valid job and worker ids,
// 1..MaxKeys keys with as many scores, scores in [solver.MinScore, solver.MaxScore],
// Elapsed not negative. The error wraps ErrMalformed.
func (r *Result) Validate() error {
	if err := ValidJobID(r.JobID); err != nil {
		return malformed("result: %v", err)
	}
	if err := ValidWorkerID(r.WorkerID); err != nil {
		return malformed("result %s/%d: %v", r.JobID, r.TaskID, err)
	}
	if len(r.Keys) == 0 || len(r.Keys) > MaxKeys {
		return malformed("result %s/%d: %d keys, want 1..%d", r.JobID, r.TaskID, len(r.Keys), MaxKeys)
	}
	if len(r.Scores) != len(r.Keys) {
		return malformed("result %s/%d: %d scores for %d keys", r.JobID, r.TaskID, len(r.Scores), len(r.Keys))
	}
	for i, s := range r.Scores {
		if s < solver.MinScore || s > solver.MaxScore {
			return malformed("result %s/%d: score %d of key %#x is %d, outside [%d, %d]", r.JobID, r.TaskID, i, r.Keys[i], s, solver.MinScore, solver.MaxScore)
		}
	}
	if r.Elapsed < 0 {
		return malformed("result %s/%d: elapsed time %v is negative", r.JobID, r.TaskID, r.Elapsed)
	}
	return nil
}

// readString splits the first n bytes off b as a string; what names the
// field in errors. Content checks are left to Validate.
func readString(b []byte, n int, what string) (string, []byte, error) {
	if n > len(b) {
		return "", nil, malformed("%s: %d bytes announced, %d present", what, n, len(b))
	}
	return string(b[:n]), b[n:], nil
}

// readCount reads the 2-byte count N of a task or result and checks that
// exactly N items of size bytes each follow. It returns N and the items.
func readCount(b []byte, size int, what string) (int, []byte, error) {
	if len(b) < countLen {
		return 0, nil, malformed("%s: ends before the key count", what)
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[countLen:]
	if n == 0 || n > MaxKeys {
		return 0, nil, malformed("%s: %d keys, want 1..%d", what, n, MaxKeys)
	}
	switch {
	case len(b) < n*size:
		return 0, nil, malformed("%s: %d keys announced, %d present", what, n, len(b)/size)
	case len(b) > n*size:
		return 0, nil, malformed("%s: %d trailing bytes after %d keys", what, len(b)-n*size, n)
	}
	return n, b, nil
}

// String describes the task for logs: "task job1/42 (7x6, 64 keys)".
func (t *Task) String() string {
	return fmt.Sprintf("task %s/%d (%dx%d, %d keys)", t.JobID, t.TaskID, t.Width, t.Height, len(t.Keys))
}

// String describes the result for logs: "result job1/42 from w1 (64 scores)".
func (r *Result) String() string {
	return fmt.Sprintf("result %s/%d from %s (%d scores)", r.JobID, r.TaskID, r.WorkerID, len(r.Scores))
}
