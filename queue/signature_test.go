package queue

import (
	"testing"
	"time"
)

// TestResultMsg_SignedBy: a worker with a key signs its results; the
// signature checks with its public key only; a result the operator's
// credentials published on its subject carries none.
func TestResultMsg_SignedBy(t *testing.T) {
	t.Parallel()
	k := startKeyed(t, []string{"alice"})
	ctx := testCtx(t, 30*time.Second)
	openJob(t, k.coord, "job1")
	alice, err := k.connectWorker(t, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.PublishResult(ctx, resultFor(testTask(t, "job1", 1, 2), "alice")); err != nil {
		t.Fatal(err)
	}
	// The coordinator's connection has every right: a forgery.
	if err := k.coord.PublishResult(ctx, resultFor(testTask(t, "job1", 2, 2), "alice")); err != nil {
		t.Fatal(err)
	}
	src, err := k.coord.Results(ctx, "job1")
	if err != nil {
		t.Fatal(err)
	}
	msgs, bad, err := src.Fetch(ctx, 10)
	for len(msgs) < 2 && err == nil {
		var more []*ResultMsg
		more, _, err = src.Fetch(ctx, 10)
		msgs = append(msgs, more...)
	}
	if err != nil || len(bad) != 0 || len(msgs) != 2 {
		t.Fatalf("Fetch: %d results, %d malformed, %v", len(msgs), len(bad), err)
	}
	other, _ := WriteWorkerKey(t.TempDir()+"/other.nkey", "other")
	for _, m := range msgs {
		signed := m.Result.TaskID == 1
		if got := m.SignedBy(k.pubs["alice"]); got != signed {
			t.Errorf("task %d: SignedBy(alice) = %v, want %v", m.Result.TaskID, got, signed)
		}
		if m.SignedBy(other) {
			t.Errorf("task %d: signed by another key", m.Result.TaskID)
		}
	}
}
