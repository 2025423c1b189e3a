package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// httpLimits bound what one client's connection may hold of the server.
// Without them a client that sends its headers or its body a byte at a
// time, or never, keeps a connection and its goroutine for as long as it
// likes, and a few hundred such clients hold the server's connections
// open for good.
type httpLimits struct {
	// readHeader bounds the reading of a request's headers.
	readHeader time.Duration
	// read bounds the reading of a whole request, body included: a batch
	// of maxBatchBytes over a slow link takes seconds, not minutes.
	read time.Duration
	// write bounds the time from the end of the headers to the end of the
	// response, beyond the handler's own limit (serve.solve-timeout, or
	// the 5 s of the jobs' live status), so that a client that does not
	// read its answer does not hold the connection either.
	write time.Duration
	// idle bounds a kept-alive connection between two requests.
	idle time.Duration
	// maxHeader bounds the headers of a request: the API's take a few
	// hundred bytes.
	maxHeader int
	// maxBody bounds the body of any request; the one body the API reads,
	// a batch, is maxBatchBytes at most.
	maxBody int64
}

// defaultHTTPLimits returns the limits of HTTPServer: generous for any
// honest client, short enough that a slow one lets go soon.
func defaultHTTPLimits(solveTimeout time.Duration) httpLimits {
	return httpLimits{
		readHeader: 10 * time.Second,
		read:       30 * time.Second,
		write:      max(solveTimeout, jobsTimeout) + 30*time.Second,
		idle:       2 * time.Minute,
		maxHeader:  16 << 10,
		maxBody:    maxBatchBytes,
	}
}

// HTTPServer returns an http.Server of s's Handler, with limits on each
// request: 10 s to send the headers, at most 16 KiB of them, 30 s to send
// the whole request, bodies of at most 1 MiB, serve.solve-timeout plus
// 30 s to take the answer, and 2 minutes between two requests of a
// kept-alive connection. A client past a limit has its connection closed
// (or, for a body too large, the answer 400). Serve it on a listener with
// Serve, and stop it with Shutdown.
func (s *Server) HTTPServer() *http.Server {
	return s.httpServer(defaultHTTPLimits(s.opts.SolveTimeout))
}

// shutdownWait is how long Serve lets the requests under way finish once
// its context is done.
const shutdownWait = 5 * time.Second

// Serve serves HTTPServer on ln until ctx is done, then lets the requests
// under way finish, for 5 s at most. It returns nil once stopped by ctx,
// or the error that ended serving before.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.HTTPServer()
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownWait)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		hs.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// httpServer is HTTPServer with limits l.
func (s *Server) httpServer(l httpLimits) *http.Server {
	return &http.Server{
		Handler:           http.MaxBytesHandler(s.Handler(), l.maxBody),
		ReadHeaderTimeout: l.readHeader,
		ReadTimeout:       l.read,
		WriteTimeout:      l.write,
		IdleTimeout:       l.idle,
		MaxHeaderBytes:    l.maxHeader,
	}
}
