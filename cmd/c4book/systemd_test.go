package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/c4book/c4book/config"
)

// TestSystemdUnit checks the worker's unit file,
// scripts/deploy/systemd/c4book-worker.service: it runs `c4book worker`,
// every C4BOOK_ variable its comments show sets a configuration key, and
// systemd reads it without a complaint (systemd-analyze verify; that part
// is skipped where systemd is not installed).
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	unit, err := os.ReadFile(filepath.Join("..", "..", "scripts", "deploy", "systemd", "c4book-worker.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^ExecStart=\S+/c4book worker$`).Match(unit) {
		t.Error("the unit does not run c4book worker")
	}
	known := map[string]bool{}
	for _, k := range config.Keys() {
		known[k.Env] = true
	}
	for _, v := range regexp.MustCompile(`C4BOOK_[A-Z0-9_]*[A-Z0-9](_\*)?`).FindAllString(string(unit), -1) {
		prefix, wild := strings.CutSuffix(v, "*")
		found := known[v]
		for env := range known {
			found = found || wild && strings.HasPrefix(env, prefix)
		}
		if !found {
			t.Errorf("the unit names %s, which sets no configuration key", v)
		}
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed: the unit's syntax is not checked")
	}
	// A copy that verify can check here: this test binary stands for
	// c4book, and the settings file may be absent.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	local := regexp.MustCompile(`(?m)^ExecStart=\S+`).ReplaceAll(unit, []byte("ExecStart="+exe))
	local = bytes.Replace(local, []byte("EnvironmentFile=/"), []byte("EnvironmentFile=-/"), 1)
	// And the unit as a worker with a key runs it: its two lines
	// uncommented.
	keyed := regexp.MustCompile(`(?m)^#(LoadCredential=|Environment=C4BOOK_NATS_NKEY=)`).ReplaceAll(local, []byte("$1"))
	if bytes.Equal(keyed, local) || bytes.Count(keyed, []byte("\nLoadCredential=")) != 1 {
		t.Fatal("the unit has no commented LoadCredential= and Environment=C4BOOK_NATS_NKEY= lines for a worker key")
	}
	for name, text := range map[string][]byte{"as shipped": local, "with a key": keyed} {
		path := filepath.Join(t.TempDir(), "c4book-worker.service")
		if err := os.WriteFile(path, text, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(analyze, "verify", path).CombinedOutput()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("systemd-analyze verify, %s: %v\n%s", name, err, out)
		}
	}
}
