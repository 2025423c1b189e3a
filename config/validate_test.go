package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfig_Validate(t *testing.T) {
	t.Run("defaults are valid", func(t *testing.T) {
		cfg := Default()
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Default().Validate() = %v", err)
		}
	})
	good := []struct {
		name string
		set  func(c *Config)
	}{
		{"largest boards", func(c *Config) { c.Board = Board{Width: 8, Height: 7} }},
		{"9x6", func(c *Config) { c.Board = Board{Width: 9, Height: 6} }},
		{"1x63", func(c *Config) { c.Board = Board{Width: 1, Height: 63} }},
		{"nats url list", func(c *Config) { c.NATS.URL = "nats://a:4222, tls://b:4222" }},
		{"listen", func(c *Config) { c.NATS.Listen = ":4222" }},
		{"user and password", func(c *Config) { c.NATS.User, c.NATS.Password = "u", "p" }},
		{"worker key", func(c *Config) { c.NATS.NKey = "lab-3.nkey" }},
		{"tls pair", func(c *Config) { c.NATS.TLS.Cert, c.NATS.TLS.Key = "c.pem", "k.pem" }},
		{"root", func(c *Config) { c.Generate.Root = "4453" }},
		{"depth 0 and full", func(c *Config) { c.Generate.Depth = 42 }},
		{"json debug logs", func(c *Config) { c.Log = Log{Format: "json", Level: "debug"} }},
		{"error logs", func(c *Config) { c.Log.Level = "error" }},
		{"metrics on a port of every address", func(c *Config) { c.Metrics.Listen = ":9090" }},
		{"metrics on localhost, any free port", func(c *Config) { c.Metrics.Listen = "127.0.0.1:0" }},
		{"metrics on IPv6", func(c *Config) { c.Metrics.Listen = "[::1]:9090" }},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			cfg := Default()
			c.set(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
		})
	}
	bad := []struct {
		name string
		set  func(c *Config)
		key  string
		want string // in the message: the bad value and what is allowed
	}{
		{"width too large", func(c *Config) { c.Board.Width = 12 }, "board.width", "12 is out of range: width must be 1..9 and width*(height+1) <= 64"},
		{"width zero", func(c *Config) { c.Board.Width = 0 }, "board.width", "0 is out of range"},
		{"height zero", func(c *Config) { c.Board.Height = 0 }, "board.height", "0 is out of range: with width 7, height must be 1..8"},
		{"board too big", func(c *Config) { c.Board = Board{Width: 9, Height: 7} }, "board.height", "7 is out of range: with width 9, height must be 1..6"},
		{"huge height", func(c *Config) { c.Board.Height = 1 << 62 }, "board.height", "is out of range"},
		{"tt-size too small", func(c *Config) { c.Solver.TTSize = 512 }, "solver.tt-size", "512 is too small: must be at least 1KiB"},
		{"tt-size too large", func(c *Config) { c.Solver.TTSize = 2 << 40 }, "solver.tt-size", "2048GiB is too large: must be at most 1024GiB"},
		{"worker tt-size too small", func(c *Config) { c.Worker.TTSize = 512 }, "worker.tt-size", "512 is too small: must be at least 1KiB"},
		{"worker tt-size too large", func(c *Config) { c.Worker.TTSize = 2 << 40 }, "worker.tt-size", "2048GiB is too large: must be at most 1024GiB"},
		{"book cache too small", func(c *Config) { c.Book.CacheSize = 1000 }, "book.cache-size", "1KB is too small: must be at least 1MiB"},
		{"book memtable too small", func(c *Config) { c.Book.MemTableSize = 0 }, "book.memtable-size", "0 is too small: must be at least 1MiB"},
		{"empty book path", func(c *Config) { c.Book.Path = "" }, "book.path", "must not be empty"},
		{"url without scheme", func(c *Config) { c.NATS.URL = "host:4222" }, "nats.url", `"host:4222" is not a URL: write nats://HOST:PORT`},
		{"url of http", func(c *Config) { c.NATS.URL = "http://host:4222" }, "nats.url", `scheme "http": must be one of nats, tls, ws, wss`},
		{"url without host", func(c *Config) { c.NATS.URL = "nats://" }, "nats.url", "has no host"},
		{"bad url in list", func(c *Config) { c.NATS.URL = "nats://a:1,b" }, "nats.url", `"b" is not a URL`},
		{"listen without port", func(c *Config) { c.NATS.Listen = "4222" }, "nats.listen", `"4222" is not HOST:PORT`},
		{"listen port too large", func(c *Config) { c.NATS.Listen = ":70000" }, "nats.listen", `":70000" is not HOST:PORT`},
		{"replicas 0", func(c *Config) { c.Queue.Replicas = 0 }, "queue.replicas", "0 is out of range: must be 1..5"},
		{"monitor without port", func(c *Config) { c.NATS.Monitor = "8222" }, "nats.monitor", `"8222" is not HOST:PORT`},
		{"metrics without port", func(c *Config) { c.Metrics.Listen = "9090" }, "metrics.listen", `"9090" is not HOST:PORT (such as 0.0.0.0:9090 or :9090; port 0..65535)`},
		{"metrics port too large", func(c *Config) { c.Metrics.Listen = "127.0.0.1:70000" }, "metrics.listen", `"127.0.0.1:70000" is not HOST:PORT`},
		{"metrics with a URL", func(c *Config) { c.Metrics.Listen = "http://host:9090" }, "metrics.listen", `"http://host:9090" is not HOST:PORT`},
		{"password without user", func(c *Config) { c.NATS.Password = "p" }, "nats.password", "a password needs a user"},
		{"token and user", func(c *Config) { c.NATS.Token, c.NATS.User = "t", "u" }, "nats.token", "not both"},
		{"key and credentials file", func(c *Config) { c.NATS.NKey, c.NATS.Creds = "k.nkey", "c.creds" }, "nats.nkey", "not both"},
		{"cert without key", func(c *Config) { c.NATS.TLS.Cert = "c.pem" }, "nats.tls.cert", `must be set together with nats.tls.key (cert "c.pem", key "")`},
		{"ack-wait too short", func(c *Config) { c.Queue.AckWait = 500 * time.Millisecond }, "queue.ack-wait", "500ms is too short: must be at least 1s"},
		{"max-deliver zero", func(c *Config) { c.Queue.MaxDeliver = 0 }, "queue.max-deliver", "0 is out of range: must be at least 1"},
		{"task-size zero", func(c *Config) { c.Queue.TaskSize = 0 }, "queue.task-size", "0 is out of range: must be 1..4096"},
		{"task-size above a message", func(c *Config) { c.Queue.TaskSize = 5000 }, "queue.task-size", "5000 is out of range: must be 1..4096, the most positions a task message holds"},
		{"cross-check negative", func(c *Config) { c.Queue.CrossCheck = -0.1 }, "queue.cross-check", "-0.1 is out of range: must be a fraction 0..1"},
		{"quarantine-after zero", func(c *Config) { c.Queue.QuarantineAfter = 0 }, "queue.quarantine-after", "0 is out of range: must be at least 1"},
		{"negative concurrency", func(c *Config) { c.Worker.Concurrency = -2 }, "worker.concurrency", "-2 is out of range"},
		{"depth too deep", func(c *Config) { c.Generate.Depth = 43 }, "generate.depth", "43 is out of range: must be 0..42 on a 7x6 board"},
		{"negative depth", func(c *Config) { c.Generate.Depth = -1 }, "generate.depth", "-1 is out of range"},
		{"bad root", func(c *Config) { c.Generate.Root = "4459" }, "generate.root", `moves "4459": move 4 ('9'): column out of range 1..7`},
		{"log format", func(c *Config) { c.Log.Format = "xml" }, "log.format", `"xml" is not a log format: must be text or json`},
		{"log level", func(c *Config) { c.Log.Level = "verbose" }, "log.level", `"verbose" is not a log level: must be one of debug, info, warn, error`},
		{"log level in capitals", func(c *Config) { c.Log.Level = "INFO" }, "log.level", `"INFO" is not a log level`},
		{"finished root", func(c *Config) { c.Generate.Root = "1212121" }, "generate.root", `"1212121" is a finished game`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			cfg := Default()
			c.set(&cfg)
			err := cfg.Validate()
			wantError(t, err, c.key+": ", c.want)
			var ke *Error
			if !errors.As(err, &ke) || ke.Key != c.key {
				t.Errorf("Validate() = %v, want an *Error for key %s", err, c.key)
			}
		})
	}
}

