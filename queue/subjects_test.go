package queue

import (
	"errors"
	"strings"
	"testing"
)

func TestValidJobID(t *testing.T) {
	for _, job := range []string{"j", "depth-8", "Job_2024-01-02", strings.Repeat("a", MaxJobIDLen)} {
		t.Run("valid "+job[:min(len(job), 10)], func(t *testing.T) {
			if err := ValidJobID(job); err != nil {
				t.Errorf("ValidJobID(%q) = %v", job, err)
			}
		})
	}
	for _, job := range []string{"", "a.b", "a*", ">", "a b", "a/b", "é", strings.Repeat("a", MaxJobIDLen+1), "a\x00"} {
		t.Run("invalid "+job[:min(len(job), 10)], func(t *testing.T) {
			if err := ValidJobID(job); !errors.Is(err, ErrInvalidID) {
				t.Errorf("ValidJobID(%q) = %v, want ErrInvalidID", job, err)
			}
		})
	}
}

func TestValidWorkerID(t *testing.T) {
	for _, id := range []string{"w", "host-3/1234", "a.b*c>~!", strings.Repeat("w", MaxWorkerIDLen)} {
		if err := ValidWorkerID(id); err != nil {
			t.Errorf("ValidWorkerID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", "a b", "tab\t", "é", "del\x7f", strings.Repeat("w", MaxWorkerIDLen+1)} {
		if err := ValidWorkerID(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("ValidWorkerID(%q) = %v, want ErrInvalidID", id, err)
		}
	}
}

func TestWorkerKey(t *testing.T) {
	cases := map[string]string{
		"w1":          "worker.w1",
		"host-3/1234": "worker.host-3=2F1234",
		"a.b":         "worker.a=2Eb",
		"=":           "worker.=3D",
		"a=2Eb":       "worker.a=3D2Eb", // no clash with "a.b"
	}
	for id, want := range cases {
		t.Run(id, func(t *testing.T) {
			got := workerKey(id)
			if got != want {
				t.Errorf("workerKey(%q) = %q, want %q", id, got, want)
			}
			for _, c := range strings.TrimPrefix(got, workerKeyPrefix) {
				if !isIDByte(byte(c)) && c != '=' {
					t.Errorf("workerKey(%q) = %q: %q is not allowed in a KV key token", id, got, c)
				}
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	if got := TaskSubject("j1"); got != "c4book.tasks.j1" {
		t.Errorf("TaskSubject = %q", got)
	}
	if got := ResultSubject("j1"); got != "c4book.results.j1" {
		t.Errorf("ResultSubject = %q", got)
	}
	if got := ResultConsumer("j1"); got != "c4book-coord-j1" {
		t.Errorf("ResultConsumer = %q", got)
	}
	if got := resultMsgID("j1", 42, "w/1"); got != "j1/42/w/1" {
		t.Errorf("resultMsgID = %q", got)
	}
}

func TestSubjectWorker(t *testing.T) {
	cases := []struct {
		subject, worker string
		ok              bool
	}{
		{"c4book.results.job1", "", true},            // a worker before per-worker subjects
		{"c4book.results.job1.alice", "alice", true}, // a worker with a key
		{WorkerResultSubject("job1", "host.lan/42"), "host.lan/42", true},
		{"c4book.results.job10.alice", "", false}, // another job
		{"c4book.results.job1x", "", false},
		{"c4book.results.job1.", "", false},     // no worker
		{"c4book.results.job1.a=2", "", false},  // a cut escape
		{"c4book.results.job1.a=2d", "", false}, // lower case: not escapeID's
		{"c4book.results.job1.a=41", "", false}, // 'A' escaped: not escapeID's
		{"c4book.tasks.job1.alice", "", false},
	}
	for _, c := range cases {
		w, ok := subjectWorker(c.subject, "job1")
		if w != c.worker || ok != c.ok {
			t.Errorf("subjectWorker(%q) = %q, %v; want %q, %v", c.subject, w, ok, c.worker, c.ok)
		}
	}
	if got := WorkerResultSubject("job1", "host.lan/42"); got != "c4book.results.job1.host=2Elan=2F42" {
		t.Errorf("WorkerResultSubject = %q", got)
	}
}

// FuzzUnescapeID: unescapeID inverts escapeID, and what it accepts it
// got from escapeID (one id, one subject token).
func FuzzUnescapeID(f *testing.F) {
	for _, s := range []string{"alice", "host=2Elan=2F42", "=", "=4", "=41", "=2e", "a.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := unescapeID(s)
		if err != nil {
			return
		}
		if back := escapeID(id); back != s {
			t.Fatalf("unescapeID(%q) = %q, which escapes to %q", s, id, back)
		}
		if strings.ContainsAny(s, ".*> ") {
			t.Fatalf("unescapeID accepted %q, not one subject token", s)
		}
	})
}
