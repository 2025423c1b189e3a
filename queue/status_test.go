package queue

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestConn_PutJobStatus(t *testing.T) {
	t.Parallel()
	_, c := setupQueue(t, testStreams)
	ctx := testCtx(t, 30*time.Second)
	if _, err := c.JobStatus(ctx, "j1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("JobStatus of an unknown job = %v, want ErrNotFound", err)
	}
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	want := JobStatus{JobID: "j1", State: "running", Total: 100, Done: 40, Failed: 1, Started: started, Message: "depth 8"}
	if err := c.PutJobStatus(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := c.JobStatus(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Updated.IsZero() {
		t.Error("Updated not set")
	}
	got.Updated = time.Time{}
	if !got.Started.Equal(started) {
		t.Errorf("Started = %v, want %v", got.Started, started)
	}
	got.Started = started
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JobStatus = %+v, want %+v", got, want)
	}
	want.Done, want.State = 100, "done"
	if err := c.PutJobStatus(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got, err := c.JobStatus(ctx, "j1"); err != nil || got.State != "done" || got.Done != 100 {
		t.Errorf("after update: %+v, %v", got, err)
	}
	if err := c.PutJobStatus(ctx, JobStatus{JobID: "bad id"}); !errors.Is(err, ErrInvalidID) {
		t.Errorf("PutJobStatus(bad id) = %v, want ErrInvalidID", err)
	}
	if err := c.PutJobStatus(ctx, JobStatus{JobID: "a0", State: "running"}); err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Jobs(ctx)
	if err != nil || len(jobs) != 2 || jobs[0].JobID != "a0" || jobs[1].JobID != "j1" || jobs[1].State != "done" {
		t.Errorf("Jobs = %+v, %v; want a0 then j1", jobs, err)
	}
}

func TestConn_PutWorkerStatus(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, testStreams)
	w := connectTo(t, s, "worker")
	ctx := testCtx(t, 30*time.Second)
	if ws, err := coord.Workers(ctx); err != nil || len(ws) != 0 {
		t.Fatalf("Workers with none = %v, %v", ws, err)
	}
	for _, id := range []string{"host-b/2", "host-a/1", "host-a.1"} {
		if err := w.PutWorkerStatus(ctx, WorkerStatus{WorkerID: id, Host: "h", Solved: 10, Busy: true, JobID: "j"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.PutWorkerStatus(ctx, WorkerStatus{WorkerID: "host-a/1", Solved: 20}); err != nil {
		t.Fatal(err)
	}
	ws, err := coord.Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 3 || ws[0].WorkerID != "host-a.1" || ws[1].WorkerID != "host-a/1" || ws[2].WorkerID != "host-b/2" {
		t.Fatalf("Workers = %+v, want host-a.1, host-a/1, host-b/2", ws)
	}
	if ws[1].Solved != 20 || ws[1].Seen.IsZero() || ws[2].JobID != "j" || !ws[2].Busy {
		t.Errorf("Workers = %+v, want the latest statuses", ws)
	}
	if err := w.RemoveWorkerStatus(ctx, "host-b/2"); err != nil {
		t.Fatal(err)
	}
	if err := w.RemoveWorkerStatus(ctx, "never-seen"); err != nil {
		t.Errorf("RemoveWorkerStatus of an unknown worker: %v", err)
	}
	if ws, err := coord.Workers(ctx); err != nil || len(ws) != 2 {
		t.Errorf("Workers after a removal = %+v, %v; want 2", ws, err)
	}
	if err := w.PutWorkerStatus(ctx, WorkerStatus{WorkerID: "has space"}); !errors.Is(err, ErrInvalidID) {
		t.Errorf("PutWorkerStatus(has space) = %v, want ErrInvalidID", err)
	}
}

// TestConn_PutWorkerStatus_ttl: a worker that stops putting its status
// disappears from Workers after the TTL.
func TestConn_PutWorkerStatus_ttl(t *testing.T) {
	t.Parallel()
	s, coord := setupQueue(t, testStreams)
	w := connectTo(t, s, "worker")
	w.workerTTL = time.Second
	ctx := testCtx(t, 60*time.Second)
	if err := w.PutWorkerStatus(ctx, WorkerStatus{WorkerID: "short-lived"}); err != nil {
		t.Fatal(err)
	}
	if err := coord.PutJobStatus(ctx, JobStatus{JobID: "j", State: "running"}); err != nil {
		t.Fatal(err)
	}
	if ws, err := coord.Workers(ctx); err != nil || len(ws) != 1 {
		t.Fatalf("Workers = %+v, %v; want the worker", ws, err)
	}
	eventually(t, 30*time.Second, "expired", func() bool {
		ws, err := coord.Workers(ctx)
		return err == nil && len(ws) == 0
	})
	// Job statuses have no TTL.
	if _, err := coord.JobStatus(ctx, "j"); err != nil {
		t.Errorf("JobStatus after the worker expired: %v", err)
	}
}
