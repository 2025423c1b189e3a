package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// fakeClock is a clock whose time moves only when Retry sleeps on it.
type fakeClock struct {
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

var _ clock = (*fakeClock)(nil)

// failing returns a function failing with err its first n calls, then
// succeeding, and the count of its calls.
func failing(n int, err error) (func() error, *int) {
	calls := 0
	return func() error {
		calls++
		if calls <= n {
			return err
		}
		return nil
	}, &calls
}

// errPassing is a failure that passes: the connection is being re-established.
var errPassing = fmt.Errorf("queue: next task: %w", nats.ErrConnectionReconnecting)

func TestBackoff_Retry_pauses(t *testing.T) {
	clk := &fakeClock{now: time.Unix(0, 0)}
	b := Backoff{First: 100 * time.Millisecond, Max: 2 * time.Second, Jitter: 0.25, clock: clk}
	fn, calls := failing(20, errPassing)
	if err := b.Retry(context.Background(), nil, "the server", fn); err != nil {
		t.Fatal(err)
	}
	if *calls != 21 || len(clk.sleeps) != 20 {
		t.Fatalf("%d calls, %d pauses; want 21 and 20", *calls, len(clk.sleeps))
	}
	base := b.First
	distinct := map[time.Duration]bool{}
	for i, d := range clk.sleeps {
		// Each pause lies in [(1-Jitter)*base, base], base doubling up
		// to Max.
		if lo := time.Duration(0.75 * float64(base)); d < lo || d > base {
			t.Errorf("pause %d: %v, want within [%v, %v]", i, d, lo, base)
		}
		// Below the cap, a pause is longer than the one before: 0.75 of
		// twice the base is more than the base.
		if i > 0 && base < b.Max && d <= clk.sleeps[i-1] {
			t.Errorf("pause %d: %v, not longer than the one before (%v)", i, d, clk.sleeps[i-1])
		}
		if base == b.Max {
			distinct[d] = true
		}
		base = min(2*base, b.Max)
	}
	// 15 pauses at the cap, drawn at random: not all the same.
	if len(distinct) < 2 {
		t.Errorf("the pauses at the cap are all %v: no jitter", clk.sleeps[len(clk.sleeps)-1])
	}
}

func TestBackoff_Retry_defaults(t *testing.T) {
	clk := &fakeClock{now: time.Unix(0, 0)}
	fn, _ := failing(10, errPassing)
	if err := (Backoff{clock: clk}).Retry(context.Background(), nil, "the server", fn); err != nil {
		t.Fatal(err)
	}
	if first := clk.sleeps[0]; first > defaultBackoffFirst || first < defaultBackoffFirst*3/4 {
		t.Errorf("first pause %v, want about %v", first, defaultBackoffFirst)
	}
	for i, d := range clk.sleeps {
		if d > defaultBackoffMax {
			t.Errorf("pause %d: %v, above the cap of %v", i, d, defaultBackoffMax)
		}
	}
}

func TestBackoff_Retry_notPassing(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"refused credentials", fmt.Errorf("%w: check nats.token", ErrAuth)},
		{"closed", fmt.Errorf("queue: next task: %w", ErrClosed)},
		{"malformed", &DecodeError{Err: malformed("short")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{now: time.Unix(0, 0)}
			var logs logBuffer
			fn, calls := failing(100, tc.err)
			err := Backoff{clock: clk}.Retry(context.Background(), logs.logger(), "the server", fn)
			if !errors.Is(err, tc.err) {
				t.Errorf("Retry = %v, want %v", err, tc.err)
			}
			if *calls != 1 || len(clk.sleeps) != 0 || logs.String() != "" {
				t.Errorf("%d calls, %d pauses, logged %q; want one call, no pause, nothing logged", *calls, len(clk.sleeps), logs.String())
			}
		})
	}
	t.Run("own classification", func(t *testing.T) {
		clk := &fakeClock{now: time.Unix(0, 0)}
		odd := errors.New("odd")
		fn, calls := failing(3, odd)
		b := Backoff{Passing: func(err error) bool { return err == odd }, clock: clk}
		if err := b.Retry(context.Background(), nil, "x", fn); err != nil || *calls != 4 {
			t.Errorf("Retry = %v after %d calls, want nil after 4", err, *calls)
		}
	})
	t.Run("errPassing errors", func(t *testing.T) {
		for _, err := range []error{
			fmt.Errorf("queue: bind consumer: %w", ErrNotReady),
			fmt.Errorf("queue: connect to nats://h:4222: %w: %w", ErrUnreachable, nats.ErrNoServers),
			nats.ErrTimeout, nats.ErrNoResponders, context.DeadlineExceeded,
		} {
			if !Transient(err) {
				t.Errorf("Transient(%v) = false", err)
			}
		}
	})
}

