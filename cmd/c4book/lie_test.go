//go:build c4book_testlie

package main

import (
	"strings"
	"testing"
)

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