func TestError_Error(t *testing.T) {
	t.Run("without source", func(t *testing.T) {
		e := &Error{Key: "board.width", Msg: "12 is out of range"}
		if got := e.Error(); got != "board.width: 12 is out of range" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("with source", func(t *testing.T) {
		e := &Error{Key: "board.width", Msg: "12 is out of range", Source: "flag --width"}
		if got := e.Error(); !strings.HasSuffix(got, "(set by flag --width)") {
			t.Errorf("got %q", got)
		}
	})
}

// TestCheckServeMemory: serve's solvers' tables together, not each alone,
// must fit in memory; serve.solvers 0 counts one a CPU.
func TestCheckServeMemory(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		solvers, cpus int
		tt            Size
		most          int64
		want          []string // nil: no error
	}{
		{2, 8, 1 * gib, 8 * gib, nil},
		{8, 2, 1 * gib, 8 * gib, nil},
		{8, 2, 4 * gib, 23 * gib, []string{"serve.solvers: 8 solvers with a table of solver.tt-size 4GiB each need 32.0 GiB", "(23.0 GiB)", "solver.tt-size to at most 2944MiB"}},
		{0, 2, 16 * gib, 23 * gib, []string{"0 (one per CPU: 2 solvers)", "need 32.0 GiB"}},
		{0, 4, 8 * gib, 0, nil}, // memory unknown
		{1 << 40, 1, 1 << 40, 64 * gib, []string{"serve.solvers"}}, // no overflow
	} {
		err := checkServeMemory(c.solvers, c.cpus, c.tt, c.most)
		if c.want == nil {
			if err != nil {
				t.Errorf("%d solvers (%d CPUs) of %v in %d bytes: %v, want none", c.solvers, c.cpus, c.tt, c.most, err)
			}
			continue
		}
		wantError(t, err, c.want...)
	}
	cfg := Default()
	cfg.Serve.SolveTimeout, cfg.Serve.Solvers, cfg.Solver.TTSize = 0, 1<<20, maxTTSize
	if err := cfg.ValidateServe(); err != nil {
		t.Errorf("a server that does not solve: %v, want no error", err)
	}
}
