package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseSize: any string gives a size or an error, never a panic, and a
// size prints back to a string that parses to the same size.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"64MiB", "1GiB", "512MB", "1048576", "", "-1", "64XB", "1e3", "99999999999999999999GiB", " 8 KiB "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		z, err := ParseSize(s)
		if err != nil {
			return
		}
		back, err := ParseSize(z.String())
		if err != nil || back != z {
			t.Fatalf("ParseSize(%q) = %d, printed %q, parsed back %d, %v", s, z, z.String(), back, err)
		}
	})
}

// FuzzLoad: any config file gives a valid Config or an error, never a
// panic.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"board:\n  width: 7\n  height: 6\n",
		"solver:\n  tt-size: 256MiB\n",
		"queue:\n  ack-wait: 30s\n  cross-check: 0.5\n",
		"nats: [1, 2]\n",
		"board: 7\n",
		"board:\n  width: 7\n height: [\n",
		"book:\n  path: {a: b}\n",
		"worker:\n  concurrency: 1e400\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		path := filepath.Join(t.TempDir(), "c4book.yaml")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(Source{File: path, Dir: t.TempDir()})
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Load accepted a config that Validate refuses: %v", err)
		}
	})
}
