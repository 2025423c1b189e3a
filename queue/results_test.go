package queue

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestResultSource_Fetch: results of one job come in batches; malformed
// ones are terminated and reported with their subject and sender; results
// of other jobs stay for their own consumer.
func TestResultSource_Fetch(t *testing.T) {
	t.Parallel()
	_, c := setupQueue(t, testStreams)
	ctx := testCtx(t, 60*time.Second)
	openJob(t, c, "r1")
	openJob(t, c, "r2")
	for i := range 5 {
		if err := c.PublishResult(ctx, resultFor(testTask(t, "r1", uint64(i), 3), "w1")); err != nil {
			t.Fatal(err)
		}
	}
	// Published twice: stored once.
	if err := c.PublishResult(ctx, resultFor(testTask(t, "r1", 0, 3), "w1")); err != nil {
		t.Fatal(err)
	}
	// Another worker's result of the same task is another result.
	if err := c.PublishResult(ctx, resultFor(testTask(t, "r1", 0, 3), "w2")); err != nil {
		t.Fatal(err)
	}
	if err := c.PublishResult(ctx, resultFor(testTask(t, "r2", 0, 3), "w1")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.js.PublishMsg(ctx, newMsg(ResultSubject("r1"), "w-broken", []byte("R\x01garbage"))); err != nil {
		t.Fatal(err)
	}

	src, err := c.Results(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*ResultMsg
	var bad []*DecodeError
	for len(msgs)+len(bad) < 7 {
		m, b, err := src.Fetch(ctx, 4)
		if err != nil {
			t.Fatalf("Fetch: %v", err)
		}
		if len(m)+len(b) > 4 {
			t.Errorf("Fetch(4) returned %d results and %d malformed", len(m), len(b))
		}
		msgs, bad = append(msgs, m...), append(bad, b...)
	}
	if len(msgs) != 6 || len(bad) != 1 {
		t.Fatalf("got %d results and %d malformed, want 6 and 1", len(msgs), len(bad))
	}
	if d := bad[0]; d.Subject != "c4book.results.r1" || d.Sender != "w-broken" || !errors.Is(d, ErrMalformed) {
		t.Errorf("malformed result reported as %v", d)
	}
	t.Logf("malformed: %v", bad[0])
	for _, m := range msgs {
		if m.Result.JobID != "r1" || m.Delivered != 1 {
			t.Errorf("got %v (delivery %d), want a first delivery of a result of r1", &m.Result, m.Delivered)
		}
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// r2's result waits for r2's consumer.
	if n := streamMsgs(t, c, ResultStream); n != 1 {
		t.Errorf("result stream holds %d messages, want r2's one", n)
	}
	src2, err := c.Results(ctx, "r2")
	if err != nil {
		t.Fatal(err)
	}
	m, err := src2.Next(ctx)
	if err != nil || m.Result.JobID != "r2" {
		t.Fatalf("Next = %v, %v; want r2's result", m, err)
	}
	if err := m.Term(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := src2.Fetch(ctx, 0); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Fetch(0) = %v, want ErrInvalidOptions", err)
	}
}

// TestResultSource_Next_resume: results not acked before the coordinator
// stops come again to the next coordinator of the job.
func TestResultSource_Next_resume(t *testing.T) {
	t.Parallel()
	s, c := setupQueue(t, testStreams)
	ctx := testCtx(t, 30*time.Second)
	openJob(t, c, "j")
	if err := c.PublishResult(ctx, resultFor(testTask(t, "j", 1, 2), "w")); err != nil {
		t.Fatal(err)
	}
	src, err := c.Results(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Next(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close() // crash before the ack

	c2 := connectTo(t, s, "coordinator-2")
	src2, err := c2.Results(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	// The first delivery's AckWait (two minutes) is still running: nothing
	// comes at once, which is what a restarted coordinator sees until then.
	_, bad, err := src2.Fetch(testCtx(t, time.Second), 10)
	if err == nil || len(bad) != 0 {
		t.Errorf("Fetch = %v, %v; want nothing yet", bad, err)
	}
	if info, err := src2.cons.Info(ctx); err != nil || info.NumAckPending != 1 {
		t.Errorf("consumer info: %d pending acks, %v; want the unacked result pending", info.NumAckPending, err)
	}
}

func TestConn_PublishResult_invalid(t *testing.T) {
	t.Parallel()
	_, c := setupQueue(t, testStreams)
	r := resultFor(testTask(t, "j", 1, 2), "w")
	r.Scores = r.Scores[:1]
	err := c.PublishResult(testCtx(t, 10*time.Second), r)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "1 scores for 2 keys") {
		t.Errorf("PublishResult = %v, want ErrMalformed", err)
	}
	if _, err := c.Results(testCtx(t, 10*time.Second), "a.b"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Results(a.b) = %v, want ErrInvalidID", err)
	}
}
