package main

import (
	"strings"
	"testing"
)

func TestWorker_Run(t *testing.T) {
	isolateEnv(t)
	url := testServer(t, "right")
	t.Run("wrong token", func(t *testing.T) {
		t.Setenv("C4BOOK_NATS_TOKEN", "wrong")
		r := run(t, "", workerArgs(url, "w1")...)
		wantErr(t, r, "the server at "+url+" refused the credentials", "nats.token is set")
		if code := exitCode(r.err); code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
	})
	t.Run("no token", func(t *testing.T) {
		r := run(t, "", workerArgs(url, "w1")...)
		wantErr(t, r, "the server at "+url+" needs credentials and none are set", "nats.token")
	})
	t.Run("no URL", func(t *testing.T) {
		r := run(t, "", "worker")
		wantErr(t, r, "--nats URL (nats.url) is required")
		if code := exitCode(r.err); code != 2 {
			t.Errorf("exit code %d, want 2", code)
		}
	})
	t.Run("no server there", func(t *testing.T) {
		r := run(t, "", workerArgs("nats://127.0.0.1:1", "w1")...)
		wantErr(t, r, "connecting to the NATS server at nats://127.0.0.1:1 (nats.url)")
	})
	t.Run("waits for a coordinator, leaves when idle", func(t *testing.T) {
		t.Setenv("C4BOOK_NATS_TOKEN", "right")
		r := run(t, "", workerArgs(url, "w1", "--exit-when-idle=500ms")...)
		wantOK(t, r)
		for _, want := range []string{"Connected to " + url, "waiting for a coordinator", "No coordinator set up the queue within 500ms: leaving."} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr has no %q:\n%s", want, r.stderr)
			}
		}
	})
}
