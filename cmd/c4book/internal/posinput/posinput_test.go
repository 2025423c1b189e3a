package posinput

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/c4book/c4book/solver"
)

// TestPositionInput: arguments, or lines that hold something, are
// answered in order with their moves as written (the empty board "-"),
// bulk or not; each input that is not a position is reported with its
// number, and the run fails at the end, counting them; a run whose
// context ended stops.
func TestPositionInput(t *testing.T) {
	run := func(ctx context.Context, bulk bool, args []string, stdin string) (answers, stderr string, err error) {
		var a, e strings.Builder
		in := &Input{Board: solver.Standard, Stderr: &e, Bulk: bulk}
		answer := func(_ context.Context, moves []byte, p solver.Position) error {
			fmt.Fprintf(&a, "%s:%d\n", moves, p.Moves())
			return nil
		}
		err = in.Run(ctx, args, strings.NewReader(stdin), answer, func() error { return nil })
		return a.String(), e.String(), err
	}
	for _, bulk := range []bool{false, true} {
		t.Run(fmt.Sprint("bulk ", bulk), func(t *testing.T) {
			answers, stderr, err := run(context.Background(), bulk, nil, "4453 -2\n\n# note\n  44\t\n- 0\n4459\n1 2 3\n")
			if want := "4453:4\n44:2\n-:0\n"; answers != want {
				t.Errorf("answers %q, want %q", answers, want)
			}
			if !strings.Contains(stderr, "line 6: moves \"4459\"") || !strings.Contains(stderr, `line 7: want "moves" or "moves score", got "1 2 3"`) {
				t.Errorf("messages:\n%s", stderr)
			}
			if err == nil || err.Error() != "2 of 5 lines are not positions (see the messages above)" {
				t.Errorf("error %v", err)
			}
		})
	}
	t.Run("arguments", func(t *testing.T) {
		answers, stderr, err := run(context.Background(), false, []string{" 4453 ", "", "9"}, "")
		if answers != "4453:4\n-:0\n" || !strings.Contains(stderr, "argument 3: ") ||
			err == nil || err.Error() != "1 of 3 arguments are not positions (see the messages above)" {
			t.Errorf("answers %q, messages %q, error %v", answers, stderr, err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, args := range [][]string{nil, {"4453"}} {
			if answers, _, err := run(ctx, false, args, "4453\n44\n"); answers != "" || !errors.Is(err, context.Canceled) {
				t.Errorf("args %q: answers %q, error %v; want none, interrupted", args, answers, err)
			}
		}
	})
}
