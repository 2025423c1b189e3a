package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
	"github.com/c4book/c4book/worker"
)

// Error is a bad value of one key.
type Error struct {
	Key    string // the key: "board.width"
	Msg    string // the bad value, what is wrong and what is allowed
	Source string // where the value came from ("flag --width", ...), or "" if unknown
}

// Error returns "key: msg", followed by the source when it is known.
func (e *Error) Error() string {
	if e.Source == "" {
		return e.Key + ": " + e.Msg
	}
	return fmt.Sprintf("%s: %s (set by %s)", e.Key, e.Msg, e.Source)
}

// Limits of values that no board or machine makes sensible.
const (
	maxTTSize  = 1 << 40 // 1 TiB
	maxThreads = 256
	// minSnapshotInterval is the shortest book.snapshot-interval: a
	// snapshot copies the book's write-ahead log.
	minSnapshotInterval = time.Second
	// minBookMemory is the least book.cache-size and book.memtable-size.
	minBookMemory = 1 << 20
	minAckWait    = time.Second
)

// natsSchemes are the URL schemes NATS clients connect with.
var natsSchemes = []string{"nats", "tls", "ws", "wss"}

// Validate checks every key and returns nil or one *Error per bad value,
// joined with errors.Join. Each error names the key, the bad value and
// the values allowed.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &Error{Key: key, Msg: fmt.Sprintf(format, args...)})
	}

	w, h := c.Board.Width, c.Board.Height
	boardOK := false
	switch {
	case w < 1 || w > solver.MaxWidth:
		bad("board.width", "%d is out of range: width must be 1..%d and width*(height+1) <= 64", w, solver.MaxWidth)
		if h < 1 {
			bad("board.height", "%d is out of range: height must be at least 1 and width*(height+1) <= 64", h)
		}
	case h < 1 || h > 64/w-1:
		bad("board.height", "%d is out of range: with width %d, height must be 1..%d (width*(height+1) <= 64)", h, w, 64/w-1)
	default:
		boardOK = true
	}

	checkTTSize(bad, "solver.tt-size", c.Solver.TTSize)
	checkTTSize(bad, "worker.tt-size", c.Worker.TTSize)

	if n := c.Solver.Threads; n < 1 || n > maxThreads {
		bad("solver.threads", "%d is out of range: must be 1..%d", n, maxThreads)
	}

	if c.Book.Path == "" {
		bad("book.path", "must not be empty: give the directory of the book")
	}
	for _, k := range []struct {
		key  string
		size Size
	}{{"book.cache-size", c.Book.CacheSize}, {"book.memtable-size", c.Book.MemTableSize}} {
		switch most := solver.MaxTableBytes(); {
		case k.size < minBookMemory:
			bad(k.key, "%v is too small: must be at least %v", k.size, Size(minBookMemory))
		case most > 0 && int64(k.size) > most:
			bad(k.key, "%v is more than the memory of this machine (%.1f GiB)", k.size, float64(most)/(1<<30))
		}
	}

	if c.NATS.URL != "" {
		if err := checkNATSURLs(c.NATS.URL); err != nil {
			bad("nats.url", "%v", err)
		}
	}
	if l := c.NATS.Listen; l != "" && !isHostPort(l) {
		bad("nats.listen", "%q is not HOST:PORT (such as 0.0.0.0:4222 or :4222; port 0..65535)", l)
	}
	if l := c.Metrics.Listen; l != "" && !isHostPort(l) {
		bad("metrics.listen", "%q is not HOST:PORT (such as 0.0.0.0:9090 or :9090; port 0..65535)", l)
	}
	if m := c.NATS.Monitor; m != "" && !isHostPort(m) {
		bad("nats.monitor", "%q is not HOST:PORT (such as 127.0.0.1:8222; port 0..65535)", m)
	}
	if c.NATS.Password != "" && c.NATS.User == "" {
		bad("nats.password", "is set but nats.user is empty: a password needs a user")
	}
	if c.NATS.NKey != "" && c.NATS.Creds != "" {
		bad("nats.nkey", "is set together with nats.creds: a worker authenticates with its key file or a credentials file, not both")
	}
	if c.NATS.Token != "" && c.NATS.User != "" {
		bad("nats.token", "is set together with nats.user: authenticate with a token or a user, not both")
	}
	if (c.NATS.TLS.Cert == "") != (c.NATS.TLS.Key == "") {
		bad("nats.tls.cert", "must be set together with nats.tls.key (cert %q, key %q)", c.NATS.TLS.Cert, c.NATS.TLS.Key)
	}

	if n := c.Queue.Replicas; n < 1 || n > queue.MaxReplicas {
		bad("queue.replicas", "%d is out of range: must be 1..%d", n, queue.MaxReplicas)
	}
	if d := c.Queue.AckWait; d < minAckWait {
		bad("queue.ack-wait", "%v is too short: must be at least %v", d, minAckWait)
	}
	if n := c.Queue.MaxDeliver; n < 1 {
		bad("queue.max-deliver", "%d is out of range: must be at least 1", n)
	}
	if n := c.Queue.TaskSize; n < 1 || n > queue.MaxKeys {
		bad("queue.task-size", "%d is out of range: must be 1..%d, the most positions a task message holds", n, queue.MaxKeys)
	}
	if f := c.Queue.CrossCheck; f < 0 || f > 1 || f != f {
		bad("queue.cross-check", "%v is out of range: must be a fraction 0..1 (0.05: one task in twenty)", f)
	}
	if n := c.Queue.QuarantineAfter; n < 1 {
		bad("queue.quarantine-after", "%d is out of range: must be at least 1", n)
	}
	if d := c.Book.SnapshotInterval; d < 0 || (d > 0 && d < minSnapshotInterval) {
		bad("book.snapshot-interval", "%v is out of range: must be 0 (no snapshots) or at least %v", d, minSnapshotInterval)
	}
	if l := c.Serve.Listen; !isHostPort(l) {
		bad("serve.listen", "%q is not HOST:PORT (such as 127.0.0.1:8080 or :8080; port 0..65535)", l)
	}
	if d := c.Serve.SolveTimeout; d < 0 {
		bad("serve.solve-timeout", "%v is negative: must be 0 (never solve beyond the book) or more", d)
	}
	if n := c.Serve.CacheEntries; n < 0 {
		bad("serve.cache-entries", "%d is negative: must be 0 (no cache) or more", n)
	}
	if n := c.Serve.Solvers; n < 0 {
		bad("serve.solvers", "%d is out of range: must be 0 (one per CPU) or more", n)
	}
	if n := c.Worker.Concurrency; n < 0 {
		bad("worker.concurrency", "%d is out of range: must be 0 (one per CPU) or more", n)
	}
	if s := c.Worker.MaxCPU; s != "" {
		if _, ok := maxCPUThreads(s, 1); !ok {
			bad("worker.max-cpu", "%q is neither a number of threads (1 or more) nor a share of the CPUs (1%% to 100%%)", s)
		}
	}
	if s := c.Worker.Hours; s != "" {
		if _, err := worker.ParseHours(s); err != nil {
			bad("worker.hours", "%v", err)
		}
	}
	if p := c.Worker.PauseWhenBusy; p < 0 || p > 100 {
		bad("worker.pause-when-busy", "%d is out of range: a percentage, 1 to 100, or 0 (never pause)", p)
	}
	if d := c.Worker.PauseHold; d < 0 {
		bad("worker.pause-hold", "%v is negative", d)
	}

	if f := c.Log.Format; !slices.Contains(LogFormats, f) {
		bad("log.format", "%q is not a log format: must be %s", f, strings.Join(LogFormats, " or "))
	}
	if l := c.Log.Level; !slices.Contains(LogLevels, l) {
		bad("log.level", "%q is not a log level: must be one of %s", l, strings.Join(LogLevels, ", "))
	}

	if boardOK {
		board := solver.MustBoard(w, h)
		if d := c.Generate.Depth; d < 0 || d > board.Cells() {
			bad("generate.depth", "%d is out of range: must be 0..%d on a %v board", d, board.Cells(), board)
		}
		if r := c.Generate.Root; r != "" {
			if _, err := coordinator.ParseRoot(board, r); err != nil {
				bad("generate.root", "%v", err)
			}
		}
	}
	return errors.Join(errs...)
}

