//go:build !c4book_testlie

package main

import (
	"strings"
	"testing"
)

// TestWorker_noLiar: a binary built without the tag c4book_testlie has no
// lying worker (lie.go): its variables are refused as any C4BOOK_
// variable that is no key's, so that a script expecting a liar fails
// loudly instead of running honest workers.
func TestWorker_noLiar(t *testing.T) {
	isolateEnv(t)
	if inject, err := faultInjection(nil); inject != nil || err != nil || len(testEnvVars()) > 0 {
		t.Fatal("a fault injection is compiled in without the tag c4book_testlie")
	}
	for _, env := range []string{"C4BOOK_TEST_LIE_FRACTION", "C4BOOK_TEST_LIE_POSITIONS"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "0.5")
			r := run(t, "", "worker", "--nats", "nats://127.0.0.1:1")
			if r.err == nil || !strings.Contains(r.err.Error(), env+" is not a configuration key") {
				t.Errorf("err = %v; want %s refused as no key's", r.err, env)
			}
		})
	}
}
