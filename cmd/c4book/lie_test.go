//go:build c4book_testlie

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

// TestLieFraction: the test-only fault injection is off unless set, a
// value that is not a fraction in (0, 1] is refused, naming the variable,
// and so are both variables at once.
func TestLieFraction(t *testing.T) {
	t.Setenv(lieEnv, "")
	t.Setenv(liePositionsEnv, "")
	if f, _, err := lieFraction(); f != 0 || err != nil {
		t.Errorf("unset: %v, %v; want 0, nil", f, err)
	}
	for _, env := range []string{lieEnv, liePositionsEnv} {
		for _, bad := range []string{"0", "-0.5", "1.5", "half", "NaN"} {
			t.Setenv(env, bad)
			if _, _, err := lieFraction(); err == nil || !strings.Contains(err.Error(), env+"=") {
				t.Errorf("%s=%s: %v; want an error naming it", env, bad, err)
			}
		}
		t.Setenv(env, "0.25")
		if f, positions, err := lieFraction(); f != 0.25 || positions != (env == liePositionsEnv) || err != nil {
			t.Errorf("%s=0.25: %v, %v, %v", env, f, positions, err)
		}
		t.Setenv(env, "")
	}
	t.Setenv(lieEnv, "0.5")
	t.Setenv(liePositionsEnv, "0.5")
	if _, _, err := lieFraction(); err == nil {
		t.Error("both set: no error")
	}
}

// TestLyingPublisher_positions: counted in positions, a fraction of 0.25
// changes every fourth score, across results.
func TestLyingPublisher_positions(t *testing.T) {
	t.Parallel()
	rec := &resultRecorder{}
	p := &lyingPublisher{Publisher: rec, fraction: 0.25, positions: true}
	for range 2 {
		if err := p.PublishResult(context.Background(), queue.Result{Scores: []int8{0, 3, -2, 5, 0, 1}}); err != nil {
			t.Fatal(err)
		}
	}
	want := [][]int8{{0, 3, -2, 0, 0, 1}, {0, 0, -2, 5, 0, 0}}
	for i, r := range rec.results {
		if !slices.Equal(r.Scores, want[i]) {
			t.Errorf("result %d: %v, want %v", i, r.Scores, want[i])
		}
	}
	if p.lies.Load() != 3 || p.published.Load() != 12 {
		t.Errorf("%d of %d lied about, want 3 of 12", p.lies.Load(), p.published.Load())
	}
}

// TestLyingPublisher: with a fraction of 0.5, every other result has its
// scores changed, a draw into -1 and any other score into 0; the others
// pass untouched.
func TestLyingPublisher(t *testing.T) {
	t.Parallel()
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