// ValidateServe checks, beyond Validate, what only c4book serve needs:
// that the tables of its solvers fit in memory together. Serve runs
// serve.solvers solvers (0: one per CPU), each with a table of
// solver.tt-size made at its first use, so a server whose tables do not
// fit starts, answers from its book, and is killed only once enough
// positions beyond the book are asked for at once. Validate leaves it
// out: the other commands make one table, whatever serve.solvers says.
// A server that does not solve (serve.solve-timeout 0) makes none.
func (c *Config) ValidateServe() error {
	if c.Serve.SolveTimeout == 0 {
		return nil
	}
	return checkServeMemory(c.Serve.Solvers, runtime.NumCPU(), c.Solver.TTSize, solver.MaxTableBytes())
}

// checkServeMemory checks that solvers tables of ttSize (solvers 0: one
// per CPU of cpus) fit in most bytes, unless most is 0 (unknown).
func checkServeMemory(solvers, cpus int, ttSize Size, most int64) error {
	n, what := solvers, fmt.Sprintf("%d solvers", solvers)
	if n == 0 {
		n, what = cpus, fmt.Sprintf("0 (one per CPU: %d solvers)", cpus)
	}
	if most <= 0 || ttSize == 0 || int64(n) <= most/int64(ttSize) {
		return nil
	}
	need := float64(n) * float64(ttSize) / (1 << 30)
	fits := Size(most / int64(n) &^ (1<<20 - 1)) // in whole MiB
	return &Error{Key: "serve.solvers", Msg: fmt.Sprintf("%s with a table of solver.tt-size %v each need %.1f GiB, more than the memory of this machine (%.1f GiB): the server would be killed once that many positions beyond the book are solved at once; lower serve.solvers, or solver.tt-size to at most %v",
		what, ttSize, need, float64(most)/(1<<30), fits)}
}

