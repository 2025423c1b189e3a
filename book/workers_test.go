package book

import (
	"errors"
	"strings"
	"testing"
)

// testKey returns a well-formed nkey user public key for tests, its last
// character c.
func testKey(c byte) string { return "U" + strings.Repeat("A", 54) + string(c) }

func TestBook_AddWorker(t *testing.T) {
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
