// Package metrics serves a process's Prometheus metrics over HTTP, with
// its health and Go's profiles, for as long as the process runs: generate,
// coordinator, worker and serve each start one on metrics.listen (see
// docs/cli.md, "Metrics"). Every name starts with c4book_; counters end
// in _total. The collectors live beside what they measure: the worker's
// (worker.Counters.Collector), the coordinator's (coordinator.Metrics),
// the book's (book.Book.Collectors) and serve's (serve.Metrics); this
// package serves them.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves a process's registry on /metrics, "ok" on /healthz and
// Go's profiles on /debug/pprof/, for as long as the process runs: its
// job, or its wait for tasks. The registry is the process's own, not
// Prometheus' global one. A nil *Server (metrics.listen empty) serves
// nothing, and its methods do nothing.
type Server struct {
	reg  *prometheus.Registry
	srv  *http.Server
	addr string // the address listened on, with the port chosen if it was 0
	done chan struct{}
}

// Start listens on addr and serves a new registry holding cs and the Go
// runtime's and the process' collectors; it returns nil when addr is
// empty. An error names the key metrics.listen.
func Start(addr string, log *slog.Logger, cs ...prometheus.Collector) (*Server, error) {
	if addr == "" {
		return nil, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(cs...)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	// Go's profiles, for finding where a long job's memory or CPU goes
	// (go tool pprof http://HOST:PORT/debug/pprof/heap).
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m := &Server{reg: reg, addr: ln.Addr().String(), done: make(chan struct{}),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(m.done)
		if err := m.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics listener stopped", "error", err)
		}
	}()
	log.Info("serving metrics", "url", "http://"+m.addr+"/metrics")
	return m, nil
}

// Addr returns the address listened on, with the port chosen if it was
// 0; "" if m is nil.
func (m *Server) Addr() string {
	if m == nil {
		return ""
	}
	return m.addr
}

// Registerer returns the registry, to which collectors may be added while
// it is served; nil if m is.
func (m *Server) Registerer() prometheus.Registerer {
	if m == nil {
		return nil
	}
	return m.reg
}

// Close stops the listener, letting scrapes under way finish (for a
// second at most). It must be called before what the collectors read is
// closed (the book).
func (m *Server) Close() {
	if m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := m.srv.Shutdown(ctx); err != nil {
		m.srv.Close()
	}
	<-m.done
}
