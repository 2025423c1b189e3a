package book

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Worker is a key registered in the book: a worker machine, which the
// jobs of the book accept by its NATS nkey, and its results by the
// subject its name gives it (see queue.WorkerPermissions), or an
// observer, which may only read the cluster's status
// (queue.ObserverPermissions). Workers and observers share the registry:
// one name, one number, never given twice. The record layout is in
// meta.go.
type Worker struct {
	Name      string    `json:"name"`       // ValidWorkerName
	PublicKey string    `json:"public_key"` // nkey user public key, "U..."
	Number    uint32    `json:"number"`     // 1, 2, ... in order of registration, never reused
	Added     time.Time `json:"added"`
	Removed   time.Time `json:"removed,omitzero"` // zero while the worker is active
	// Role is RoleWorker or RoleObserver; records read from a book are
	// never "". A worker's record leaves it out (workerVersion 1, as
	// before roles), an observer's has it (observerVersion).
	Role Role `json:"role,omitempty"`
}

// Role is what a registered key may do.
type Role string

// The roles of registered keys.
const (
	RoleWorker   Role = "worker"   // solves tasks and publishes its own results
	RoleObserver Role = "observer" // reads the cluster's status
)

// Active reports whether w is registered and not removed.
func (w Worker) Active() bool { return w.Removed.IsZero() }

// Worker names and keys.
const (
	MaxWorkerNameLen = 64
	publicKeyLen     = 56 // an nkey public key: 'U' and 55 base32 characters
)

// Errors of the worker registry.
var (
	// ErrWorkerExists: a worker of that name (active or removed), or with
	// that public key, is registered already.
	ErrWorkerExists = errors.New("worker already registered")
	// ErrNoWorker: no active worker of that name.
	ErrNoWorker = errors.New("no such worker")
)

// ValidWorkerName returns nil if name can name a registered worker: 1 to
// MaxWorkerNameLen bytes of ASCII letters, digits, '-' and '_', so that it
// is one NATS subject token and one status key as it is.
func ValidWorkerName(name string) error {
	if name == "" || len(name) > MaxWorkerNameLen {
		return fmt.Errorf("worker name %.20q: must be 1..%d bytes", name, MaxWorkerNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("worker name %q: byte %d (%q) is not a letter, digit, '-' or '_'", name, i, c)
		}
	}
	return nil
}

// validPublicKey checks the shape of an nkey user public key (the
// checksum is the nkeys package's business, checked where keys are made).
func validPublicKey(k string) error {
	if len(k) != publicKeyLen || k[0] != 'U' {
		return fmt.Errorf("public key %.12q...: not an nkey user public key ('U' and 55 characters)", k)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !('A' <= c && c <= 'Z' || '2' <= c && c <= '7') {
			return fmt.Errorf("public key %.12q...: byte %d is not base32", k, i)
		}
	}
	return nil
}

// workerKey returns the key of the worker record of name.
func workerKey(name string) []byte {
	return append([]byte{metaPrefix, kindWorker}, name...)
}

// AddWorker registers a worker by name and nkey public key, synced, and
// returns its record. The error wraps ErrWorkerExists when the name was
// ever registered (a removed worker's or observer's name is not given to
// another) or the key is another active worker's or observer's.
func (b *Book) AddWorker(name, publicKey string) (Worker, error) {
	return b.addKey(name, publicKey, RoleWorker)
}

// AddObserver registers an observer by name and nkey public key, as
// AddWorker registers a worker: the same names and numbers, the same
// errors.
func (b *Book) AddObserver(name, publicKey string) (Worker, error) {
	return b.addKey(name, publicKey, RoleObserver)
}

// addKey registers the key of a worker or observer, as role says.
func (b *Book) addKey(name, publicKey string, role Role) (Worker, error) {
	if err := b.check(true); err != nil {
		return Worker{}, err
	}
	if err := ValidWorkerName(name); err != nil {
		return Worker{}, err
	}
	if err := validPublicKey(publicKey); err != nil {
		return Worker{}, err
	}
	b.workerMu.Lock()
	defer b.workerMu.Unlock()
	ws, err := b.Workers()
	if err != nil {
		return Worker{}, err
	}
	var number uint32
	for _, w := range ws {
		if w.Name == name {
			return Worker{}, fmt.Errorf("worker %q: %w (number %d%s)", name, ErrWorkerExists, w.Number, removedNote(w))
		}
		if w.PublicKey == publicKey && w.Active() {
			return Worker{}, fmt.Errorf("public key of %q: %w as %q", name, ErrWorkerExists, w.Name)
		}
		number = max(number, w.Number)
	}
	w := Worker{Name: name, PublicKey: publicKey, Number: number + 1, Added: time.Now().UTC(), Role: role}
	return w, b.putWorker(&w)
}

