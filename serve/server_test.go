package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// testBook writes, in a new book of board b, the exact score of every
// position with at most depth stones whose game is not over, solved by the
// real solver, and returns its path.
func testBook(t testing.TB, b *solver.Board, depth int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "book")
	bk, err := book.Open(path, &book.Options{Create: true, Board: b})
	if err != nil {
		t.Fatal(err)
	}
	fillBook(t, bk, 0, depth)
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// fillBook writes in bk the exact score of every position with from to
// depth stones whose game is not over.
func fillBook(t testing.TB, bk *book.Book, from, depth int) { fillUnder(t, bk, "", from, depth) }

// fillUnder is fillBook for the positions under the position root.
func fillUnder(t testing.TB, bk *book.Book, root string, from, depth int) {
	t.Helper()
	s, err := solver.New(bk.Board(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	var entries []book.Entry
	var walk func(p solver.Position)
	walk = func(p solver.Position) {
		if gameOver(&p) != "" || seen[p.Key()] {
			return
		}
		seen[p.Key()] = true
		if p.Moves() >= from {
			entries = append(entries, book.EntryOf(p, book.Value{Score: s.Solve(p), Origin: book.OriginSolved}))
		}
		if p.Moves() == depth {
			return
		}
		for _, c := range p.Children() {
			walk(c)
		}
	}
	p, err := bk.Board().Parse(root)
	if err != nil {
		t.Fatal(err)
	}
	walk(p)
	if err := bk.PutBatch(entries); err != nil {
		t.Fatal(err)
	}
}

// openReadOnly returns an Options.Open of the book at path.
func openReadOnly(path string) func() (*book.Book, error) {
	return func() (*book.Book, error) { return book.Open(path, &book.Options{ReadOnly: true}) }
}

// newTestServer serves the book at path with opts over httptest.
func newTestServer(t testing.TB, path string, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	opts.Open = openReadOnly(path)
	if opts.TableBytes == 0 {
		opts.TableBytes = 1 << 20
	}
	if opts.Solvers == 0 {
		opts.Solvers = 2
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv, ts
}

// getJSON GETs url and decodes the JSON body into v, returning the status.
func getJSON(t testing.TB, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: Content-Type %q, body %s", url, ct, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
	return resp.StatusCode
}

// board54 is the 5x4 board, whose positions the solver solves at once.
func board54(t testing.TB) *solver.Board {
	b, err := solver.NewBoard(5, 4)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// packedTestBook returns the path of a packed book of the positions of
// testBook.
func packedTestBook(t testing.TB, b *solver.Board, depth int) string {
	t.Helper()
	bk, err := book.Open(testBook(t, b, depth), &book.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	path := filepath.Join(t.TempDir(), "book.c4pack")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bk.Pack(context.Background(), f, "", depth, &book.DigestOptions{TempDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServer_position checks answers inside and beyond the book against
// the solver, for every position of a small board up to one stone past
// the book's depth, of a Pebble book and of the same book packed.
func TestServer_position(t *testing.T) {
	t.Parallel()
	b := board54(t)
	for _, form := range []string{"pebble", "packed"} {
		t.Run(form, func(t *testing.T) {
			path := testBook(t, b, 4)
			if form == "packed" {
				path = packedTestBook(t, b, 4)
			}
			testServerPosition(t, b, path)
		})
	}
}

// testServerPosition is TestServer_position of the book at path.
func testServerPosition(t *testing.T, b *solver.Board, path string) {
	_, ts := newTestServer(t, path, Options{SolveTimeout: 10 * time.Second, CacheEntries: 100})
	s, _ := solver.New(b, 1<<20)
	seen := map[uint64]bool{}
	var walk func(p solver.Position, moves string)
	walk = func(p solver.Position, moves string) {
		if seen[p.Key()] {
			return
		}
		seen[p.Key()] = true
		var a Answer
		if st := getJSON(t, ts.URL+"/v1/position?moves="+moves, &a); st != http.StatusOK {
			t.Fatalf("%q: status %d", moves, st)
		}
		if a.Moves != moves || a.Stones != p.Moves() || a.ToMove != 1+p.Moves()%2 || a.BookDepth != 4 {
			t.Fatalf("%q: answer %+v", moves, a)
		}
		if over := gameOver(&p); over != "" {
			if a.Over != over || a.Source != "rule" || len(a.Best) != 0 {
				t.Fatalf("%q: game over answered %+v", moves, a)
			}
			return
		}
		if want := s.Solve(p); a.Score != want {
			t.Fatalf("%q: score %d, the solver says %d", moves, a.Score, want)
		}
		wantSource := "book"
		if p.Moves() > 4 {
			wantSource = "solver"
		}
		if a.Source != wantSource {
			t.Errorf("%q: source %q, want %q", moves, a.Source, wantSource)
		}
		if a.Outcome != outcome(a.Score) || a.PliesToEnd != b.PliesToEnd(p.Moves(), a.Score) {
			t.Errorf("%q: outcome %q in %d moves for score %d", moves, a.Outcome, a.PliesToEnd, a.Score)
		}
		scores, ok := s.Analyze(p)
		best := map[int]bool{}
		for _, col := range a.Best {
			best[col] = true
		}
		for col, c := range a.Columns {
			if (c != nil) != ok[col] {
				t.Fatalf("%q column %d: answered %+v, playable %v", moves, col+1, c, ok[col])
			}
			if c == nil {
				continue
			}
			if c.Score != scores[col] {
				t.Errorf("%q column %d: score %d, the solver says %d", moves, col+1, c.Score, scores[col])
			}
			if best[col+1] != (c.Score == a.Score) {
				t.Errorf("%q column %d (score %d) best %v, position score %d", moves, col+1, c.Score, best[col+1], a.Score)
			}
		}
		if p.Moves() == 5 {
			return
		}
		for col, c := range p.Children() {
			walk(c, moves+fmt.Sprint(col+1))
		}
	}
	root, _ := b.Parse("")
	walk(root, "")
	t.Logf("%d positions checked", len(seen))
}

// TestServer_errors checks the status and message of each kind of bad
// request.
func TestServer_errors(t *testing.T) {
	t.Parallel()
	b := board54(t)
	path := testBook(t, b, 3)
	_, solving := newTestServer(t, path, Options{SolveTimeout: time.Minute})
	_, bookOnly := newTestServer(t, path, Options{})
	_, parseErr := b.Parse("4453x")
	for _, tc := range []struct {
		name, url string
		status    int
		msg       string
	}{
		{"bad moves", solving.URL + "/v1/position?moves=4453x", 400, parseErr.Error()},
		{"full column", solving.URL + "/v1/position?moves=11111", 400, "full"},
		{"beyond the book", bookOnly.URL + "/v1/position?moves=11223", 404, "beyond the book"},
		{"line beyond the book", bookOnly.URL + "/v1/line?moves=11223", 404, "beyond the book"},
		// A query that does not parse, or names a parameter the endpoint
		// does not take, is not the empty board.
		{"bad percent-encoding", solving.URL + "/v1/position?moves=33%ZZ", 400, `invalid URL escape "%ZZ"`},
		{"line, bad percent-encoding", solving.URL + "/v1/line?moves=33%ZZ", 400, `invalid URL escape "%ZZ"`},
		{"unknown parameter", solving.URL + "/v1/position?move=4453", 400, `unknown parameter "move": /v1/position takes moves`},
		{"line, unknown parameter", solving.URL + "/v1/line?mvoes=33", 400, `unknown parameter "mvoes"`},
		{"moves twice", solving.URL + "/v1/position?moves=33&moves=44", 400, `"moves" is given 2 times`},
		{"stats, bad query", solving.URL + "/v1/stats?%", 400, "invalid URL escape"},
		{"stats, a parameter", solving.URL + "/v1/stats?depth=3", 400, "/v1/stats takes no parameter"},
		{"jobs, a parameter", solving.URL + "/v1/jobs?x=1", 400, "/v1/jobs takes no parameter"},
		{"percent-encoded moves", solving.URL + "/v1/position?moves=3%33", 200, ""},
		// A long input is quoted in part: the answer stays short.
		{"long bad moves", solving.URL + "/v1/position?moves=" + strings.Repeat("12", 5000) + "x" + strings.Repeat("3", 5000), 400, "(15001 bytes;"},
		{"long bad parameter", solving.URL + "/v1/position?" + strings.Repeat("m", 10000) + "=1", 400, "... (10000 bytes)"},
		{"long bad query", solving.URL + "/v1/position?moves=%ZZ" + strings.Repeat("4", 10000), 400, "... (10009 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body map[string]any
			st := getJSON(t, tc.url, &body)
			msg, _ := body["error"].(string)
			if st != tc.status || !strings.Contains(msg, tc.msg) {
				t.Errorf("status %d, %q; want %d, %q", st, msg, tc.status, tc.msg)
			}
			if len(msg) > 300 {
				t.Errorf("a message of %d bytes: %.400s", len(msg), msg)
			}
		})
	}
}

// TestServer_timeout checks that a position too long to solve within
// serve.solve-timeout gets 503 saying that asking again will not help
// (no Retry-After), that a request that found every solver busy gets 503
// with Retry-After, and that the server still answers after.
func TestServer_timeout(t *testing.T) {
	t.Parallel()
	b := solver.Standard
	path := filepath.Join(t.TempDir(), "book")
	bk, err := book.Open(path, &book.Options{Create: true, Board: b})
	if err != nil {
		t.Fatal(err)
	}
	bk.Close()
	s, ts := newTestServer(t, path, Options{SolveTimeout: 50 * time.Millisecond, Solvers: 1})
	get := func(moves string) (int, string, string) {
		t.Helper()
		resp, err := http.Get(ts.URL + "/v1/position?moves=" + moves)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]string
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body["error"], resp.Header.Get("Retry-After")
	}
	st, msg, retry := get("")
	if st != 503 || !strings.Contains(msg, "serve.solve-timeout 50ms") || !strings.Contains(msg, "asking it again will most likely fail the same way") ||
		strings.Contains(msg, "try again") || retry != "" {
		t.Errorf("empty 7x6 board in 50ms: status %d, Retry-After %q, %q", st, retry, msg)
	}
	sv := <-s.solvers.free // every solver busy
	st, msg, retry = get("4")
	s.solvers.put(sv)
	if st != 503 || !strings.Contains(msg, "every solver of this server stayed busy") || !strings.Contains(msg, "try again in a moment") || retry != "1" {
		t.Errorf("every solver busy: status %d, Retry-After %q, %q", st, retry, msg)
	}
	var a Answer
	// A position of Pons' Test_L3_R1, 37 stones: solved at once.
	if st := getJSON(t, ts.URL+"/v1/position?moves=2252576253462244111563365343671351441", &a); st != 200 || a.Source != "solver" {
		t.Errorf("late position: status %d, %+v", st, a)
	}
}

// TestServer_batch checks POST /v1/positions: answers and failures in
// order, and the limits of a batch.
func TestServer_batch(t *testing.T) {
	t.Parallel()
	b := board54(t)
	_, ts := newTestServer(t, testBook(t, b, 4), Options{})
	post := func(body string) (int, map[string][]json.RawMessage) {
		return postTo(t, ts.URL+"/v1/positions", body)
	}
	st, out := post(`{"positions": ["", "33", "9", "11223"]}`)
	if st != 200 || len(out["positions"]) != 4 {
		t.Fatalf("status %d, %v", st, out)
	}
	var a Answer
	json.Unmarshal(out["positions"][1], &a)
	if a.Moves != "33" || a.Source != "book" {
		t.Errorf("33: %+v", a)
	}
	for i, want := range map[int]int{2: 400, 3: 404} {
		var f Failure
		json.Unmarshal(out["positions"][i], &f)
		if f.Status != want || f.Error == "" {
			t.Errorf("element %d: %+v, want status %d", i, f, want)
		}
	}
	many := `{"positions": [` + strings.Repeat(`"1",`, MaxBatch) + `"1"]}`
	for _, body := range []string{`{"positions": "33"}`, `not json`, `{"moves": []}`, many} {
		if st, _ := post(body); st != 400 {
			t.Errorf("%.40s: status %d, want 400", body, st)
		}
	}
	// The batch takes no query.
	for _, q := range []string{"?x=%ZZ", "?moves=33"} {
		if st, _ := postTo(t, ts.URL+"/v1/positions"+q, `{"positions": ["33"]}`); st != 400 {
			t.Errorf("query %s: status %d, want 400", q, st)
		}
	}
}

// postTo POSTs body to url and decodes the JSON answer.
func postTo(t testing.TB, url, body string) (int, map[string][]json.RawMessage) {
	t.Helper()
	{
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string][]json.RawMessage
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
}

// TestServer_line checks that the best line is played to the end of the
// game, each move keeping the score.
func TestServer_line(t *testing.T) {
	t.Parallel()
	b := board54(t)
	_, ts := newTestServer(t, testBook(t, b, 4), Options{SolveTimeout: time.Minute})
	var l Line
	if st := getJSON(t, ts.URL+"/v1/line?moves=3", &l); st != 200 || !l.Complete {
		t.Fatalf("status %d, %+v", st, l)
	}
	p, err := b.Parse("3" + l.Line)
	if err != nil {
		t.Fatal(err)
	}
	if gameOver(&p) == "" {
		t.Fatalf("line %q does not end the game", l.Line)
	}
	if got := b.PliesToEnd(1, l.Score); got != len(l.Line) {
		t.Errorf("line %q of %d moves; score %d says %d", l.Line, len(l.Line), l.Score, got)
	}
}

// TestServer_statsAndHealth checks /v1/stats once counted, and /healthz.
func TestServer_statsAndHealth(t *testing.T) {
	t.Parallel()
	b := board54(t)
	_, ts := newTestServer(t, testBook(t, b, 3), Options{})
	var st Stats
	for deadline := time.Now().Add(10 * time.Second); ; {
		getJSON(t, ts.URL+"/v1/stats", &st)
		if !st.Counting || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st.Board != "5x4" || st.Depth != 3 || st.Counting || st.Entries == 0 || st.ByDepth[0] != 1 || st.Snapshot != nil {
		t.Errorf("stats %+v", st)
	}
	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(body, []byte("ok\n")) {
		t.Errorf("healthz: %d %q", resp.StatusCode, body)
	}
}

// TestServer_damagedBook: a book with one byte of a table changed cannot
// be counted, and /v1/stats answers 500 naming the damaged file; /healthz,
// which said ok, then answers 503 naming it too, and a lookup that met the
// damage makes it say so as well.
func TestServer_damagedBook(t *testing.T) {
	t.Parallel()
	b := board54(t)
	for _, first := range []string{"stats", "lookups"} {
		t.Run(first, func(t *testing.T) {
			path, table := damagedBook(t, b, 10)
			_, ts := newTestServer(t, path, Options{})
			if st, body := getHealth(t, ts.URL); st != 200 {
				t.Fatalf("healthz before any read: %d %q, want 200 ok", st, body)
			}
			var resp map[string]any
			if first == "stats" {
				st := http.StatusOK
				for deadline := time.Now().Add(10 * time.Second); st == http.StatusOK && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					st = getJSON(t, ts.URL+"/v1/stats", &resp)
				}
				if msg, _ := resp["error"].(string); st != 500 || !strings.Contains(msg, table) {
					t.Fatalf("stats: %d %v, want 500 naming %s", st, resp, table)
				}
			} else {
				// Every position of depth 10 in turn, until one is in the
				// damaged block.
				found := false
				walkPositions(b, 10, func(moves string) bool {
					if getJSON(t, ts.URL+"/v1/position?moves="+moves, &resp) == 500 {
						found = true
					}
					return !found
				})
				if !found {
					t.Fatal("no position of the book answered 500")
				}
			}
			if st, body := getHealth(t, ts.URL); st != 503 || !strings.Contains(body, table) || !strings.Contains(body, "unhealthy") {
				t.Errorf("healthz after %s met the damage: %d %q, want 503 naming %s", first, st, body, table)
			}
		})
	}
}

// TestServer_lyingBook: a book whose score of a position is wrong, one
// higher or one lower, where the columns are children beyond the book
// that the server solves, gets a 500 naming the position and a damaged
// health, never an answer. A score too low is caught by the bound it
// gives the children's solves (solver.ErrBelowBound), one too high by its
// best column.
func TestServer_lyingBook(t *testing.T) {
	t.Parallel()
	b := board54(t)
	const depth = 6
	for lie, says := range map[int]string{+1: "its best column", -1: "scores more"} {
		t.Run(fmt.Sprintf("%+d", lie), func(t *testing.T) {
			path := testBook(t, b, depth)
			bk, err := book.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := solver.New(b, 1<<20)
			var liar string
			walkPositions(b, depth, func(moves string) bool {
				p, _ := b.Parse(moves)
				lo, hi := b.ScoreRange(p.Moves())
				if _, ruled := p.RuleScore(); ruled {
					return true
				}
				if v := s.Solve(p) + lie; v >= lo && v <= hi {
					if err := bk.Put(p, book.Value{Score: v, Origin: book.OriginSolved}); err != nil {
						t.Fatal(err)
					}
					liar = moves
					return false
				}
				return true
			})
			if err := bk.Close(); err != nil {
				t.Fatal(err)
			}
			if liar == "" {
				t.Fatal("no position to lie about")
			}
			_, ts := newTestServer(t, path, Options{SolveTimeout: time.Minute})
			var resp map[string]any
			st := getJSON(t, ts.URL+"/v1/position?moves="+liar, &resp)
			if msg, _ := resp["error"].(string); st != 500 || !strings.Contains(msg, "corrupt book") || !strings.Contains(msg, liar) || !strings.Contains(msg, says) {
				t.Fatalf("%s, scored %+d in the book: %d %v; want 500 naming the corrupt book and the position, saying %q", liar, lie, st, resp, says)
			}
			if st, body := getHealth(t, ts.URL); st != 503 || !strings.Contains(body, liar) {
				t.Errorf("healthz after the lie: %d %q, want 503 naming %s", st, body, liar)
			}
		})
	}
}

// damagedBook returns a book of b's positions up to depth, compacted into
// one table, with one byte changed in the middle of that table, and the
// table's file name.
func damagedBook(t testing.TB, b *solver.Board, depth int) (path, table string) {
	t.Helper()
	path = testBook(t, b, depth)
	bk, err := book.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bk.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(path, "*.sst"))
	if len(tables) != 1 {
		t.Fatalf("tables %v, want one", tables)
	}
	data, err := os.ReadFile(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(tables[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, filepath.Base(tables[0])
}

// walkPositions calls f with the moves of each position of b of depth
// stones whose game is not over, reached by one game each, until f
// returns false.
func walkPositions(b *solver.Board, depth int, f func(moves string) bool) {
	var walk func(p solver.Position, moves string) bool
	walk = func(p solver.Position, moves string) bool {
		if gameOver(&p) != "" {
			return true
		}
		if p.Moves() == depth {
			return f(moves)
		}
		for col := range b.Width() {
			if !p.CanPlay(col) {
				continue
			}
			c := p
			c.Play(col)
			if !walk(c, moves+strconv.Itoa(col+1)) {
				return false
			}
		}
		return true
	}
	root, _ := b.Parse("")
	walk(root, "")
}

// getHealth GETs /healthz and returns its status and body.
func getHealth(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestServer_cache checks that a solved answer is kept, and answered again
// without the solver.
func TestServer_cache(t *testing.T) {
	t.Parallel()
	b := board54(t)
	srv, err := New(Options{Open: openReadOnly(testBook(t, b, 2)), SolveTimeout: time.Minute, CacheEntries: 2, TableBytes: 1 << 20, Solvers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	for _, moves := range []string{"123", "1234", "12345", "123"} {
		if _, err := srv.Position(ctx, moves); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.cache.len(); n != 2 {
		t.Errorf("cache of 2 holds %d", n)
	}
	if srv.cache.get(mustKey(t, b, "12345")) == nil || srv.cache.get(mustKey(t, b, "1234")) != nil {
		t.Error("the least recently used answer was not the one dropped")
	}
	a, err := srv.Position(ctx, "12345")
	if err != nil || a.Moves != "12345" {
		t.Errorf("cached answer: %+v, %v", a, err)
	}
}

// mustKey returns the key of the position moves.
func mustKey(t testing.TB, b *solver.Board, moves string) uint64 {
	p, err := b.Parse(moves)
	if err != nil {
		t.Fatal(err)
	}
	return p.Key()
}

// TestServer_followsSnapshots serves a book that is being written, from its
// snapshots: a newer snapshot replaces the one served, and the book itself
// once its writer closes it.
func TestServer_followsSnapshots(t *testing.T) {
	t.Parallel()
	b := board54(t)
	path := filepath.Join(t.TempDir(), "book")
	w, err := book.Open(path, &book.Options{Create: true, Board: b})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fillBook(t, w, 0, 2)
	if _, err := w.Snapshot(); err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, path, Options{ReloadEvery: 5 * time.Millisecond})
	stats := func() Stats {
		var st Stats
		getJSON(t, ts.URL+"/v1/stats", &st)
		return st
	}
	if st := stats(); st.Snapshot == nil || st.Depth != 2 {
		t.Fatalf("a book being written: stats %+v, want its snapshot of depth 2", st)
	}
	waitFor := func(what string, ok func(Stats) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for st := stats(); !ok(st); st = stats() {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s: stats %+v", what, st)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	fillBook(t, w, 3, 3)
	if _, err := w.Snapshot(); err != nil {
		t.Fatal(err)
	}
	waitFor("the newer snapshot", func(st Stats) bool { return st.Snapshot != nil && st.Depth == 3 })
	var a Answer
	if st := getJSON(t, ts.URL+"/v1/position?moves=12", &a); st != 200 || a.Source != "book" {
		t.Errorf("12 from the newer snapshot: status %d, %+v", st, a)
	}
	fillBook(t, w, 4, 4)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor("the book itself", func(st Stats) bool { return st.Snapshot == nil && st.Depth == 4 })
}

// TestDepthCounts_MarshalJSON: the depths of /v1/stats' by_depth come in
// numeric order, not as strings sort them.
func TestDepthCounts_MarshalJSON(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(Stats{ByDepth: DepthCounts{10: 3, 9: 2, 0: 1, 11: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"by_depth":{"0":1,"9":2,"10":3,"11":4}`; !strings.Contains(string(got), want) {
		t.Errorf("got %s, want it to hold %s", got, want)
	}
	var back Stats
	if err := json.Unmarshal(got, &back); err != nil || back.ByDepth[10] != 3 || len(back.ByDepth) != 4 {
		t.Errorf("read back: %v, %v", back.ByDepth, err)
	}
}

// rootedBook writes, in a new book of board b, the exact score of every
// position under root with at most depth stones whose game is not over,
// and the record of a job done that built it, as "generate --root root
// --depth depth" leaves a book; it returns its path.
func rootedBook(t testing.TB, b *solver.Board, root string, depth int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "book")
	bk, err := book.Open(path, &book.Options{Create: true, Board: b})
	if err != nil {
		t.Fatal(err)
	}
	fillUnder(t, bk, root, 0, depth)
	if _, err := bk.PutJob(book.Job{ID: "rooted", Root: root, Depth: depth, State: book.JobDone}); err != nil {
		t.Fatal(err)
	}
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServer_statsRoots: /v1/stats names the roots of the book's jobs.
func TestServer_statsRoots(t *testing.T) {
	t.Parallel()
	b := board54(t)
	_, ts := newTestServer(t, rootedBook(t, b, "33", 6), Options{})
	var st Stats
	getJSON(t, ts.URL+"/v1/stats", &st)
	if want := []BookRoot{{Moves: "33", Depth: 6, State: "done"}}; !slices.Equal(st.Roots, want) {
		t.Errorf("roots %+v, want %+v", st.Roots, want)
	}
	_, ts = newTestServer(t, testBook(t, b, 2), Options{})
	getJSON(t, ts.URL+"/v1/stats", &st)
	if st.Roots == nil || len(st.Roots) != 0 {
		t.Errorf("roots of a book without jobs %#v, want []", st.Roots)
	}
}
