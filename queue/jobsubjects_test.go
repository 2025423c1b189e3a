package queue

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestServer_resultFlood: what one worker key can put in the result
// stream, with plain nats.go as an attacker would: nothing for a job
// that is not open, no message over resultMaxMsgBytes, at most
// resultMaxMsgsPerSubject messages waiting on its own subject of an open
// job; another worker's results are still stored; and what the stream
// held of a job no longer open is purged at the next opening, naming its
// sender. Before, a key filled the stream's gigabyte in seconds on a job
// nobody ran, and every job on the server stopped.
func TestServer_resultFlood(t *testing.T) {
	t.Parallel()
	k := startKeyed(t, []string{"mallory", "alice"})
	ctx := testCtx(t, 60*time.Second)
	openJob(t, k.coord, "job1")
	nc, _ := k.rawWorker(t, "mallory")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stored := func() uint64 {
		t.Helper()
		s, err := k.coord.js.Stream(ctx, ResultStream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	publish := func(subject string, data []byte) error {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := js.PublishMsg(pctx, &nats.Msg{Subject: subject, Data: data})
		return err
	}

	if err := publish(WorkerResultSubject("junkjob", "mallory"), []byte("junk")); err == nil {
		t.Error("a result of a job nobody runs was stored")
	}
	big := bytes.Repeat([]byte{'x'}, resultMaxMsgBytes+1)
	if err := publish(WorkerResultSubject("job1", "mallory"), big); err == nil {
		t.Errorf("a message of %d bytes was stored", len(big))
	}
	for i := range resultMaxMsgsPerSubject {
		if err := publish(WorkerResultSubject("job1", "mallory"), []byte{byte(i)}); err != nil {
			t.Fatalf("message %d on its own subject: %v", i+1, err)
		}
	}
	err = publish(WorkerResultSubject("job1", "mallory"), []byte("one more"))
	if !streamFull(err) {
		t.Errorf("message %d on its own subject: %v, want refused as the subject's limit", resultMaxMsgsPerSubject+1, err)
	}
	if n := stored(); n != resultMaxMsgsPerSubject {
		t.Errorf("the stream holds %d messages, want %d", n, resultMaxMsgsPerSubject)
	}
	alice, err := k.connectWorker(t, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.PublishResult(ctx, resultFor(testTask(t, "job1", 1, 2), "alice")); err != nil {
		t.Errorf("alice's result beside mallory's flood: %v", err)
	}

	// job1 ends without its results taken (as if its coordinator's
	// record were lost); the next job opened purges them.
	s, err := k.coord.js.Stream(ctx, ResultStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.coord.closeJobSubjects(ctx, s, "job1"); err != nil {
		t.Fatal(err)
	}
	stray, err := k.coord.openJobSubjects(ctx, "job2")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, s := range stray {
		got[s.Worker] = s.Messages
	}
	if len(stray) != 2 || got["mallory"] != resultMaxMsgsPerSubject || got["alice"] != 1 {
		t.Errorf("stray results %+v, want mallory's %d and alice's 1", stray, resultMaxMsgsPerSubject)
	}
	if n := stored(); n != 0 {
		t.Errorf("the stream holds %d messages after the purge, want 0", n)
	}
}

// TestEnsureStreams_keepsOpenJobs: setting the streams up again (another
// coordinator starting) keeps the subjects of the jobs open, and drops the
// catch-all subject of earlier versions.
func TestEnsureStreams_keepsOpenJobs(t *testing.T) {
	t.Parallel()
	_, c := setupQueue(t, testStreams)
	ctx := testCtx(t, 30*time.Second)
	s, err := c.js.Stream(ctx, ResultStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	cfg.Subjects = []string{resultSubjectPrefix + ">"} // as before
	if _, err := c.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureStreams(ctx, testStreams); err != nil {
		t.Fatal(err)
	}
	openJob(t, c, "a")
	openJob(t, c, "b")
	if err := c.EnsureStreams(ctx, testStreams); err != nil {
		t.Fatal(err)
	}
	if info, err = s.Info(ctx); err != nil {
		t.Fatal(err)
	}
	want := append(jobResultSubjects("a"), jobResultSubjects("b")...)
	if got := info.Config.Subjects; !equalSets(got, want) {
		t.Errorf("subjects %v, want %v", got, want)
	}
	if err := c.RemoveJob(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveJob(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if info, err = s.Info(ctx); err != nil {
		t.Fatal(err)
	}
	if got := info.Config.Subjects; !equalSets(got, []string{noJobSubject}) {
		t.Errorf("subjects with no job open %v, want %v", got, noJobSubject)
	}
}

// equalSets reports whether a and b hold the same strings.
func equalSets(a, b []string) bool {
	return len(a) == len(b) && containsAll(a, b) && containsAll(b, a)
}

func TestSubjectMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, subject string
		want             bool
	}{
		{"c4book.results.j", "c4book.results.j", true},
		{"c4book.results.j.*", "c4book.results.j.w", true},
		{"c4book.results.j.*", "c4book.results.j", false},
		{"c4book.results.j.*", "c4book.results.j.w.x", false},
		{"c4book.results.>", "c4book.results.j.w", true},
		{"c4book.results.>", "c4book.results", false},
		{"c4book.results.j", "c4book.results.k", false},
	} {
		if got := subjectMatches(c.pattern, c.subject); got != c.want {
			t.Errorf("subjectMatches(%q, %q) = %v", c.pattern, c.subject, got)
		}
	}
}
