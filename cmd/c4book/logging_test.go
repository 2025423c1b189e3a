package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun_logFlags(t *testing.T) {
	isolateEnv(t)
	t.Run("bad level", func(t *testing.T) {
		r := run(t, "", "solve", "--log-level=verbose", "4")
		wantErr(t, r, `log.level: "verbose" is not a log level: must be one of debug, info, warn, error`, "--log-level")
		if code := exitCode(r.err); code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
	})
	t.Run("bad format from the environment", func(t *testing.T) {
		t.Setenv("C4BOOK_LOG_FORMAT", "xml")
		wantErr(t, run(t, "", "solve", "4"), `log.format: "xml" is not a log format: must be text or json`, "C4BOOK_LOG_FORMAT")
	})
	t.Run("in --help", func(t *testing.T) {
		r := run(t, "", "worker", "--help")
		wantOK(t, r)
		for _, want := range []string{"--log-format FORMAT", "text or json (log.format)", "--log-level LEVEL", "debug, info, warn, error (log.level)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("worker --help does not mention %q:\n%s", want, r.stdout)
			}
		}
	})

	// A small job: its coordinator logs at info, its local worker at
	// debug and info.
	generate := func(t *testing.T, more ...string) result {
		t.Helper()
		args := []string{"generate", "--width=5", "--height=4", "--depth=6", "--book", filepath.Join(t.TempDir(), "5x4.db"), "--workers=1", testTTSize}
		r := run(t, "", append(args, more...)...)
		wantOK(t, r)
		return r
	}
	t.Run("json", func(t *testing.T) {
		r := generate(t, "--log-format=json")
		msgs := map[string]bool{}
		for _, line := range outputLines(r.stderr) {
			var rec struct {
				Time, Level, Msg, Role string
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("a line of standard error is not a JSON object: %q: %v", line, err)
				continue
			}
			if rec.Time == "" || rec.Level == "" {
				t.Errorf("a JSON line without time or level: %q", line)
			}
			msgs[rec.Role+": "+rec.Msg] = true
		}
		if !msgs["coordinator: planning"] || !msgs["coordinator: job complete"] {
			t.Errorf("the coordinator's messages are missing: %v\nstderr:\n%s", msgs, r.stderr)
		}
	})
	t.Run("default: the local worker's information is not shown", func(t *testing.T) {
		r := generate(t)
		if !strings.Contains(r.stderr, "level=INFO msg=planning role=coordinator") || strings.Contains(r.stderr, "role=worker") {
			t.Errorf("stderr:\n%s", r.stderr)
		}
	})
	t.Run("warn", func(t *testing.T) {
		r := generate(t, "--log-level=warn")
		if strings.Contains(r.stderr, "level=INFO") {
			t.Errorf("information logged at --log-level warn:\n%s", r.stderr)
		}
	})
	t.Run("debug: the local worker's messages too", func(t *testing.T) {
		r := generate(t, "--log-level=debug")
		if !strings.Contains(r.stderr, `level=INFO msg="worker stopped" role=worker`) {
			t.Errorf("the local worker's messages are not shown at --log-level debug:\n%s", r.stderr)
		}
	})
}
