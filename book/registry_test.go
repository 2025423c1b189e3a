package book

import (
	"errors"
	"strings"
	"testing"

	"github.com/c4book/c4book/solver"
)

// testKey returns a well-formed nkey user public key for tests, its last
// character c.
func testKey(c byte) string { return "U" + strings.Repeat("A", 54) + string(c) }

func TestBook_AddWorker(t *testing.T) {
	t.Parallel()
	path := t.TempDir()
	bk := openBook(t, path, testOptions(board4x4))
	a, err := bk.AddWorker("lab-1", testKey('A'))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bk.AddWorker("lab_2", testKey('B'))
	if err != nil {
		t.Fatal(err)
	}
	if a.Number != 1 || b.Number != 2 || !a.Active() || a.Added.IsZero() {
		t.Fatalf("added %+v and %+v, want numbers 1 and 2, active", a, b)
	}
	for _, c := range []struct{ name, key string }{
		{"lab-1", testKey('C')},           // name taken
		{"lab-3", testKey('A')},           // key taken
		{"lab.3", testKey('D')},           // not a subject token
		{"", testKey('D')},                // empty
		{"lab-3", "SUAAAA"},               // a seed, not a public key
		{"lab-3", "N" + testKey('D')[1:]}, // not a user key
	} {
		if _, err := bk.AddWorker(c.name, c.key); err == nil {
			t.Errorf("AddWorker(%q, %q) succeeded", c.name, c.key)
		}
	}
	if _, err := bk.RemoveWorker("lab-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := bk.RemoveWorker("lab-1"); !errors.Is(err, ErrNoWorker) {
		t.Errorf("second RemoveWorker: %v, want ErrNoWorker", err)
	}
	// A removed worker's name is never given again; its key may come back
	// under a new name.
	if _, err := bk.AddWorker("lab-1", testKey('E')); !errors.Is(err, ErrWorkerExists) {
		t.Errorf("re-adding a removed name: %v, want ErrWorkerExists", err)
	}
	c, err := bk.AddWorker("lab-3", testKey('A'))
	if err != nil || c.Number != 3 {
		t.Fatalf("AddWorker(lab-3) = %+v, %v; want number 3", c, err)
	}
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}

	bk = openBook(t, path, nil)
	ws, err := bk.Workers()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range ws {
		s := w.Name
		if !w.Active() {
			s += "(removed)"
		}
		got = append(got, s)
	}
	if strings.Join(got, " ") != "lab-1(removed) lab_2 lab-3" {
		t.Errorf("workers after reopening: %v", got)
	}
	if w, ok, err := bk.Worker("lab_2"); err != nil || !ok || w.PublicKey != testKey('B') {
		t.Errorf("Worker(lab_2) = %+v, %v, %v", w, ok, err)
	}
}

func TestBook_AddObserver(t *testing.T) {
	t.Parallel()
	path := t.TempDir()
	bk := openBook(t, path, testOptions(board4x4))
	if _, err := bk.AddWorker("lab-1", testKey('A')); err != nil {
		t.Fatal(err)
	}
	o, err := bk.AddObserver("ops", testKey('B'))
	if err != nil {
		t.Fatal(err)
	}
	if o.Number != 2 || o.Role != RoleObserver || !o.Active() {
		t.Fatalf("AddObserver = %+v, want number 2, an active observer", o)
	}
	// Workers and observers share names and keys.
	if _, err := bk.AddWorker("ops", testKey('C')); !errors.Is(err, ErrWorkerExists) {
		t.Errorf("a worker named as the observer: %v, want ErrWorkerExists", err)
	}
	if _, err := bk.AddObserver("lab-1", testKey('C')); !errors.Is(err, ErrWorkerExists) {
		t.Errorf("an observer named as the worker: %v, want ErrWorkerExists", err)
	}
	if _, err := bk.AddObserver("ops-2", testKey('A')); !errors.Is(err, ErrWorkerExists) {
		t.Errorf("an observer with the worker's key: %v, want ErrWorkerExists", err)
	}
	// A worker's record is as it was before roles (version 1, no role),
	// an observer's has its own version.
	for name, want := range map[string]byte{"lab-1": workerVersion, "ops": observerVersion} {
		v, closer, err := bk.db.Get(workerKey(name))
		if err != nil {
			t.Fatal(err)
		}
		if v[0] != want || strings.Contains(string(v), `"role"`) != (want == observerVersion) {
			t.Errorf("record of %s: %q, want version %d, a role only for an observer", name, v, want)
		}
		closer.Close()
	}
	if _, err := bk.RemoveWorker("ops"); err != nil {
		t.Fatal(err)
	}
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}

	bk = openBook(t, path, nil)
	ws, err := bk.Workers()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].Role != RoleWorker || ws[1].Role != RoleObserver || ws[1].Active() {
		t.Errorf("after reopening: %+v; want worker lab-1, observer ops removed", ws)
	}
}

// TestBook_workerRecordRoles: a record as c4book wrote it before roles is
// a worker's; a record whose role and version disagree is corrupt, never
// read as either.
func TestBook_workerRecordRoles(t *testing.T) {
	t.Parallel()
	bk := openBook(t, t.TempDir(), testOptions(board4x4))
	record := func(version byte, name, role string) []byte {
		js := `{"name":"` + name + `","public_key":"` + testKey('A') + `","number":1,"added":"2026-11-26T13:08:50Z"`
		if role != "" {
			js += `,"role":"` + role + `"`
		}
		return append([]byte{version}, js+"}"...)
	}
	put := func(v []byte) {
		if err := bk.db.Set(workerKey("w"), v, nil); err != nil {
			t.Fatal(err)
		}
	}
	put(record(1, "w", ""))
	if w, ok, err := bk.Worker("w"); err != nil || !ok || w.Role != RoleWorker || w.Number != 1 {
		t.Errorf("a record from before roles: %+v, %v, %v; want worker number 1", w, ok, err)
	}
	for _, c := range []struct {
		version byte
		role    string
	}{{1, "observer"}, {1, "worker"}, {2, ""}, {2, "worker"}, {2, "admin"}, {3, "observer"}} {
		put(record(c.version, "w", c.role))
		var corrupt *CorruptError
		if w, _, err := bk.Worker("w"); !errors.As(err, &corrupt) {
			t.Errorf("version %d, role %q: %+v, %v; want a CorruptError", c.version, c.role, w, err)
		}
	}
}

// TestBook_ActiveWorkers: the keys a job's server admits leave out the
// removed ones and the workers the job's record quarantines (a liar
// caught by the job takes none of its tasks any more), and only for that
// job.
func TestBook_ActiveWorkers(t *testing.T) {
	t.Parallel()
	bk := newBook(t, solver.MustBoard(4, 4))
	for i, name := range []string{"alice", "mallory", "bob"} {
		if _, err := bk.AddWorker(name, testKey(byte('A'+i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bk.RemoveWorker("bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := bk.PutJob(Job{ID: "j1", Depth: 4, State: JobSolving, Quarantined: []string{"mallory"}}); err != nil {
		t.Fatal(err)
	}
	names := func(jobs ...string) string {
		ws, err := bk.ActiveWorkers(jobs...)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, w := range ws {
			n = append(n, w.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names("j1"); got != "alice" {
		t.Errorf("job j1 admits %v, want alice", got)
	}
	if got := names("j2"); got != "alice,mallory" {
		t.Errorf("another job admits %v, want alice,mallory", got)
	}
	if got := names(); got != "alice,mallory" {
		t.Errorf("no job: %v, want alice,mallory", got)
	}
}
