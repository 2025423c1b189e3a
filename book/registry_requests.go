package book

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Changes of the registry while a job runs.
//
// A job holds its book open for writing, so no other process may open it:
// a process that changes the registry then (c4book worker add, worker
// remove) leaves the change as a request file in the directory RequestDir
// of the book (RequestChange), and the job applies it (ApplyRequests,
// every few seconds), writes the outcome beside it, and tells its server.
// Whoever may write in the book's directory may change its workers, as
// whoever may open the book may.
//
//	<book>/worker-requests/<unix ns>.tmp   being written by the requester; renamed when whole
//	<book>/worker-requests/<unix ns>.req   "add NAME PUBKEY", "add NAME PUBKEY observer" or "remove NAME"
//	<book>/worker-requests/<unix ns>.taken the request, claimed by the job
//	<book>/worker-requests/<unix ns>.ok    the record as applied: "NUMBER NAME PUBKEY ROLE"
//	<book>/worker-requests/<unix ns>.err   why it was refused, one line
//
// Each file is one line ending in a newline, fields separated by one
// space; the answers (.ok, .err) are written under a .tmp name and renamed
// too, since the requester reads them as soon as they are there. The
// requester removes the answer once read.
//
// A job that applies requests says so while it runs:
//
//	<book>/worker-requests/following       "pid N": the job of process N applies requests
//
// written when it starts following them and removed when it stops, so
// that a requester facing a job that does not (a plain generate, whose
// workers run in its own process and need no keys) is told so at once
// rather than after waiting for an answer that never comes.
//
// A worker's "add" has no role, as before observers; a job from before
// them refuses an observer's as unreadable rather than register a worker,
// and its answers have no role (RequestChange reads them as a worker's).
//
// The requester withdraws a request nobody took in time by removing its
// .req file; the job claims one by renaming it to .taken, so one of the
// two wins, and a request is applied once or not at all.
const RequestDir = "worker-requests"

// RegistryOp is what a RegistryChange does.
type RegistryOp string

// The changes of the registry.
const (
	RegistryAdd    RegistryOp = "add"    // register a worker or an observer
	RegistryRemove RegistryOp = "remove" // remove one
)

// RegistryChange is one change of the registry.
type RegistryChange struct {
	Op        RegistryOp
	Name      string
	PublicKey string // of an add: the nkey public key
	Role      Role   // of an add: RoleWorker or RoleObserver
}

// ApplyChange applies c to b: AddWorker, AddObserver or RemoveWorker.
func (b *Book) ApplyChange(c RegistryChange) (Worker, error) {
	switch {
	case c.Op == RegistryAdd && c.Role == RoleObserver:
		return b.AddObserver(c.Name, c.PublicKey)
	case c.Op == RegistryAdd:
		return b.AddWorker(c.Name, c.PublicKey)
	}
	return b.RemoveWorker(c.Name)
}

// line returns the request line of c, without its newline.
func (c RegistryChange) line() string {
	line := string(c.Op) + " " + c.Name
	if c.PublicKey != "" {
		line += " " + c.PublicKey
	}
	if c.Role == RoleObserver {
		line += " " + string(RoleObserver)
	}
	return line
}

// parseRequest reads a request line; it returns false if it is not one.
func parseRequest(data []byte) (RegistryChange, bool) {
	f := strings.Fields(string(data))
	switch {
	case len(f) == 3 && f[0] == string(RegistryAdd):
		return RegistryChange{Op: RegistryAdd, Name: f[1], PublicKey: f[2], Role: RoleWorker}, true
	case len(f) == 4 && f[0] == string(RegistryAdd) && f[3] == string(RoleObserver):
		return RegistryChange{Op: RegistryAdd, Name: f[1], PublicKey: f[2], Role: RoleObserver}, true
	case len(f) == 2 && f[0] == string(RegistryRemove):
		return RegistryChange{Op: RegistryRemove, Name: f[1]}, true
	}
	return RegistryChange{}, false
}

// DefaultRequestWait is how long a requester waits for the job's answer
// (the wait of RequestChange) unless it has a reason to wait otherwise:
// the job looks for requests every few seconds (docs/format.md).
const DefaultRequestWait = 15 * time.Second

// requestPoll is how often RequestChange looks for the job's answer.
const requestPoll = 100 * time.Millisecond

