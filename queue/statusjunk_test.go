package queue

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestConn_Junk: a worker's key has the server answer requests onto the
// job's status key and another worker's. Readers leave the junk out and
// name its keys, until the owners put their statuses again.
func TestConn_Junk(t *testing.T) {
	t.Parallel()
	k := startKeyed(t, []string{"alice", "bob"})
	ctx := testCtx(t, 30*time.Second)
	publishTasks(t, k.coord, testTask(t, "job1", 1, 2))
	put := func() {
		if err := k.coord.PutJobStatus(ctx, JobStatus{JobID: "job1", State: "solving", Total: 10, Done: 3}); err != nil {
			t.Fatal(err)
		}
	}
	put()
	for _, name := range []string{"alice", "bob"} {
		w, err := k.connectWorker(t, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.PutWorkerStatus(ctx, WorkerStatus{WorkerID: name, Host: "h", Started: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	nc, _ := k.rawWorker(t, "alice")
	jobSubject, bobSubject := statusSubjectPrefix+jobKey("job1"), statusSubjectPrefix+workerKey("bob")
	if err := nc.PublishRequest("$JS.API.STREAM.INFO."+ResultStream, jobSubject, nil); err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("$JS.API.CONSUMER.INFO."+TaskStream+"."+LaneConsumer(0), bobSubject, nil); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []string{jobKey("job1"), workerKey("bob")}
	var junk []string
	for deadline := time.Now().Add(10 * time.Second); !slices.Equal(junk, want); time.Sleep(20 * time.Millisecond) {
		var err error
		if junk, err = k.coord.Junk(ctx); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("junk %v, want %v", junk, want)
		}
	}
	if jobs, err := k.coord.Jobs(ctx); err != nil || len(jobs) != 0 {
		t.Errorf("jobs %+v, %v: want none, the job's key holding junk", jobs, err)
	}
	if _, err := k.coord.JobStatus(ctx, "job1"); !errors.Is(err, ErrMalformed) {
		t.Errorf("job status of job1: %v, want ErrMalformed", err)
	}
	if ws, err := k.coord.Workers(ctx); err != nil || len(ws) != 1 || ws[0].WorkerID != "alice" {
		t.Errorf("workers %+v, %v: want alice alone, bob's key holding junk", ws, err)
	}
	put()
	if jobs, err := k.coord.Jobs(ctx); err != nil || len(jobs) != 1 || jobs[0].Done != 3 {
		t.Errorf("jobs %+v, %v after the coordinator's put: want job1", jobs, err)
	}
	if junk, err := k.coord.Junk(ctx); err != nil || !slices.Equal(junk, []string{workerKey("bob")}) {
		t.Errorf("junk %v, %v after the coordinator's put: want bob's key alone", junk, err)
	}
}
