// Package config holds c4book's configuration: one typed Config, the
// default of every key, and its loading from a config file, C4BOOK_*
// environment variables and command-line flags (see Load).
//
// Keys are dotted, lower-case names ("solver.tt-size"); the environment
// variable of a key is C4BOOK_ followed by the key in upper case with dots
// and dashes turned into underscores (C4BOOK_SOLVER_TT_SIZE). Every key, its
// default and its meaning are listed by Keys.
package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/solver"
)

// Config is the whole configuration of c4book. The zero value is not
// valid; start from Default or Load.
type Config struct {
	Board    Board
	Solver   Solver
	Book     Book
	NATS     NATS
	Queue    Queue
	Worker   Worker
	Generate Generate
	Log      Log
	Metrics  Metrics
	Serve    Serve
}

// Board is the size of the board every position is played on.
type Board struct {
	Width  int // board.width: columns, 1..9
	Height int // board.height: rows; Width*(Height+1) must be at most 64
}

// Solver configures the search.
type Solver struct {
	TTSize  Size // solver.tt-size: memory of a transposition table (a worker's threads share one)
	Threads int  // solver.threads: threads that search one position together in solve and bench
}

// Book says where the opening book lives.
type Book struct {
	Path         string // book.path: directory of the Pebble book
	MinFree      Size   // book.min-free: free disk space under which a coordinator stops writing the book
	CacheSize    Size   // book.cache-size: block cache of the book's database
	MemTableSize Size   // book.memtable-size: write buffer of the book's database, of which it keeps up to three
	// book.snapshot-interval: how often a process writing the book leaves a consistent snapshot for readers; 0: never
	SnapshotInterval time.Duration

	// PathGiven is not a key (its tag says so): Load sets it when
	// book.path came from a flag, the environment or the config file
	// rather than its default. c4book serve and estimate tell by it
	// whether a book was named.
	PathGiven bool `key:"-"`
}

// NATS says which NATS server carries the tasks and how to reach it.
type NATS struct {
	URL      string // nats.url: server URL(s); empty runs an embedded server
	Listen   string // nats.listen: HOST:PORT on which the embedded server accepts clients (with authentication); empty: in-process only
	StoreDir string // nats.store-dir: JetStream directory of the embedded server; empty: "nats" inside the book directory
	Monitor  string // nats.monitor: HOST:PORT of the embedded server's HTTP monitoring endpoint; empty: none
	Creds    string // nats.creds: credentials file
	NKey     string // nats.nkey: a worker's or an observer's key file (c4book worker add [--observer])
	Token    string // nats.token: authentication token
	User     string // nats.user: user name
	Password string // nats.password: password of nats.user
	TLS      TLS
}

// HasAuth reports whether n authenticates clients of a listening embedded
// server by itself: a token, a user and password, or client certificates
// (registered worker keys are the book's, not the configuration's).
func (n NATS) HasAuth() bool {
	return n.Token != "" || n.User != "" && n.Password != "" || n.TLS.CA != "" && n.TLS.Cert != ""
}

// TLS holds the files of TLS with NATS. A client (nats.url) presents
// Cert to the server and trusts CA for the server's certificate; the
// embedded server listening on nats.listen serves Cert and, if CA is set,
// requires client certificates signed by CA.
type TLS struct {
	Cert string // nats.tls.cert: certificate (PEM): the client's, or the listening embedded server's
	Key  string // nats.tls.key: key of nats.tls.cert (PEM)
	CA   string // nats.tls.ca: certificate authority (PEM): of the server's certificate, or, listening, of the clients'
}

// Queue configures the task queue.
type Queue struct {
	AckWait         time.Duration // queue.ack-wait: time a worker holds a task before it is redelivered, unless kept alive
	MaxDeliver      int           // queue.max-deliver: deliveries of a task before it is reported as failed
	TaskSize        int           // queue.task-size: positions in one task
	CrossCheck      float64       // queue.cross-check: fraction of tasks solved twice by different workers
	QuarantineAfter int           // queue.quarantine-after: rejected results after which a worker's results are ignored
	Replicas        int           // queue.replicas: copies of the streams in a NATS cluster
}

