package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/worker"
)

// resultRecorder is a worker.Publisher that keeps the results published.
type resultRecorder struct {
	worker.Publisher
	results []queue.Result
}

func (r *resultRecorder) PublishResult(_ context.Context, res queue.Result) error {
	r.results = append(r.results, res)
	return nil
}

// TestLieFraction: the test-only fault injection is off unless set, and a
// value that is not a fraction in (0, 1] is refused, naming the variable.
func TestLieFraction(t *testing.T) {
	t.Setenv(lieEnv, "")
	if f, err := lieFraction(); f != 0 || err != nil {
		t.Errorf("unset: %v, %v; want 0, nil", f, err)
	}
	for _, bad := range []string{"0", "-0.5", "1.5", "half", "NaN"} {
		t.Setenv(lieEnv, bad)
		if _, err := lieFraction(); err == nil || !strings.Contains(err.Error(), lieEnv+"=") {
			t.Errorf("%s=%s: %v; want an error naming it", lieEnv, bad, err)
		}
	}
	t.Setenv(lieEnv, "0.25")
	if f, err := lieFraction(); f != 0.25 || err != nil {
		t.Errorf("0.25: %v, %v", f, err)
	}
}

// TestLyingPublisher: with a fraction of 0.5, every other result has its
// scores changed, a draw into -1 and any other score into 0; the others
// pass untouched.
func TestLyingPublisher(t *testing.T) {
	rec := &resultRecorder{}
	p := &lyingPublisher{Publisher: rec, fraction: 0.5}
	scores := []int8{0, 3, -2}
	for range 4 {
		if err := p.PublishResult(context.Background(), queue.Result{Scores: slices.Clone(scores)}); err != nil {
			t.Fatal(err)
		}
	}
	lie := []int8{-1, 0, 0}
	for i, r := range rec.results {
		want := scores
		if i%2 == 1 {
			want = lie
		}
		if !slices.Equal(r.Scores, want) {
			t.Errorf("result %d: scores %v, want %v", i, r.Scores, want)
		}
	}
	if p.lies.Load() != 2 {
		t.Errorf("%d lies, want 2", p.lies.Load())
	}
}