func TestBackoff_Retry_ctx(t *testing.T) {
	t.Run("done between attempts", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		calls := 0
		fn := func() error {
			calls++
			if calls == 3 {
				cancel()
			}
			return errPassing
		}
		err := Backoff{clock: &fakeClock{}}.Retry(ctx, nil, "the server", fn)
		if !errors.Is(err, context.Canceled) || calls != 3 {
			t.Fatalf("Retry = %v after %d calls, want context.Canceled after 3", err, calls)
		}
		if !strings.Contains(err.Error(), "waiting for the server") || !strings.Contains(err.Error(), nats.ErrConnectionReconnecting.Error()) {
			t.Errorf("the error does not say what was waited for, and the last failure: %v", err)
		}
	})
	t.Run("done during a pause", func(t *testing.T) {
		// A pause of an hour, on the real clock: Retry returns when ctx
		// is done, or the test times out.
		ctx, cancel := context.WithCancel(context.Background())
		failed := make(chan struct{})
		done := make(chan error)
		go func() {
			done <- Backoff{First: time.Hour, Max: time.Hour}.Retry(ctx, nil, "the server", func() error {
				close(failed)
				return errPassing
			})
		}()
		<-failed
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Retry = %v, want context.Canceled", err)
		}
	})
}

// TestBackoff_Retry_log: an hour of failures is a line at the first
// failure, then one a minute, and a line saying how long it took.
func TestBackoff_Retry_log(t *testing.T) {
	clk := &fakeClock{now: time.Unix(0, 0)}
	start := clk.now
	var logs logBuffer
	fn := func() error {
		if clk.now.Sub(start) >= time.Hour {
			return nil
		}
		return errPassing
	}
	b := Backoff{Level: slog.LevelWarn, clock: clk}
	if err := b.Retry(context.Background(), logs.logger(), "the NATS server", fn); err != nil {
		t.Fatal(err)
	}
	var waited []time.Duration
	lines := strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n")
	for _, line := range lines[:len(lines)-1] {
		if !strings.Contains(line, `level=WARN msg="waiting for the NATS server"`) || !strings.Contains(line, "error=") {
			t.Fatalf("line %q, want a warning naming what it waits for and the error", line)
		}
		waited = append(waited, lineDuration(t, line, "waited"))
	}
	last := lines[len(lines)-1]
	if !strings.Contains(last, `msg="waited for the NATS server"`) || lineDuration(t, last, "waited") < time.Hour {
		t.Errorf("last line %q, want how long it waited (an hour or more)", last)
	}
	if waited[0] != 0 {
		t.Errorf("first line says %v waited, want 0: it is logged at the first failure", waited[0])
	}
	for i := 1; i < len(waited); i++ {
		if gap := waited[i] - waited[i-1]; gap < time.Minute {
			t.Errorf("lines %d and %d are %v apart, less than a minute", i-1, i, gap)
		}
	}
	// At most one a minute, and at least one every minute and a pause.
	if n := len(waited); n < 55 || n > 61 {
		t.Errorf("%d waiting lines in an hour, want about 60:\n%s", n, logs.String())
	}
}

// lineDuration returns the duration of key in a text log line.
func lineDuration(tb testing.TB, line, key string) time.Duration {
	tb.Helper()
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				tb.Fatalf("%s in %q: %v", key, line, err)
			}
			return d
		}
	}
	tb.Fatalf("no %s in %q", key, line)
	return 0
}