// RequestChange leaves c for the job holding the book at path, and waits
// up to wait for its outcome: the record as the job applied it, or the
// job's error. A request no job took within wait, or by the time ctx is
// done, is withdrawn, and nothing changed.
func RequestChange(ctx context.Context, path string, c RegistryChange, wait time.Duration) (Worker, error) {
	dir := filepath.Join(path, RequestDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Worker{}, err
	}
	base := filepath.Join(dir, strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := os.WriteFile(base+".tmp", []byte(c.line()+"\n"), 0o600); err != nil {
		return Worker{}, err
	}
	if err := os.Rename(base+".tmp", base+".req"); err != nil {
		return Worker{}, err
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(base + ".ok"); err == nil {
			os.Remove(base + ".ok")
			f := strings.Fields(string(data))
			if len(f) != 3 && len(f) != 4 {
				return Worker{}, fmt.Errorf("the job's answer %q is unreadable", data)
			}
			n, _ := strconv.ParseUint(f[0], 10, 32)
			w := Worker{Number: uint32(n), Name: f[1], PublicKey: f[2], Role: RoleWorker}
			if len(f) == 4 {
				w.Role = Role(f[3])
			}
			return w, nil
		}
		if data, err := os.ReadFile(base + ".err"); err == nil {
			os.Remove(base + ".err")
			return Worker{}, errors.New(strings.TrimSpace(string(data)))
		}
		select {
		case <-ctx.Done():
			// Withdrawn as below: a request left behind would be
			// applied by a later job, unasked.
			os.Remove(base + ".req")
			return Worker{}, ctx.Err()
		case <-time.After(requestPoll):
		}
	}
	// Not taken: withdraw it, unless the job takes it meanwhile.
	if os.Remove(base+".req") == nil {
		return Worker{}, fmt.Errorf("the job holding the book %s did not apply the change within %v; nothing changed (see its log)", path, wait)
	}
	return Worker{}, fmt.Errorf("the job took the change but did not answer within %v: see its log and c4book worker list", wait)
}

// ApplyRequests applies the requests left for the job on b (see
// RequestDir), oldest first, logs each change to log, and reports whether
// the registry changed. If it did, changed (if not nil) is called before
// the answers are written: the requester waits for its answer, so what
// changed does (the server told, a snapshot taken) is done before it
// returns.
func (b *Book) ApplyRequests(log *slog.Logger, changed func()) bool {
	dir := filepath.Join(b.Path(), RequestDir)
	names, _ := filepath.Glob(filepath.Join(dir, "*.req"))
	slices.Sort(names)
	type outcome struct {
		base string
		w    Worker
		err  error
	}
	var outcomes []outcome
	applied := false
	for _, req := range names {
		// Claimed by a rename, so that the requester cannot withdraw a
		// request the job is applying.
		base := strings.TrimSuffix(req, ".req")
		if os.Rename(req, base+".taken") != nil {
			continue // withdrawn
		}
		req = base + ".taken"
		data, err := os.ReadFile(req)
		if err != nil {
			os.Remove(req)
			continue
		}
		var w Worker
		c, ok := parseRequest(data)
		if ok {
			w, err = b.ApplyChange(c)
			if err == nil {
				applied = true
				log.Info("worker registry changed", "op", c.Op, "name", c.Name, "role", w.Role, "number", w.Number)
			}
		} else {
			err = fmt.Errorf("unreadable request %q", data)
		}
		outcomes = append(outcomes, outcome{base, w, err})
	}
	if applied && changed != nil {
		changed()
	}
	for _, o := range outcomes {
		if o.err != nil {
			writeAnswer(o.base+".err", []byte(o.err.Error()+"\n"))
		} else {
			writeAnswer(o.base+".ok", fmt.Appendf(nil, "%d %s %s %s\n", o.w.Number, o.w.Name, o.w.PublicKey, o.w.Role))
		}
		os.Remove(o.base + ".taken")
	}
	return applied
}

// writeAnswer writes the job's answer to a request at path whole: written
// beside it and renamed, since the requester reads it as soon as it is
// there.
func writeAnswer(path string, data []byte) {
	if os.WriteFile(path+".tmp", data, 0o600) == nil {
		_ = os.Rename(path+".tmp", path)
	}
}

// followingFile is the file of RequestDir by which a job says that it
// applies requests.
const followingFile = "following"

// FollowRequests records that this process, which holds the book at path
// for writing, applies the registry requests left in it (ApplyRequests);
// the function returned removes the record, to be called when it stops.
func FollowRequests(path string) (func(), error) {
	dir := filepath.Join(path, RequestDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	name := filepath.Join(dir, followingFile)
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "pid %d\n", os.Getpid()), 0o644); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return func() { os.Remove(name) }, nil
}

// TakesRequests reports whether the process holding the book at path for
// writing applies registry requests: its FollowRequests record names the
// process the book's holder file names. A record a crash left behind
// names another process, or none.
func TakesRequests(path string) bool {
	data, err := os.ReadFile(filepath.Join(path, RequestDir, followingFile))
	if err != nil {
		return false
	}
	field, value, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	pid, err := strconv.Atoi(value)
	return field == "pid" && err == nil && pid > 0 && pid == holderPID(path)
}
