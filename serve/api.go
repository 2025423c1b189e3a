package serve

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
)

// The API (docs/serve.md):
//
//	GET  /v1/position?moves=4453   one Answer
//	POST /v1/positions             {"positions": ["4453", "44"]} -> {"positions": [Answer or Failure, ...]}
//	GET  /v1/line?moves=4453       the best line from the position to the end of the game
//	GET  /v1/stats                 the book served: path, depth, snapshot, entries per depth
//	GET  /v1/jobs                  the jobs of the book, live from NATS when the server knows it
//	GET  /healthz                  "ok" while the book is open and no read found it damaged
//
// Errors are JSON objects {"error": "..."} with status 400 (moves that are
// not a position, a query that does not parse or has a parameter the
// endpoint does not take, a malformed batch), 404 (beyond the book, when the
// server does not solve), 503 (solving would take longer than
// serve.solve-timeout, or every solver stayed busy that long: only then
// with Retry-After) or 500 (the book could not be read).

// Failure is the element of a batch answer for a position that has no
// Answer: its moves, the error and the HTTP status it would have had alone.
type Failure struct {
	Moves  string `json:"moves"`
	Error  string `json:"error"`
	Status int    `json:"status"`
}

// maxBatchBytes bounds the body of POST /v1/positions: MaxBatch positions
// of a full 9x6 board, with room to spare.
const maxBatchBytes = 1 << 20

// query returns the parameters of r's query, and a *badInputError when
// the query is not valid: a malformed percent-encoding (with which
// url.URL.Query drops the pair, and moves=33%ZZ was answered as the empty
// board), a parameter given twice, or a parameter the endpoint does not
// take (move=4453 was answered as the empty board too).
func query(r *http.Request, takes ...string) (map[string]string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, &badInputError{fmt.Errorf("the query %s is not valid: %v: a %% must begin a percent-encoded byte, two hex digits (%%25 is %%)", quoteShort(r.URL.RawQuery), err)}
	}
	params := make(map[string]string, len(q))
	for name, values := range q {
		if !slices.Contains(takes, name) {
			what := "no parameter"
			if len(takes) > 0 {
				what = strings.Join(takes, ", ")
			}
			return nil, &badInputError{fmt.Errorf("unknown parameter %s: %s takes %s", quoteShort(name), r.URL.Path, what)}
		}
		if len(values) > 1 {
			return nil, &badInputError{fmt.Errorf("parameter %s is given %d times: give it once", quoteShort(name), len(values))}
		}
		params[name] = values[0]
	}
	return params, nil
}

// handlePosition answers GET /v1/position?moves=MOVES.
func (s *Server) handlePosition(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "moves")
	if err != nil {
		s.writeError(w, err)
		return
	}
	a, err := s.Position(r.Context(), q["moves"])
	if err != nil {
		s.writeError(w, err)
		return
	}
	s.metrics.answers.WithLabelValues(a.Source).Inc()
	writeJSON(w, http.StatusOK, a)
}

