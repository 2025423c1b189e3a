package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// Options configure a Server. The zero value of a field means its
// default, as in config.Default's serve.* keys, but for SolveTimeout: 0
// there means never solving.
type Options struct {
	// Open opens the book read-only: the book itself, or its newest
	// snapshot while a job writes it (book.Open with ReadOnly).
	Open func() (*book.Book, error)
	// SolveTimeout bounds the solving of one request; 0 answers positions
	// beyond the book with 404 instead of solving them.
	SolveTimeout time.Duration
	// Load reads the whole book into memory (book.Load), for the fastest
	// lookups; otherwise they go to Pebble.
	Load         bool
	CacheEntries int   // answers from the solver kept; 0: none
	Solvers      int   // positions solved at once; 0: one per CPU
	TableBytes   int64 // table of each solver; 0: solver.DefaultTableBytes
	// ReloadEvery is how often a server reading a snapshot looks for a
	// newer one, or for the book itself once its job is done; 0: 10s.
	ReloadEvery time.Duration
	// Jobs, if set, reports the jobs running on the book's NATS server for
	// the progress page; nil shows the job records of the book only.
	Jobs func(ctx context.Context) ([]queue.JobStatus, error)
	Log  *slog.Logger
}

// MaxBatch is the most positions one POST /v1/positions may ask about.
const MaxBatch = 1000

// Server answers questions about positions from an opening book over
// HTTP: the API under /v1/, /healthz and the web page at /. Make one with
// New, serve its Handler, and Close it when done.
type Server struct {
	opts    Options
	board   *solver.Board
	src     atomic.Pointer[source]
	solvers *solverPool
	cache   *answerCache
	metrics *Metrics
	log     *slog.Logger

	reloadMu sync.Mutex // one reload at a time
	stop     chan struct{}
	stopped  sync.WaitGroup
}

// New opens the book with opts.Open and returns a server of it, which
// looks for newer snapshots in the background while it reads one.
func New(opts Options) (*Server, error) {
	if opts.Open == nil {
		return nil, errors.New("serve: no book to open")
	}
	if opts.Solvers <= 0 {
		opts.Solvers = runtime.NumCPU()
	}
	if opts.ReloadEvery <= 0 {
		opts.ReloadEvery = 10 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	bk, err := opts.Open()
	if err != nil {
		return nil, err
	}
	src, err := newSource(bk, opts.Load, time.Now())
	if err != nil {
		bk.Close()
		return nil, err
	}
	s := &Server{opts: opts, board: bk.Board(), cache: newAnswerCache(opts.CacheEntries),
		metrics: newMetrics(), log: opts.Log, stop: make(chan struct{})}
	s.src.Store(src)
	if opts.SolveTimeout > 0 {
		s.solvers = newSolverPool(s.board, opts.Solvers, opts.TableBytes)
	}
	s.stopped.Add(1)
	go s.reloadLoop()
	return s, nil
}

// Board returns the board of the book served.
func (s *Server) Board() *solver.Board { return s.board }

// Metrics returns the server's Prometheus collectors.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Close stops the reloading and closes the book. Requests still running
// keep the book open until they end.
func (s *Server) Close() error {
	close(s.stop)
	s.stopped.Wait()
	if s.solvers != nil {
		s.solvers.close()
	}
	if src := s.src.Swap(nil); src != nil {
		src.release()
	}
	return nil
}

// acquire returns the current source, held for the caller, who must
// release it; nil once the server is closed.
func (s *Server) acquire() *source {
	for {
		src := s.src.Load()
		if src == nil || src.tryAcquire() {
			return src
		}
	}
}

// reloadLoop replaces a snapshot by a newer one, or by the book itself
// once no job writes it, every ReloadEvery.
func (s *Server) reloadLoop() {
	defer s.stopped.Done()
	t := time.NewTicker(s.opts.ReloadEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if err := s.Reload(); err != nil {
			s.log.Warn("looking for a newer state of the book", "error", err)
		}
	}
}

// Reload opens the book again if the server reads a snapshot, and serves
// what it opened if it is newer: a later snapshot, or the book itself.
// Reading the book itself, it does nothing: a book open read-only is not
// written.
func (s *Server) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	cur := s.src.Load()
	if cur == nil || cur.snapshot.IsZero() {
		return nil
	}
	if stale, err := cur.book.SnapshotStale(); err != nil || !stale {
		return err
	}
	bk, err := s.opts.Open()
	if err != nil {
		return err
	}
	t, isSnapshot := bk.SnapshotTime()
	if isSnapshot && !t.After(cur.snapshot) {
		return bk.Close()
	}
	src, err := newSource(bk, s.opts.Load, time.Now())
	if err != nil {
		bk.Close()
		return err
	}
	if !s.src.CompareAndSwap(cur, src) { // closed meanwhile
		src.release()
		return nil
	}
	cur.release()
	s.metrics.reloads.Inc()
	if isSnapshot {
		s.log.Info("serving a newer snapshot of the book", "taken", t.Format(time.RFC3339), "depth", src.depth)
	} else {
		s.log.Info("serving the book itself: no job writes it any more", "depth", src.depth)
	}
	return nil
}

