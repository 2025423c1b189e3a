package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/c4book/c4book/solver"
)

// isolateEnv unsets every C4BOOK_* variable of a key for the test (an
// empty variable counts as unset), so the caller's environment does not
// leak into it.
func isolateEnv(tb testing.TB) {
	tb.Helper()
	for _, k := range keys {
		if t, ok := tb.(*testing.T); ok {
			t.Setenv(EnvVar(k.name), "")
		} else {
			tb.Fatal("isolateEnv needs a *testing.T")
		}
	}
}

// writeFile writes text to name in a new temporary directory and returns
// its path.
func writeFile(tb testing.TB, name, text string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// testFlags returns flags --width (int) and --tt-size (string) parsed from
// args, bound to their keys as a command would bind them.
func testFlags(tb testing.TB, args ...string) map[string]*pflag.Flag {
	tb.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.Int("width", 7, "")
	fs.String("tt-size", "64MiB", "")
	if err := fs.Parse(args); err != nil {
		tb.Fatal(err)
	}
	return map[string]*pflag.Flag{"board.width": fs.Lookup("width"), "solver.tt-size": fs.Lookup("tt-size")}
}

// mustLoad loads src and fails the test on an error.
func mustLoad(tb testing.TB, src Source) Config {
	tb.Helper()
	cfg, err := Load(src)
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	return cfg
}

// wantError checks that err is non-nil and contains every part.
func wantError(tb testing.TB, err error, parts ...string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			tb.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func TestLoad_precedence(t *testing.T) {
	isolateEnv(t)
	file := writeFile(t, "c.yaml", "board:\n  width: 6\n  height: 5\nsolver:\n  tt-size: 8MiB\nqueue:\n  ack-wait: 1m\nnats:\n  tls:\n    ca: ca.pem\n")

	t.Run("defaults", func(t *testing.T) {
		cfg := mustLoad(t, Source{Dir: t.TempDir()})
		if def := Default(); cfg != def {
			t.Errorf("Load with nothing set = %+v, want the defaults %+v", cfg, def)
		}
	})
	t.Run("file overrides default", func(t *testing.T) {
		cfg := mustLoad(t, Source{File: file})
		if cfg.Board.Width != 6 || cfg.Board.Height != 5 || cfg.Solver.TTSize != 8*MiB || cfg.Queue.AckWait != time.Minute || cfg.NATS.TLS.CA != "ca.pem" {
			t.Errorf("got %+v, want the file's values", cfg)
		}
		if cfg.Queue.TaskSize != DefaultTaskSize {
			t.Errorf("queue.task-size = %d, want the default %d (not in the file)", cfg.Queue.TaskSize, DefaultTaskSize)
		}
	})
	t.Run("default file in Dir", func(t *testing.T) {
		dir := filepath.Dir(writeFile(t, DefaultFile, "book:\n  path: /tmp/b\n"))
		if cfg := mustLoad(t, Source{Dir: dir}); cfg.Book.Path != "/tmp/b" {
			t.Errorf("book.path = %q, want /tmp/b from %s", cfg.Book.Path, DefaultFile)
		}
	})
	t.Run("env overrides file", func(t *testing.T) {
		t.Setenv("C4BOOK_BOARD_WIDTH", "5")
		t.Setenv("C4BOOK_SOLVER_TT_SIZE", "2MiB")
		t.Setenv("C4BOOK_NATS_TLS_CA", "other.pem")
		cfg := mustLoad(t, Source{File: file})
		if cfg.Board.Width != 5 || cfg.Solver.TTSize != 2*MiB || cfg.NATS.TLS.CA != "other.pem" {
			t.Errorf("got %+v, want the environment's values", cfg)
		}
		if cfg.Board.Height != 5 {
			t.Errorf("board.height = %d, want 5 from the file", cfg.Board.Height)
		}
	})
	t.Run("flag overrides env", func(t *testing.T) {
		t.Setenv("C4BOOK_BOARD_WIDTH", "5")
		t.Setenv("C4BOOK_SOLVER_TT_SIZE", "2MiB")
		cfg := mustLoad(t, Source{File: file, Flags: testFlags(t, "--width=4", "--tt-size=1MiB")})
		if cfg.Board.Width != 4 || cfg.Solver.TTSize != MiB {
			t.Errorf("got %+v, want the flags' values", cfg)
		}
	})
	t.Run("unset flag does not override", func(t *testing.T) {
		t.Setenv("C4BOOK_SOLVER_TT_SIZE", "2MiB")
		cfg := mustLoad(t, Source{File: file, Flags: testFlags(t)})
		if cfg.Board.Width != 6 || cfg.Solver.TTSize != 2*MiB {
			t.Errorf("got width %d, tt-size %v; want 6 (file) and 2MiB (env)", cfg.Board.Width, cfg.Solver.TTSize)
		}
	})
	t.Run("keys are case-insensitive", func(t *testing.T) {
		f := writeFile(t, "c.yaml", "Board:\n  Width: 8\n  HEIGHT: 7\n")
		if cfg := mustLoad(t, Source{File: f}); cfg.Board.Width != 8 || cfg.Board.Height != 7 {
			t.Errorf("got %dx%d, want 8x7", cfg.Board.Width, cfg.Board.Height)
		}
	})
	t.Run("other formats", func(t *testing.T) {
		f := writeFile(t, "c.json", `{"generate": {"depth": 3, "root": "44"}}`)
		if cfg := mustLoad(t, Source{File: f}); cfg.Generate.Depth != 3 || cfg.Generate.Root != "44" {
			t.Errorf("got %+v, want depth 3 and root 44 from JSON", cfg.Generate)
		}
		f = writeFile(t, "c4book.conf", "worker:\n  concurrency: 3\n")
		if cfg := mustLoad(t, Source{File: f}); cfg.Worker.Concurrency != 3 {
			t.Errorf("worker.concurrency = %d, want 3 from a file read as YAML", cfg.Worker.Concurrency)
		}
	})
}

func TestLoad_errors(t *testing.T) {
	isolateEnv(t)
	cases := []struct {
		name  string
		file  string // config file text; "" for no file
		env   map[string]string
		flags []string
		want  []string
	}{
		{name: "unknown key", file: "nats:\n  ulr: nats://x:4222\n", want: []string{`unknown key "nats.ulr"`, `did you mean "nats.url"?`}},
		{name: "unknown section", file: "colour: red\n", want: []string{`unknown key "colour"`}},
		{name: "section as value", file: "board: 7\n", want: []string{`"board" is a section`, "board.width"}},
		{name: "malformed YAML", file: "board:\n  width: 7\n height: [\n", want: []string{"c.yaml: malformed", "yaml"}},
		{name: "not an integer in file", file: "board:\n  width: seven\n", want: []string{`board.width: "seven" is not an integer`, "c.yaml"}},
		{name: "list for a string", file: "book:\n  path: [a, b]\n", want: []string{"book.path: a list is not a string"}},
		{name: "bad size from env", env: map[string]string{"C4BOOK_SOLVER_TT_SIZE": "64XB"}, want: []string{`solver.tt-size: "64XB" is not a size (use bytes or a suffix KiB, MiB, GiB, KB, MB, GB)`, "C4BOOK_SOLVER_TT_SIZE"}},
		{name: "bad duration from env", env: map[string]string{"C4BOOK_QUEUE_ACK_WAIT": "30"}, want: []string{`queue.ack-wait: "30" is not a duration`}},
		{name: "invalid value from flag", flags: []string{"--width=12"}, want: []string{"board.width: 12 is out of range: width must be 1..9 and width*(height+1) <= 64", "flag --width"}},
		{name: "bad size from flag", flags: []string{"--tt-size=big"}, want: []string{`solver.tt-size: "big" is not a size`, "flag --tt-size"}},
		{name: "two bad values", env: map[string]string{"C4BOOK_QUEUE_TASK_SIZE": "0", "C4BOOK_WORKER_CONCURRENCY": "-1"}, want: []string{"queue.task-size: 0", "worker.concurrency: -1"}},
		{name: "not a number from env", env: map[string]string{"C4BOOK_QUEUE_CROSS_CHECK": "some"}, want: []string{`queue.cross-check: "some" is not a number`}},
		{name: "fraction out of range in file", file: "queue:\n  cross-check: 1.5\n", want: []string{"queue.cross-check: 1.5 is out of range: must be a fraction 0..1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			src := Source{Dir: t.TempDir(), Flags: testFlags(t, c.flags...)}
			if c.file != "" {
				src.File = writeFile(t, "c.yaml", c.file)
			}
			_, err := Load(src)
			wantError(t, err, c.want...)
		})
	}
	t.Run("table larger than memory", func(t *testing.T) {
		most := solver.MaxTableBytes()
		if most == 0 || most >= 1<<40 {
			t.Skip("the memory of this machine is unknown or above the 1 TiB cap")
		}
		t.Setenv("C4BOOK_SOLVER_TT_SIZE", strconv.FormatInt(most+1<<20, 10))
		_, err := Load(Source{Dir: t.TempDir(), Flags: testFlags(t)})
		wantError(t, err, "solver.tt-size", "more than the memory of this machine", "C4BOOK_SOLVER_TT_SIZE")
	})
	t.Run("missing --config file", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope.yaml")
		_, err := Load(Source{File: missing})
		wantError(t, err, "config file "+missing, "no such file")
	})
	t.Run("missing default file is fine", func(t *testing.T) {
		mustLoad(t, Source{Dir: t.TempDir()})
	})
	t.Run("flag bound to no key", func(t *testing.T) {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		fs.Int("depth", 1, "")
		_, err := Load(Source{Dir: t.TempDir(), Flags: map[string]*pflag.Flag{"gen.depth": fs.Lookup("depth")}})
		wantError(t, err, `flag --depth is bound to "gen.depth"`)
	})
}

func TestLoad_crossCheckFromEnv(t *testing.T) {
	t.Setenv("C4BOOK_QUEUE_CROSS_CHECK", "0.05")
	cfg, err := Load(Source{Dir: t.TempDir(), Flags: testFlags(t)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Queue.CrossCheck != 0.05 {
		t.Errorf("queue.cross-check = %v, want 0.05", cfg.Queue.CrossCheck)
	}
}

// TestLoad_pathGiven: Load says whether book.path was given, by a flag,
// the environment or the config file, or is its default.
func TestLoad_pathGiven(t *testing.T) {
	dir := t.TempDir()
	if cfg := mustLoad(t, Source{Dir: dir}); cfg.Book.PathGiven {
		t.Error("book.path given with no source")
	}
	t.Setenv("C4BOOK_BOOK_PATH", "/tmp/b")
	if cfg := mustLoad(t, Source{Dir: dir}); !cfg.Book.PathGiven || cfg.Book.Path != "/tmp/b" {
		t.Errorf("book.path %q from the environment: given %v", cfg.Book.Path, cfg.Book.PathGiven)
	}
}