// handlePositions answers POST /v1/positions: each position alone, in
// order, all within one serve.solve-timeout.
func (s *Server) handlePositions(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, err)
		return
	}
	var req struct {
		Positions []string `json:"positions"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBatchBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.writeError(w, &badInputError{fmt.Errorf("the body is not a JSON object {\"positions\": [\"4453\", ...]}: %w", err)})
		return
	}
	if len(req.Positions) > MaxBatch {
		s.writeError(w, &badInputError{fmt.Errorf("%d positions in one request: at most %d", len(req.Positions), MaxBatch)})
		return
	}
	ctx := r.Context()
	if s.opts.SolveTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.SolveTimeout)
		defer cancel()
	}
	out := make([]any, len(req.Positions))
	for i, moves := range req.Positions {
		a, err := s.Position(ctx, moves)
		if err != nil {
			status, msg := s.errorStatus(err)
			out[i] = Failure{Moves: moves, Error: msg, Status: status}
			continue
		}
		s.metrics.answers.WithLabelValues(a.Source).Inc()
		out[i] = a
	}
	writeJSON(w, http.StatusOK, map[string]any{"positions": out})
}

// Line is the answer of GET /v1/line: a best line of play from a position,
// each move a best column of the position it is played in.
type Line struct {
	Moves string `json:"moves"` // the position
	Score int    `json:"score"` // its score, for the player to move
	Line  string `json:"line"`  // the columns played from it, 1-based digits
	// Complete is false when serve.solve-timeout ran out before the end of
	// the game: Line is then its beginning.
	Complete bool `json:"complete"`
}

// handleLine answers GET /v1/line?moves=MOVES.
func (s *Server) handleLine(w http.ResponseWriter, r *http.Request) {
	q, err := query(r, "moves")
	if err != nil {
		s.writeError(w, err)
		return
	}
	moves := q["moves"]
	ctx := r.Context()
	if s.opts.SolveTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.SolveTimeout)
		defer cancel()
	}
	a, err := s.Position(ctx, moves)
	if err != nil {
		s.writeError(w, err)
		return
	}
	l := Line{Moves: a.Moves, Score: a.Score, Complete: true}
	for cur := a; cur.Over == ""; {
		l.Line += strconv.Itoa(cur.Best[0])
		if cur, err = s.Position(ctx, a.Moves+l.Line); err != nil {
			if status, _ := s.errorStatus(err); status != http.StatusServiceUnavailable && status != http.StatusNotFound {
				s.writeError(w, err)
				return
			}
			l.Line, l.Complete = l.Line[:len(l.Line)-1], false
			break
		}
	}
	writeJSON(w, http.StatusOK, l)
}

// Stats is the answer of GET /v1/stats.
type Stats struct {
	Path  string `json:"path"`
	Board string `json:"board"` // "7x6"
	Depth int    `json:"depth"` // deepest positions held, -1 for none
	// Snapshot is when the snapshot served was taken, while a job writes
	// the book; null when the book itself is served.
	Snapshot *time.Time `json:"snapshot"`
	// Counting is true while the entries are being counted (Entries and
	// ByDepth are then empty): they are counted when first asked for, and
	// a big book takes a while to read.
	Counting     bool        `json:"counting"`
	Entries      int64       `json:"entries"`
	ByDepth      DepthCounts `json:"by_depth,omitempty"`
	Solving      bool        `json:"solving"`       // positions beyond the book are solved
	SolveTimeout string      `json:"solve_timeout"` // serve.solve-timeout
	Cached       int         `json:"cached"`        // answers of the solver kept
	// Damaged is the first read error that found the book damaged, which
	// makes /healthz answer 503; empty while none has.
	Damaged string `json:"damaged,omitempty"`
	// Roots are the parts of the game the book covers: the root and depth
	// of each job that wrote it (its records), by moves. The web page
	// opens at the first when none is the empty board. Empty for a book
	// filled by imports alone.
	Roots []BookRoot `json:"roots"`
}

// BookRoot is a part of the game a book covers: the positions a job
// wrote, from its root to its depth.
type BookRoot struct {
	Moves string `json:"moves"` // the root's moves; "" is the empty board
	Depth int    `json:"depth"`
	State string `json:"state"` // the job's: "done", or where it stopped (book.JobState)
}

// bookRoots returns the roots of the jobs of records, by moves then depth.
func bookRoots(records []book.Job) []BookRoot {
	roots := make([]BookRoot, 0, len(records))
	for _, j := range records {
		roots = append(roots, BookRoot{Moves: j.Root, Depth: j.Depth, State: string(j.State)})
	}
	slices.SortFunc(roots, func(a, b BookRoot) int {
		return cmp.Or(strings.Compare(a.Moves, b.Moves), cmp.Compare(a.Depth, b.Depth))
	})
	return roots
}

// DepthCounts counts entries by depth. In JSON it is an object whose
// keys are the depths in numeric order ({"9": ..., "10": ...}), where
// encoding/json would sort them as strings ("10" before "9").
type DepthCounts map[int]int64

// MarshalJSON writes the counts in numeric order of depth.
func (c DepthCounts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, d := range slices.Sorted(maps.Keys(c)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `"%d":%d`, d, c[d])
	}
	return append(b, '}'), nil
}

// handleStats answers GET /v1/stats.
func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, err)
		return
	}
	src := s.acquire()
	if src == nil {
		s.writeError(w, errClosed)
		return
	}
	defer src.release()
	records, err := src.book.Jobs()
	if err != nil {
		s.writeError(w, src.noteRead(err))
		return
	}
	st := Stats{Path: src.book.Path(), Board: s.board.String(), Depth: src.depth,
		Solving: s.opts.SolveTimeout > 0, SolveTimeout: s.opts.SolveTimeout.String(), Cached: s.cache.len(), Roots: bookRoots(records)}
	if !src.snapshot.IsZero() {
		t := src.snapshot
		st.Snapshot = &t
	}
	if err := src.damaged(); err != nil {
		st.Damaged = err.Error()
	}
	src.countStats()
	select {
	case <-src.stats:
		if src.statsErr != nil {
			s.writeError(w, src.statsErr)
			return
		}
		st.Entries, st.ByDepth = src.bookStats.Entries, DepthCounts{}
		for _, d := range src.bookStats.Depths {
			st.ByDepth[d.Depth] = d.Entries
		}
	default:
		st.Counting = true
	}
	writeJSON(w, http.StatusOK, st)
}

// JobView is one job of GET /v1/jobs: its record in the book and, when
// the server reaches the book's NATS server, its live status.
type JobView struct {
	Record *book.Job        `json:"record,omitempty"`
	Live   *queue.JobStatus `json:"live,omitempty"`
}

// jobsTimeout bounds the wait for the jobs' live status on NATS.
const jobsTimeout = 5 * time.Second

// handleJobs answers GET /v1/jobs: {"jobs": [...], "live": bool, "error": "..."}.
func (s *Server) handleJobs(w http.ResponseWriter, r *http.Request) {
	if _, err := query(r); err != nil {
		s.writeError(w, err)
		return
	}
	src := s.acquire()
	if src == nil {
		s.writeError(w, errClosed)
		return
	}
	defer src.release()
	records, err := src.book.Jobs()
	if err != nil {
		s.writeError(w, src.noteRead(err))
		return
	}
	views := map[string]*JobView{}
	var order []string
	for i := range records {
		views[records[i].ID] = &JobView{Record: &records[i]}
		order = append(order, records[i].ID)
	}
	resp := map[string]any{"live": false}
	if s.opts.Jobs != nil {
		ctx, cancel := context.WithTimeout(r.Context(), jobsTimeout)
		live, err := s.opts.Jobs(ctx)
		cancel()
		if err != nil {
			resp["error"] = "the job status on NATS could not be read: " + err.Error()
		} else {
			resp["live"] = true
			for i := range live {
				v, ok := views[live[i].JobID]
				if !ok {
					v = &JobView{}
					views[live[i].JobID] = v
					order = append(order, live[i].JobID)
				}
				v.Live = &live[i]
			}
		}
	}
	jobs := make([]*JobView, 0, len(order))
	for _, id := range order {
		jobs = append(jobs, views[id])
	}
	resp["jobs"] = jobs
	if !src.snapshot.IsZero() {
		resp["snapshot"] = src.snapshot
	}
	writeJSON(w, http.StatusOK, resp)
}

// handleHealth answers GET /healthz: "ok" while the server has a book it
// has found no damage in; 503 once it is closed, or once a read of the
// book found it damaged (the same error /v1/stats or the request that met
// it answered with 500), naming the damage.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	src := s.acquire()
	if src == nil {
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	defer src.release()
	if err := src.damaged(); err != nil {
		http.Error(w, fmt.Sprintf("unhealthy: the book could not be read: %v: check it with c4book book verify, then rebuild or restore it", err), http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

// errorStatus returns the HTTP status and the message of err.
func (s *Server) errorStatus(err error) (int, string) {
	var bad *badInputError
	switch {
	case errors.As(err, &bad):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, errBeyondBook):
		return http.StatusNotFound, err.Error()
	case errors.Is(err, errBusy):
		return http.StatusServiceUnavailable, fmt.Sprintf("%s for serve.solve-timeout (%v): try again in a moment", errBusy, s.opts.SolveTimeout)
	case errors.Is(err, errTimeout):
		return http.StatusServiceUnavailable, fmt.Sprintf("solving this position takes longer than this server allows a request (serve.solve-timeout %v): asking it again will most likely fail the same way; solve it with \"c4book solve\", or ask a server with a longer serve.solve-timeout", s.opts.SolveTimeout)
	case errors.Is(err, errClosed):
		return http.StatusServiceUnavailable, err.Error()
	}
	s.log.Error("answering a request", "error", err)
	return http.StatusInternalServerError, "the book could not be read: " + err.Error()
}

// writeError writes err as a JSON error with its status; with
// Retry-After when asking again soon may succeed (every solver was busy).
func (s *Server) writeError(w http.ResponseWriter, err error) {
	status, msg := s.errorStatus(err)
	if errors.Is(err, errBusy) {
		w.Header().Set("Retry-After", "1")
	}
	s.metrics.failures.WithLabelValues(strconv.Itoa(status)).Inc()
	writeJSON(w, status, map[string]string{"error": msg})
}

// writeJSON writes v as the JSON body of a response with status, in one
// write with its length (not chunked: one system call for most answers).
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil { // the API's types always marshal
		status, body = http.StatusInternalServerError, []byte(`{"error":"encoding the answer: `+err.Error()+`"}`)
	}
	body = append(body, '\n')
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Cache-Control"] = []string{"no-store"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

// maxQuoted is the most bytes of a client's input an error quotes.
const maxQuoted = 64

// quoteShort quotes s for an error message, cut to its first maxQuoted
// bytes (and its length said) when longer: an answer quotes at most about
// a hundred characters of what was sent.
func quoteShort(s string) string {
	if len(s) <= maxQuoted {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:maxQuoted], len(s))
}
