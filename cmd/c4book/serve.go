package main

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/console"
	"github.com/c4book/c4book/cmd/c4book/internal/jobproc"
	"github.com/c4book/c4book/cmd/c4book/internal/metrics"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/serve"
)

const serveLong = `Answer questions about positions from the book over HTTP, read-only:
a JSON API and a web page to play through the book.

With no --book (nor book.path in the environment or the config file), it
serves the deepest book shipped with c4book for the board: on 7x6 the
exact score of every position of up to 14 stones, and past it the
solver, with the book as its oracle. --book PATH serves a book of yours,
a Pebble book's directory or a packed book's file (c4book book pack).

  GET  /v1/position?moves=4453   the position's score, each column's score
                                 (null where it cannot be played), the best
                                 columns, where the score came from (book,
                                 solver or rule) and the book's depth
  POST /v1/positions             many positions: {"positions": ["4453", ...]}
  GET  /v1/line?moves=4453       a best line of play to the end of the game
  GET  /v1/stats                 the book: depth, entries per depth, snapshot
  GET  /v1/jobs                  the book's jobs (live progress with --nats)
  GET  /healthz                  "ok", or 503 once a read found the book damaged
  GET  /                         the web page; /jobs.html the jobs' progress

Positions deeper than the book (and those the book does not hold) are
solved with the book as the solver's oracle, by at most serve.solvers at
once, each with a table of solver.tt-size; a request that needs more than
serve.solve-timeout of solving is answered 503 (asking again does not
help: a longer serve.solve-timeout does), one that found every solver
busy that long 503 with Retry-After, and one whose moves are not a
position 400 with the message "c4book solve" gives. Solved answers
are kept (serve.cache-entries). With --solve-timeout 0 nothing is solved:
what the book cannot answer is 404. --load reads the whole book into
memory first (about 10 bytes a position), for the fastest lookups.

A book that a job is writing is served from its newest snapshot (taken
every book.snapshot-interval by the job), and the server moves to newer
snapshots, and to the book itself once the job ends, as they come.

The API is described in docs/serve.md. Ctrl-C stops the server, letting
requests under way finish.`

const serveExample = `  c4book serve
  c4book serve --book c4book.db
  c4book serve --book 7x6.db --listen :8080 --solve-timeout 10s
  c4book serve --book 7x6.db --nats nats://coordinator:4222   # with the jobs' live progress`

// newServeCommand builds "c4book serve".
func newServeCommand(a *app) *cobra.Command {
	var load bool
	cmd := &cobra.Command{
		Use:     "serve [--book PATH] [--listen HOST:PORT] [--solve-timeout D] [--nats URL]",
		Short:   "Answer positions from the book over HTTP: a JSON API and a web page",
		Long:    serveLong,
		Example: serveExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			return runServe(cmd, a, cfg, load)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&load, "load", false, "read the whole book into memory first (about 10 bytes a position): faster lookups")
	def := config.Default()
	keyFlag(f, "book", "book.path", "", "opening book at `PATH`: a book's directory or a packed book's file (default: the deepest book shipped with c4book for the board)")
	keyFlag(f, "listen", "serve.listen", def.Serve.Listen, "`HOST:PORT` to answer HTTP on")
	keyFlag(f, "solve-timeout", "serve.solve-timeout", def.Serve.SolveTimeout, "most solving `D` for one request beyond the book; 0: never solve")
	keyFlag(f, "solvers", "serve.solvers", def.Serve.Solvers, "`N` positions solved at once; 0: one per CPU")
	keyFlag(f, "nats", "nats.url", "", "`URL` of the NATS server of the book's jobs, for their live progress")
	addTTSizeFlag(f)
	addMetricsFlag(f)
	return cmd
}

// runServe serves the configured book until cmd's context is done.
func runServe(cmd *cobra.Command, a *app, cfg config.Config, load bool) error {
	if err := cfg.ValidateServe(); err != nil {
		return err
	}
	ctx := cmd.Context()
	out := console.New(a.stderr, false, console.NewStyle(cfg.Log))
	log := out.Logger().With("role", "serve")
	path := bookPath(cfg)

	// The first open says what is wrong with the book as the book
	// commands do; later ones (newer snapshots) are the same open.
	first, shipped, err := openReadingBook(cmd, cfg)
	if err != nil {
		return err
	}
	board := first.Board()
	opts := serve.Options{
		Open: func() (*book.Book, error) {
			if first != nil {
				bk := first
				first = nil
				return bk, nil
			}
			if shipped {
				return openShipped(cfg)
			}
			return book.Open(path, &book.Options{ReadOnly: true, Board: board,
				CacheBytes: int64(cfg.Book.CacheSize)})
		},
		Load:         load,
		SolveTimeout: cfg.Serve.SolveTimeout,
		CacheEntries: cfg.Serve.CacheEntries,
		Solvers:      cfg.Serve.Solvers,
		TableBytes:   int64(cfg.Solver.TTSize),
		Log:          log,
	}
	if cfg.NATS.URL != "" {
		conn, err := jobproc.Connect(ctx, cfg, "c4book serve", out.QuietLogger().With("role", "nats"))
		if err != nil {
			first.Close()
			if ctx.Err() != nil {
				return errInterrupted
			}
			return err
		}
		defer conn.Close()
		opts.Jobs = func(ctx context.Context) ([]queue.JobStatus, error) { return conn.Jobs(ctx) }
	}
	srv, err := serve.New(opts)
	if err != nil {
		return err
	}
	defer srv.Close()

	metricsServer, err := metrics.Start(cfg.Metrics.Listen, log, srv.Metrics().Collectors()...)
	if err != nil {
		return err
	}
	defer metricsServer.Close()

	ln, err := net.Listen("tcp", cfg.Serve.Listen)
	if err != nil {
		return fmt.Errorf("serve.listen: %w", err)
	}
	fmt.Fprintf(a.stderr, "Serving %v on http://%s/ (Ctrl-C to stop).\n", srv, ln.Addr())
	return srv.Serve(ctx, ln)
}