// Position answers the question about one position, written moves (as
// solver.Board.Parse reads them), within ctx and serve.solve-timeout.
// An error is a *badInputError (moves that are not a position), or wraps
// errTimeout, errBeyondBook or errClosed, or is the book's.
func (s *Server) Position(ctx context.Context, moves string) (*Answer, error) {
	moves = strings.TrimSpace(moves)
	p, err := s.board.Parse(moves)
	if err != nil {
		return nil, &badInputError{err}
	}
	src := s.acquire()
	if src == nil {
		return nil, errClosed
	}
	defer src.release()
	norm := moves
	if norm == solver.EmptyMoves {
		norm = ""
	}
	if a := s.cache.get(p.Key()); a != nil {
		s.metrics.cacheHits.Inc()
		c := *a
		c.Moves, c.BookDepth = norm, src.depth
		return &c, nil
	}
	if s.opts.SolveTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.SolveTimeout)
		defer cancel()
	}
	a, err := s.answer(ctx, src, norm, p)
	if err != nil {
		return nil, src.noteRead(err)
	}
	if anySolved(a) { // worth keeping: it took the solver
		s.cache.add(p.Key(), a)
		c := *a
		a = &c
	}
	return a, nil
}

// anySolved tells whether a column of a came from the solver.
func anySolved(a *Answer) bool {
	for _, c := range a.Columns {
		if c != nil && c.Source == "solver" {
			return true
		}
	}
	return false
}

// badInputError is an error in what the client sent (HTTP 400).
type badInputError struct{ err error }

func (e *badInputError) Error() string { return e.err.Error() }
func (e *badInputError) Unwrap() error { return e.err }

// errClosed answers requests that come after Close.
var errClosed = errors.New("the server is shutting down")

// Handler returns the HTTP handler of the API, /healthz and the web page.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/position", s.handlePosition)
	mux.HandleFunc("POST /v1/positions", s.handlePositions)
	mux.HandleFunc("GET /v1/line", s.handleLine)
	mux.HandleFunc("GET /v1/stats", s.handleStats)
	mux.HandleFunc("GET /v1/jobs", s.handleJobs)
	mux.HandleFunc("GET /healthz", s.handleHealth)
	mux.Handle("GET /", webHandler())
	return s.metrics.instrument(mux)
}

// String describes the source served, for logs.
func (s *Server) String() string {
	src := s.src.Load()
	if src == nil {
		return "closed"
	}
	if src.snapshot.IsZero() {
		return fmt.Sprintf("book %s, depth %d", src.book.Path(), src.depth)
	}
	return fmt.Sprintf("book %s (snapshot of %s: a job is writing it), depth %d", src.book.Path(), src.snapshot.Format(time.TimeOnly), src.depth)
}