// Worker configures the workers.
type Worker struct {
	Concurrency int  // worker.concurrency: solvers run in parallel; 0 means one per CPU
	TTSize      Size // worker.tt-size: memory of the worker's transposition table, shared by its threads

	// The manners of a worker on a machine that belongs to someone.
	MaxCPU        string        // worker.max-cpu: at most N threads ("2") or a share of the CPUs ("50%"); empty: no limit
	Hours         string        // worker.hours: the daily window of local time it works in ("22:00-07:00"); empty: always
	PauseWhenBusy int           // worker.pause-when-busy: pause while other programs use more than this % of the CPUs; 0: never
	PauseHold     time.Duration // worker.pause-hold: how long the machine must stay busy (or quiet) before a pause (or a resume)
}

// WorkerThreads returns the solving threads of a worker of c on a machine
// of cpus CPUs: worker.concurrency (0: one per CPU), at most
// worker.max-cpu. c must be valid.
func (c *Config) WorkerThreads(cpus int) int {
	n := c.Worker.Concurrency
	if n == 0 {
		n = cpus
	}
	if limit, ok := maxCPUThreads(c.Worker.MaxCPU, cpus); ok {
		n = min(n, limit)
	}
	return n
}

// maxCPUThreads returns the threads worker.max-cpu allows on a machine of
// cpus CPUs, and false for no limit or a value that is not one.
func maxCPUThreads(s string, cpus int) (int, bool) {
	if s == "" {
		return 0, false
	}
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		p, err := strconv.Atoi(pct)
		if err != nil || p < 1 || p > 100 {
			return 0, false
		}
		return max(1, cpus*p/100), true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// DefaultWorkerTTSize is the largest default of worker.tt-size: 256 MiB.
// A worker keeps its table warm through a whole job, and a deep job's
// later leaves meet the results of leaves solved long before: on the
// depth-12 job under 4415 a 256 MiB table took a fifth fewer nodes than
// 64 MiB and 6% less CPU, at no cost on a short job; 1 GiB saves 9% there
// but costs short jobs time, and memory beyond its size (the garbage
// collector lets the heap grow in proportion to it; docs/benchmarks.md,
// the worker's table).
const DefaultWorkerTTSize = 256 << 20

// DefaultTaskSize is the default queue.task-size: 256 positions a task.
// A task costs a worker a round trip to take it; over a link of 200 ms,
// tasks of 64 (most solved in tens of milliseconds at depth 12) left the
// workers waiting for tasks a fifth of a depth-12 job, tasks of 256 a
// tenth (docs/benchmarks.md, "Over slow links"). Larger tasks also keep
// more of a worker's table warm across its tasks, cost the coordinator
// less, and made the quick start a fifth faster.
const DefaultTaskSize = 256

// defaultWorkerTTSize is worker.tt-size's default: DefaultWorkerTTSize,
// or a quarter of the machine's memory if that is less, but not below
// solver.tt-size's default.
func defaultWorkerTTSize() Size {
	z := int64(DefaultWorkerTTSize)
	if m := solver.MaxTableBytes(); m > 0 {
		z = min(z, m/4)
	}
	return Size(max(z, solver.DefaultTableBytes))
}

// Generate describes the book to generate.
type Generate struct {
	Depth int    // generate.depth: number of stones of the deepest positions
	Root  string // generate.root: moves of the position the book starts from; empty: the empty board
}

// Log says how commands log, on standard error.
type Log struct {
	Format string // log.format: one of LogFormats
	Level  string // log.level: one of LogLevels, the least level of the messages logged
}

// Metrics says where the long-running commands (generate, coordinator,
// worker, serve) serve their Prometheus metrics and their health.
type Metrics struct {
	Listen string // metrics.listen: HOST:PORT of the HTTP listener serving /metrics and /healthz; empty: none
}

// Serve configures c4book serve, the read side of a book over HTTP.
type Serve struct {
	Listen       string        // serve.listen: HOST:PORT of the HTTP server
	SolveTimeout time.Duration // serve.solve-timeout: time the solver may take for a position beyond the book; 0: never solve
	CacheEntries int           // serve.cache-entries: positions beyond the book whose answers are kept
	Solvers      int           // serve.solvers: positions beyond the book solved at once; 0 means one per CPU
}

// LogFormats are the values of log.format: text (key=value pairs) or json
// (one JSON object a line).
var LogFormats = []string{"text", "json"}

// LogLevels are the values of log.level, from the most to the least
// verbose; each is the name of a log/slog level.
var LogLevels = []string{"debug", "info", "warn", "error"}

// Default returns the configuration used when nothing else is set.
func Default() Config {
	return Config{
		Board:  Board{Width: 7, Height: 6},
		Solver: Solver{TTSize: solver.DefaultTableBytes, Threads: 1},
		Book:   Book{Path: "c4book.db", MinFree: coordinator.DefaultMinFreeBytes, CacheSize: book.DefaultCacheBytes, MemTableSize: book.DefaultMemTableBytes, SnapshotInterval: time.Minute},
		Queue:  Queue{AckWait: 30 * time.Second, MaxDeliver: 5, TaskSize: DefaultTaskSize, CrossCheck: coordinator.DefaultCrossCheck, QuarantineAfter: coordinator.DefaultQuarantineAfter, Replicas: 1},
		Generate: Generate{
			Depth: 8,
		},
		Worker: Worker{TTSize: defaultWorkerTTSize(), PauseHold: 30 * time.Second},
		Log:    Log{Format: "text", Level: "info"},
		Serve:  Serve{Listen: "127.0.0.1:8080", SolveTimeout: 2 * time.Second, CacheEntries: 100_000},
	}
}

// key is one configuration key: its name, its doc line and the field of a
// Config it sets (a *int, *float64, *string, *Size or *time.Duration).
type key struct {
	name  string
	doc   string
	field func(c *Config) any
}

// keys lists every configuration key, in the order of the documentation.
var keys = []key{
	{"board.width", "columns of the board, 1..9", func(c *Config) any { return &c.Board.Width }},
	{"board.height", "rows of the board; width*(height+1) must be at most 64", func(c *Config) any { return &c.Board.Height }},
	{"solver.tt-size", "memory of a transposition table: of each solve, bench, verify, estimate run, referee and position served beyond the book (bytes, or with a suffix KiB, MiB, GiB, KB, MB, GB); a worker's: worker.tt-size", func(c *Config) any { return &c.Solver.TTSize }},
	{"solver.threads", "threads that search one position together, sharing its table, in solve and bench; 1..256 (a worker's threads: worker.concurrency)", func(c *Config) any { return &c.Solver.Threads }},
	{"book.path", "the opening book: a Pebble book's directory, or a packed book's file for the commands that read (serve and solve read the book shipped for the board when it is not given)", func(c *Config) any { return &c.Book.Path }},
	{"book.cache-size", "memory for the book's cache of blocks read (Pebble's block cache); at least 1MiB", func(c *Config) any { return &c.Book.CacheSize }},
	{"book.memtable-size", "memory for the book's write buffer (Pebble's memtable, up to three at once), in commands that write it; at least 1MiB", func(c *Config) any { return &c.Book.MemTableSize }},
	{"book.snapshot-interval", "how often a process writing the book (generate, coordinator) leaves a consistent read-only snapshot in it, which serve and the book commands read while the book is being written; 0: never", func(c *Config) any { return &c.Book.SnapshotInterval }},
	{"book.min-free", "free space on the book's disk under which a coordinator stops writing, and taking results, until space is freed; 0 turns the check off", func(c *Config) any { return &c.Book.MinFree }},
	{"nats.url", "NATS server URL(s), comma-separated; empty runs an embedded server", func(c *Config) any { return &c.NATS.URL }},
	{"nats.listen", "HOST:PORT on which the embedded server accepts workers, which needs nats.token, nats.user and nats.password, or nats.tls.ca; empty: in-process only", func(c *Config) any { return &c.NATS.Listen }},
	{"nats.store-dir", "JetStream directory of the embedded server; empty: the directory nats inside the book directory", func(c *Config) any { return &c.NATS.StoreDir }},
	{"nats.monitor", "HOST:PORT of the embedded server's HTTP monitoring endpoint (nats-server's /varz, /jsz, /healthz), without authentication: keep it on a private address; empty: none", func(c *Config) any { return &c.NATS.Monitor }},
	{"nats.creds", "NATS credentials file", func(c *Config) any { return &c.NATS.Creds }},
	{"nats.nkey", "a worker's key file, made by c4book worker add (mode 0600, its first lines name the worker): the worker proves who it is with it and publishes under that name; or an observer's, made by c4book worker add --observer, with which c4book status reads the cluster's status", func(c *Config) any { return &c.NATS.NKey }},
	{"nats.token", "NATS authentication token", func(c *Config) any { return &c.NATS.Token }},
	{"nats.user", "NATS user name", func(c *Config) any { return &c.NATS.User }},
	{"nats.password", "password of nats.user", func(c *Config) any { return &c.NATS.Password }},
	{"nats.tls.cert", "TLS certificate file (PEM): the client's with nats.url, the embedded server's with nats.listen", func(c *Config) any { return &c.NATS.TLS.Cert }},
	{"nats.tls.key", "key file of nats.tls.cert (PEM)", func(c *Config) any { return &c.NATS.TLS.Key }},
	{"nats.tls.ca", "TLS certificate authority file (PEM): of the server's certificate with nats.url; with nats.listen, of the client certificates the server requires", func(c *Config) any { return &c.NATS.TLS.CA }},
	{"queue.ack-wait", "time a worker holds a task before it is redelivered, unless it reports progress; at least 1s", func(c *Config) any { return &c.Queue.AckWait }},
	{"queue.max-deliver", "deliveries of a task before it is reported as failed; at least 1", func(c *Config) any { return &c.Queue.MaxDeliver }},
	{"queue.task-size", "positions in one task, 1..4096", func(c *Config) any { return &c.Queue.TaskSize }},
	{"queue.cross-check", "fraction of tasks, 0..1, solved twice by two different workers (a worker with a key is its key's name) and compared; a disagreement is decided by the coordinator's own solver, and the worker that was wrong is quarantined and its results in the job solved again; a job whose only worker is its own skips it; 0: off", func(c *Config) any { return &c.Queue.CrossCheck }},
	{"queue.quarantine-after", "rejected results after which a worker's results are ignored for the job (one failed cross-check is enough); at least 1", func(c *Config) any { return &c.Queue.QuarantineAfter }},
	{"queue.replicas", "copies of the task and result streams and the status bucket kept by a NATS cluster (JetStream replicas), 1..5; more than 1 needs a cluster of at least that many servers", func(c *Config) any { return &c.Queue.Replicas }},
	{"worker.concurrency", "solvers a worker runs in parallel; 0 means one per CPU", func(c *Config) any { return &c.Worker.Concurrency }},
	{"worker.max-cpu", "the most a worker takes of its machine: N solving threads (\"2\") or a share of the CPUs (\"50%\"), with worker.concurrency the smaller; empty: no limit", func(c *Config) any { return &c.Worker.MaxCPU }},
	{"worker.hours", "the daily window of local time a worker works in, HH:MM-HH:MM (\"22:00-07:00\": the night); outside it, it pauses; empty: always", func(c *Config) any { return &c.Worker.Hours }},
	{"worker.pause-when-busy", "pause a worker while the machine's other programs keep more than this percentage of its CPUs busy (Linux); 0: never", func(c *Config) any { return &c.Worker.PauseWhenBusy }},
	{"worker.pause-hold", "how long the machine must stay busy before a worker pauses, or quiet before it resumes (worker.pause-when-busy)", func(c *Config) any { return &c.Worker.PauseHold }},
	{"worker.tt-size", "memory of a worker's transposition table, shared by its threads and kept warm through a job (as solver.tt-size); the default is 256MiB (on an Intel host 1GiB saved CPU on jobs of depth 10 and more; on an AMD virtual machine 64MiB solved depth-16 leaves twice as fast as 2GiB: see benchmarks.md, the worker's table), or a quarter of the machine's memory if less", func(c *Config) any { return &c.Worker.TTSize }},
	{"generate.depth", "stones of the deepest positions of the book, 0..width*height", func(c *Config) any { return &c.Generate.Depth }},
	{"generate.root", "moves of the position the book starts from (\"4453\"); empty: the empty board", func(c *Config) any { return &c.Generate.Root }},
	{"log.format", "format of the log lines on standard error: text (key=value) or json (one object a line)", func(c *Config) any { return &c.Log.Format }},
	{"log.level", "least level of the messages logged: debug, info, warn or error", func(c *Config) any { return &c.Log.Level }},
	{"metrics.listen", "HOST:PORT on which generate, coordinator, worker and serve serve Prometheus metrics (/metrics), their health (/healthz) and Go's profiles (/debug/pprof/); empty: no listener", func(c *Config) any { return &c.Metrics.Listen }},
	{"serve.listen", "HOST:PORT on which serve answers HTTP (the API under /v1/ and the web page)", func(c *Config) any { return &c.Serve.Listen }},
	{"serve.solve-timeout", "time serve's solver may take for a position deeper than the book before answering 503; 0: positions beyond the book are not solved (404)", func(c *Config) any { return &c.Serve.SolveTimeout }},
	{"serve.cache-entries", "answers for positions beyond the book that serve keeps (least recently used go first); 0: none", func(c *Config) any { return &c.Serve.CacheEntries }},
	{"serve.solvers", "positions beyond the book that serve solves at once, each with a table of solver.tt-size (serve refuses to start when the tables together exceed the memory of the machine); 0 means one per CPU", func(c *Config) any { return &c.Serve.Solvers }},
}

// KeyInfo documents one configuration key.
type KeyInfo struct {
	Name    string // dotted key, as in a config file: "solver.tt-size"
	Env     string // environment variable: "C4BOOK_SOLVER_TT_SIZE"
	Default string // default value as it would be written in a config file
	Doc     string // one line saying what the key sets
}

// Keys returns every configuration key with its environment variable,
// default and meaning, in the order of the documentation.
func Keys() []KeyInfo {
	def := Default()
	infos := make([]KeyInfo, len(keys))
	for i, k := range keys {
		infos[i] = KeyInfo{Name: k.name, Env: EnvVar(k.name), Default: formatValue(k.field(&def)), Doc: k.doc}
	}
	return infos
}

// EnvVar returns the environment variable that sets key: C4BOOK_ and the
// key in upper case with dots and dashes replaced by underscores.
func EnvVar(key string) string {
	return envPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// formatValue writes the value a field pointer points to as it would be
// written in a config file.
func formatValue(field any) string {
	switch f := field.(type) {
	case *int:
		return strconv.Itoa(*f)
	case *string:
		return strconv.Quote(*f)
	case *Size:
		return f.String()
	case *time.Duration:
		return f.String()
	case *float64:
		return strconv.FormatFloat(*f, 'g', -1, 64)
	}
	panic(fmt.Sprintf("config: unsupported field type %T", field))
}
