//go:build c4book_testlie

package worker

import (
	"context"
	"slices"
	"testing"

	"github.com/c4book/c4book/queue"
)

// resultRecorder is a Publisher that keeps the results published.
type resultRecorder struct {
	Publisher
	results []queue.Result
}

func (r *resultRecorder) PublishResult(_ context.Context, res queue.Result) error {
	r.results = append(r.results, res)
	return nil
}

// TestLyingPublisher_positions: counted in positions, a fraction of 0.25
// changes every fourth score, across results.
func TestLyingPublisher_positions(t *testing.T) {
	rec := &resultRecorder{}
	p := &LyingPublisher{Publisher: rec, Fraction: 0.25, Positions: true}
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
	if lies, published := p.Lies(); lies != 3 || published != 12 {
		t.Errorf("%d of %d lied about, want 3 of 12", lies, published)
	}
}

// TestLyingPublisher: with a fraction of 0.5, every other result has its
// scores changed, a draw into -1 and any other score into 0; the others
// pass untouched.
func TestLyingPublisher(t *testing.T) {
	rec := &resultRecorder{}
	p := &LyingPublisher{Publisher: rec, Fraction: 0.5}
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
	if lies, _ := p.Lies(); lies != 2 {
		t.Errorf("%d lies, want 2", lies)
	}
}