// removedNote says " removed <time>" for a removed worker.
func removedNote(w Worker) string {
	if w.Active() {
		return ""
	}
	return ", removed " + w.Removed.Format(time.RFC3339)
}

// RemoveWorker marks the active worker or observer name removed, synced:
// the jobs of the book stop accepting its key. Its record stays. The
// error wraps ErrNoWorker when there is no such active worker or
// observer.
func (b *Book) RemoveWorker(name string) (Worker, error) {
	if err := b.check(true); err != nil {
		return Worker{}, err
	}
	b.workerMu.Lock()
	defer b.workerMu.Unlock()
	w, ok, err := b.Worker(name)
	if err != nil {
		return Worker{}, err
	}
	if !ok || !w.Active() {
		return Worker{}, fmt.Errorf("worker %q: %w", name, ErrNoWorker)
	}
	w.Removed = time.Now().UTC()
	return w, b.putWorker(&w)
}

// putWorker stores w, synced: a worker as a record of workerVersion,
// without its role, which every c4book reads; an observer as one of
// observerVersion, which a c4book from before observers refuses rather
// than take it for a worker's.
func (b *Book) putWorker(w *Worker) error {
	version := byte(observerVersion)
	r := *w
	switch w.Role {
	case RoleWorker:
		version, r.Role = workerVersion, ""
	case RoleObserver:
	default:
		return fmt.Errorf("worker %q: role %q: want %q or %q", w.Name, w.Role, RoleWorker, RoleObserver)
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return b.db.Set(workerKey(w.Name), append([]byte{version}, data...), pebble.Sync)
}

// Worker returns the worker record of name, active or removed, and
// whether the book holds one.
func (b *Book) Worker(name string) (Worker, bool, error) {
	if err := b.check(false); err != nil {
		return Worker{}, false, err
	}
	if b.pk != nil {
		return Worker{}, false, nil // a packed book registers no worker
	}
	k := workerKey(name)
	v, closer, err := b.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return Worker{}, false, nil
	}
	if err != nil {
		return Worker{}, false, readError(err)
	}
	defer closer.Close()
	w, err := decodeWorker(k, v)
	return w, err == nil, err
}

// Workers returns every worker record of the book, removed ones included,
// ordered by number.
func (b *Book) Workers() ([]Worker, error) {
	if err := b.check(false); err != nil {
		return nil, err
	}
	if b.pk != nil {
		return nil, nil // a packed book registers no worker
	}
	var ws []Worker
	err := scanKeys(b.db, []byte{metaPrefix, kindWorker}, []byte{metaPrefix, kindWorker + 1}, func(k, v []byte) error {
		w, err := decodeWorker(k, v)
		if err != nil {
			return err
		}
		ws = append(ws, w)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ws, func(a, b Worker) int { return int(a.Number) - int(b.Number) })
	return ws, nil
}

// ActiveWorkers returns the active workers and observers of b, ordered by
// number, but the workers quarantined in the jobs of the given ids: a
// job's server refuses the key of a worker the job caught lying, which
// would otherwise go on taking its tasks.
func (b *Book) ActiveWorkers(jobs ...string) ([]Worker, error) {
	ws, err := b.Workers()
	if err != nil {
		return nil, err
	}
	quarantined := map[string]bool{}
	for _, id := range jobs {
		j, ok, err := b.Job(id)
		if err != nil {
			return nil, err
		}
		if ok {
			for _, name := range j.Quarantined {
				quarantined[name] = true
			}
		}
	}
	return slices.DeleteFunc(ws, func(w Worker) bool { return !w.Active() || quarantined[w.Name] }), nil
}

// decodeWorker decodes the worker record v stored at key k. A record of
// workerVersion is a worker's (it has no role); one of observerVersion
// has its role, which must be one this version knows.
func decodeWorker(k, v []byte) (Worker, error) {
	if len(v) == 0 || v[0] != workerVersion && v[0] != observerVersion {
		return Worker{}, newCorrupt(k, "worker record: empty or of an unknown version")
	}
	var w Worker
	if err := json.Unmarshal(v[1:], &w); err != nil {
		return Worker{}, newCorrupt(k, "worker record: "+err.Error())
	}
	if len(k) < 2 || string(k[2:]) != w.Name || validPublicKey(w.PublicKey) != nil || w.Number == 0 {
		return Worker{}, newCorrupt(k, fmt.Sprintf("worker record of %q: name, key or number wrong", w.Name))
	}
	switch {
	case v[0] == workerVersion && w.Role == "":
		w.Role = RoleWorker
	case v[0] == observerVersion && w.Role == RoleObserver:
	default:
		return Worker{}, newCorrupt(k, fmt.Sprintf("worker record of %q: role %q in a record of version %d", w.Name, w.Role, v[0]))
	}
	return w, nil
}

// IsLocked reports whether err, from Open, says that another process
// holds the book open for writing (a running job).
func IsLocked(err error) bool { return isLocked(err) }