// isHostPort reports whether s is HOST:PORT, a listening address: the
// host may be empty, the port is 0..65535.
func isHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	return err == nil && perr == nil && n >= 0 && n <= 65535 && !strings.ContainsAny(host, "/ ")
}

// checkNATSURLs checks a comma-separated list of NATS server URLs.
func checkNATSURLs(list string) error {
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if !strings.Contains(s, "://") {
			return fmt.Errorf("%q is not a URL: write nats://HOST:PORT (or tls://, ws://, wss://), or leave it empty for the embedded server", s)
		}
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Errorf("%q is not a URL: %v", s, err)
		}
		ok := false
		for _, scheme := range natsSchemes {
			ok = ok || u.Scheme == scheme
		}
		if !ok {
			return fmt.Errorf("%q has scheme %q: must be one of %s", s, u.Scheme, strings.Join(natsSchemes, ", "))
		}
		if u.Host == "" {
			return fmt.Errorf("%q has no host: write %s://HOST:PORT", s, u.Scheme)
		}
	}
	return nil
}

// checkTTSize reports, with bad, a table size z of key that a table
// cannot have.
func checkTTSize(bad func(key, format string, args ...any), key string, z Size) {
	switch {
	case z < solver.MinTableBytes:
		bad(key, "%v is too small: must be at least %v", z, Size(solver.MinTableBytes))
	case z > maxTTSize:
		bad(key, "%v is too large: must be at most %v", z, Size(maxTTSize))
	case solver.MaxTableBytes() > 0 && int64(z) > solver.MaxTableBytes():
		bad(key, "%v is more than the memory of this machine (%.1f GiB): the process would be killed", z, float64(solver.MaxTableBytes())/(1<<30))
	}
}
