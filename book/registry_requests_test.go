package book

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/solver"
)

// TestRequestChange: changes left as requests by another process are
// applied by the holder of the book (ApplyRequests), changed is called
// once for each pass that changed something, and the requester reads the
// record as applied, or the refusal; nothing is left in RequestDir.
func TestRequestChange(t *testing.T) {
	t.Parallel()
	bk := newBook(t, solver.MustBoard(4, 4))
	var changes atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // the job
		defer close(done)
		for ctx.Err() == nil {
			bk.ApplyRequests(slog.New(slog.DiscardHandler), func() { changes.Add(1) })
			time.Sleep(10 * time.Millisecond)
		}
	}()
	defer func() { cancel(); <-done }()

	request := func(c RegistryChange) (Worker, error) {
		t.Helper()
		return RequestChange(context.Background(), bk.Path(), c, 10*time.Second)
	}
	w, err := request(RegistryChange{Op: RegistryAdd, Name: "lab-1", PublicKey: testKey('A'), Role: RoleWorker})
	if err != nil || w.Number != 1 || w.Name != "lab-1" || w.PublicKey != testKey('A') || w.Role != RoleWorker {
		t.Errorf("add lab-1: %+v, %v", w, err)
	}
	w, err = request(RegistryChange{Op: RegistryAdd, Name: "ops", PublicKey: testKey('B'), Role: RoleObserver})
	if err != nil || w.Number != 2 || w.Role != RoleObserver {
		t.Errorf("add ops: %+v, %v", w, err)
	}
	if _, err := request(RegistryChange{Op: RegistryAdd, Name: "lab-2", PublicKey: testKey('A'), Role: RoleWorker}); err == nil || !strings.Contains(err.Error(), ErrWorkerExists.Error()) {
		t.Errorf("add with a key taken: %v, want %q", err, ErrWorkerExists)
	}
	if w, err = request(RegistryChange{Op: RegistryRemove, Name: "lab-1"}); err != nil || w.Number != 1 || w.Name != "lab-1" {
		t.Errorf("remove lab-1: %+v, %v", w, err)
	}
	if _, err := request(RegistryChange{Op: RegistryRemove, Name: "lab-1"}); err == nil || !strings.Contains(err.Error(), ErrNoWorker.Error()) {
		t.Errorf("remove lab-1 again: %v, want %q", err, ErrNoWorker)
	}
	if n := changes.Load(); n != 3 {
		t.Errorf("changed called %d times, want 3 (the changes that succeeded)", n)
	}
	if ws, err := bk.ActiveWorkers(); err != nil || len(ws) != 1 || ws[0].Name != "ops" {
		t.Errorf("active: %+v, %v; want ops alone", ws, err)
	}
	if left, _ := filepath.Glob(filepath.Join(bk.Path(), RequestDir, "*")); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}

// TestApplyRequests_unreadable: a request that is no change is answered
// with an error, and changes nothing.
func TestApplyRequests_unreadable(t *testing.T) {
	t.Parallel()
	bk := newBook(t, solver.MustBoard(4, 4))
	dir := filepath.Join(bk.Path(), RequestDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"add lab-1", "add lab-1 " + testKey('A') + " admin", "rename lab-1 lab-2"} {
		if err := os.WriteFile(filepath.Join(dir, "1.req"), []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if bk.ApplyRequests(slog.New(slog.DiscardHandler), func() { t.Error("changed called") }) {
			t.Errorf("%q: applied", line)
		}
		data, err := os.ReadFile(filepath.Join(dir, "1.err"))
		if err != nil || !strings.Contains(string(data), "unreadable request") {
			t.Errorf("%q: answer %q, %v", line, data, err)
		}
		os.Remove(filepath.Join(dir, "1.err"))
	}
	if ws, err := bk.Workers(); err != nil || len(ws) != 0 {
		t.Errorf("workers: %+v, %v", ws, err)
	}
}

// TestRequestChange_notTaken: a request no job takes within the wait, or
// before the requester gives up, is withdrawn, and says that nothing
// changed.
func TestRequestChange_notTaken(t *testing.T) {
	t.Parallel()
	path := t.TempDir()
	_, err := RequestChange(context.Background(), path, RegistryChange{Op: RegistryRemove, Name: "lab-1"}, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "nothing changed") {
		t.Errorf("err = %v, want nothing changed", err)
	}
	if left, _ := filepath.Glob(filepath.Join(path, RequestDir, "*")); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RequestChange(ctx, path, RegistryChange{Op: RegistryRemove, Name: "lab-1"}, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(path, RequestDir, "*")); len(left) != 0 {
		t.Errorf("files left when cancelled: %v", left)
	}
}
