package serve

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/queue"
)

// The web page (serve/web) is tested in a real headless Chromium, driven
// over the DevTools protocol by chromedp: the test clicks what a person
// clicks and reads what the page shows, and compares it with the API's
// answers. Without a browser it skips; .ci/run installs one.

// stepTimeout bounds each step of a browser test: generous, for a slow or
// busy machine, and no step is timed.
const stepTimeout = 20 * time.Second

// chromiumPath returns the browser to drive: $C4BOOK_CHROMIUM, or the
// first of chromium, chromium-browser and google-chrome on $PATH. It skips
// the test when there is none.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("C4BOOK_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium found: install the Debian package chromium, as .ci/run does (or set $C4BOOK_CHROMIUM)")
	return ""
}

// syncBuffer is a bytes.Buffer safe for the browser's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// browser is one tab of a headless Chromium started for a test.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	problems []string // exceptions and console.error calls of the page
}

// newBrowser starts a headless Chromium with a fresh profile in
// t.TempDir(), stopped when the test ends. Its output is logged if the test
// fails; an exception thrown by the page, or a console.error call, fails
// the test.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := chromiumPath(t)
	out := &syncBuffer{}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		// No network here, and none needed: without these Chromium
		// floods refused connections to Google's services.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// Containers have a small /dev/shm.
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.CombinedOutput(out),
	)
	ctx, cancel := chromedp.NewContext(actx)
	// Cleanups run last first: the browser has exited before t.TempDir()
	// is removed.
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		if t.Failed() {
			t.Logf("Chromium's output:\n%s", out.String())
		}
	})
	start := time.Now()
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }() // no timeout on the first Run: it owns the browser
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("starting %s: %v\n%s", exe, err, out.String())
		}
	case <-time.After(stepTimeout):
		t.Fatalf("%s did not start within %v:\n%s", exe, stepTimeout, out.String())
	}
	t.Logf("%s started in %v", exe, time.Since(start).Round(time.Millisecond))

	b := &browser{t: t, ctx: ctx}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// Failed requests are logged by the browser (Source
			// "network"): the test makes some on purpose.
			if m.IsException() || m.Type == chromedp.ConsoleError && m.Source == "" {
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(b.checkConsole)
	return b
}

// checkConsole fails the test for each exception or console.error of the
// page so far.
func (b *browser) checkConsole() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		b.t.Errorf("the page's console: %s", p)
	}
	b.problems = nil
}

// do runs the actions of step, failing the test if they fail or take more
// than stepTimeout.
func (b *browser) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
}

// eval returns the value of the JavaScript expression js.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluating %.60s: %v", js, err)
	}
	return v
}

// waitFor waits until the JavaScript expression js is true.
func (b *browser) waitFor(what, js string) {
	b.t.Helper()
	b.do("waiting for "+what, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(stepTimeout)))
}

// waitPosition waits until the page shows the position moves, its request
// over.
func (b *browser) waitPosition(moves string) pageView {
	b.t.Helper()
	b.waitFor(fmt.Sprintf("position %q", moves), fmt.Sprintf(
		`document.getElementById("board").dataset.moves === %q && document.querySelector("main").getAttribute("aria-busy") === "false"`, moves))
	return b.view()
}

// pageView is what the main page shows, read from its DOM.
type pageView struct {
	URL     string       `json:"url"`   // path, query and fragment
	Moves   string       `json:"moves"` // #board's data-moves
	Busy    bool         `json:"busy"`
	Message string       `json:"message"` // "" when hidden, as the others
	Over    string       `json:"over"`
	Score   string       `json:"score"`
	Source  string       `json:"source"`
	Depth   string       `json:"depth"`
	Line    string       `json:"line"`
	Columns []columnView `json:"columns"`
	// Cells are the cells of each column, bottom first: "." empty, "1"
	// and "2" the players' stones, "*" after the last one played.
	Cells [][]string `json:"cells"`
}

// columnView is the score button above a column.
type columnView struct {
	Text     string `json:"text"`
	Disabled bool   `json:"disabled"`
	Class    string `json:"class"`
}

const viewJS = `(() => {
	const text = (id) => { const e = document.getElementById(id); return e.hidden ? "" : e.innerText; };
	const columns = [...document.querySelectorAll("#board .column")];
	const cell = (e) => (e.classList.contains("p1") ? "1" : e.classList.contains("p2") ? "2" : ".") + (e.classList.contains("last") ? "*" : "");
	return {
		url: location.pathname + location.search + location.hash,
		moves: document.getElementById("board").dataset.moves ?? "(none)",
		busy: document.querySelector("main").getAttribute("aria-busy") === "true",
		message: text("message"), over: text("over"), score: text("score"),
		source: text("source"), depth: text("depth"), line: text("line"),
		columns: columns.map((c) => { const b = c.querySelector("button.play"); return {text: b.innerText, disabled: b.disabled, class: b.className}; }),
		cells: columns.map((c) => [...c.querySelectorAll(".cell")].reverse().map(cell)),
	};
})()`

// view reads what the page shows.
func (b *browser) view() pageView {
	b.t.Helper()
	return eval[pageView](b, viewJS)
}

// click clicks the element of the CSS selector sel, as a person does.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.do("clicking "+sel, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// follow clicks the link of the CSS selector sel and waits for the page
// it leads to to load.
func (b *browser) follow(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	loaded := chromedp.Events(ctx, page.LoadEventFired)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		b.t.Fatalf("clicking %s: %v", sel, err)
	}
	for _, err := range loaded {
		if err != nil {
			b.t.Fatalf("loading the page of %s: %v", sel, err)
		}
		break
	}
}

// columnButton and columnCell are the CSS selectors of the score button
// above column col (1-based) and of the top cell of the column.
func columnButton(col int) string {
	return fmt.Sprintf(`#board .column[data-col="%d"] button.play`, col)
}
func columnCell(col int) string { return fmt.Sprintf(`#board .column[data-col="%d"] .cell`, col) }

// wantCells returns pageView.Cells of moves on a board of width columns.
func wantCells(moves string, width, height int) [][]string {
	cells := make([][]string, width)
	for i := range cells {
		cells[i] = slices.Repeat([]string{"."}, height)
	}
	filled := make([]int, width)
	for i := range len(moves) {
		col := int(moves[i] - '1')
		cells[col][filled[col]] = fmt.Sprint(1 + i%2)
		if i == len(moves)-1 {
			cells[col][filled[col]] += "*"
		}
		filled[col]++
	}
	return cells
}

// signed writes a score as the page does.
func signed(score int) string {
	if score > 0 {
		return fmt.Sprintf("+%d", score)
	}
	return fmt.Sprint(score)
}

// checkView checks what the page shows of the position moves against the
// API's answer for it and against the stones its moves put on the board.
func checkView(t *testing.T, v pageView, api string, moves string, height int) {
	t.Helper()
	var a Answer
	if st := getJSON(t, api+"/v1/position?moves="+moves, &a); st != http.StatusOK {
		t.Fatalf("the API on %q: status %d", moves, st)
	}
	if v.Message != "" || v.Busy {
		t.Errorf("%q: message %q, busy %v", moves, v.Message, v.Busy)
	}
	wantURL := "/?moves=" + moves
	if moves == "" {
		wantURL = "/"
	}
	if v.URL != wantURL {
		t.Errorf("%q: URL %s, want %s", moves, v.URL, wantURL)
	}
	if want := wantCells(moves, len(a.Columns), height); !slices.EqualFunc(v.Cells, want, slices.Equal) {
		t.Errorf("%q: the board shows (columns bottom up)\n%v\nwant\n%v", moves, v.Cells, want)
	}
	if len(v.Columns) != len(a.Columns) {
		t.Fatalf("%q: %d columns shown, the API has %d", moves, len(v.Columns), len(a.Columns))
	}
	for i, c := range a.Columns {
		got := v.Columns[i]
		classes := strings.Fields(got.Class)
		if c == nil {
			if !got.Disabled {
				t.Errorf("%q column %d: enabled, the API says it cannot be played", moves, i+1)
			}
			continue
		}
		want := fmt.Sprintf("%s\n%s in %d", signed(c.Score), c.Outcome, c.PliesToEnd)
		if got.Disabled || got.Text != want || !slices.Contains(classes, c.Outcome) {
			t.Errorf("%q column %d: shows %q (class %q, disabled %v), the API says %q", moves, i+1, got.Text, got.Class, got.Disabled, want)
		}
		if best := slices.Contains(a.Best, i+1); slices.Contains(classes, "best") != best {
			t.Errorf("%q column %d: class %q, best %v", moves, i+1, got.Class, best)
		}
	}
	if a.Over == "" && !strings.HasPrefix(v.Score, fmt.Sprintf("%s: %s in %d", signed(a.Score), a.Outcome, a.PliesToEnd)) {
		t.Errorf("%q: score shown %q, the API says %d (%s in %d)", moves, v.Score, a.Score, a.Outcome, a.PliesToEnd)
	}
	sources := map[string]string{"book": "the book", "solver": "the solver (beyond the book)", "rule": "the rules"}
	if v.Source != sources[a.Source] || !strings.HasPrefix(v.Depth, fmt.Sprint(a.BookDepth)+" stones") {
		t.Errorf("%q: source %q, depth %q; the API says %s, %d", moves, v.Source, v.Depth, a.Source, a.BookDepth)
	}
}

// gate holds or fails the requests for positions of a server, to see the
// page while a request is in flight or after it failed.
type gate struct {
	mu   sync.Mutex
	hold chan struct{} // requests wait for it to close
	fail bool          // requests get a 503
}

func (g *gate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/position" {
			g.mu.Lock()
			hold, fail := g.hold, g.fail
			g.mu.Unlock()
			if hold != nil {
				select {
				case <-hold:
				case <-r.Context().Done():
				}
			}
			if fail {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "the gate of the test says no"})
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func (g *gate) set(hold chan struct{}, fail bool) {
	g.mu.Lock()
	g.hold, g.fail = hold, fail
	g.mu.Unlock()
}

// liveJobs is an Options.Jobs whose answer the test sets.
type liveJobs struct {
	mu   sync.Mutex
	jobs []queue.JobStatus
}

func (l *liveJobs) get(context.Context) ([]queue.JobStatus, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.jobs), nil
}

func (l *liveJobs) set(jobs ...queue.JobStatus) {
	l.mu.Lock()
	l.jobs = jobs
	l.mu.Unlock()
}

// TestWeb_page plays through a book of the 5x4 board in the page, as a
// person would, checking what it shows against the API at each step:
// clicks on the buttons and on the columns, into the book and beyond it,
// a request in flight and one failing, undo, back and forward, reloading
// and a link to a position, the best line, the end of a game, an error of
// the API; then the jobs page, live.
func TestWeb_page(t *testing.T) {
	t.Parallel()
	br := newBrowser(t)
	b := board54(t)
	const height = 4
	path := testBook(t, b, 4)
	bk, err := book.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bk.PutJob(book.Job{ID: "j1", Root: "", Depth: 4, State: book.JobSolving, Planned: 123, Solved: 45}); err != nil {
		t.Fatal(err)
	}
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}
	jobs := &liveJobs{}
	srv, _ := newTestServer(t, path, Options{SolveTimeout: stepTimeout, CacheEntries: 100, Jobs: jobs.get})
	g := &gate{}
	ts := httptest.NewServer(g.wrap(srv.Handler()))
	t.Cleanup(ts.Close) // before the server's cleanup, after the browser's

	// The empty board, its column scores the API's.
	br.do("loading /", chromedp.Navigate(ts.URL+"/"))
	checkView(t, br.waitPosition(""), ts.URL, "", height)

	// Into the book: a score button, then a cell of a column.
	br.click(columnButton(3))
	checkView(t, br.waitPosition("3"), ts.URL, "3", height)
	br.click(columnCell(3))
	checkView(t, br.waitPosition("33"), ts.URL, "33", height)
	br.click(columnButton(4))
	br.waitPosition("334")
	br.click(columnCell(4))
	checkView(t, br.waitPosition("3344"), ts.URL, "3344", height)

	// Beyond the book's depth: solved.
	br.click(columnCell(2))
	v := br.waitPosition("33442")
	checkView(t, v, ts.URL, "33442", height)
	if !strings.Contains(v.Source, "solver") || !strings.Contains(v.Depth, "beyond") {
		t.Errorf("33442 is beyond the book: source %q, depth %q", v.Source, v.Depth)
	}

	// A request in flight is shown; the position changes once answered.
	hold := make(chan struct{})
	g.set(hold, false)
	br.click(columnButton(1))
	br.waitFor("the request in flight shown", `document.querySelector("main").getAttribute("aria-busy") === "true" && !document.getElementById("busy").hidden`)
	if v := br.view(); v.Moves != "33442" || v.URL != "/?moves=33442" {
		t.Errorf("while the request for 334421 is in flight: showing %q at %s", v.Moves, v.URL)
	}
	g.set(nil, false)
	close(hold)
	checkView(t, br.waitPosition("334421"), ts.URL, "334421", height)

	// A request failing: its error shown, the position kept.
	g.set(nil, true)
	br.click(columnButton(5))
	br.waitFor("the error of a failed request", `!document.getElementById("message").hidden && document.querySelector("main").getAttribute("aria-busy") === "false"`)
	v = br.view()
	if !strings.Contains(v.Message, "the gate of the test says no") || v.Moves != "334421" || v.URL != "/?moves=334421" {
		t.Errorf("after a 503: message %q, showing %q at %s", v.Message, v.Moves, v.URL)
	}
	g.set(nil, false)

	// Undo, back and forward.
	br.click("#undo")
	checkView(t, br.waitPosition("33442"), ts.URL, "33442", height)
	br.do("going back", chromedp.Evaluate[chromedp.Void]("history.back()"))
	checkView(t, br.waitPosition("334421"), ts.URL, "334421", height)
	br.do("going forward", chromedp.Evaluate[chromedp.Void]("history.forward()"))
	br.waitPosition("33442")

	// Reloading shows the same position.
	br.do("reloading", chromedp.Reload())
	checkView(t, br.waitPosition("33442"), ts.URL, "33442", height)

	// The best line, as the API gives it.
	var l Line
	if st := getJSON(t, ts.URL+"/v1/line?moves=33442", &l); st != http.StatusOK || !l.Complete || l.Line == "" {
		t.Fatalf("the API's line from 33442: status %d, %+v", st, l)
	}
	br.click("#best-line")
	br.waitFor("the best line", `!document.getElementById("line").hidden`)
	want := fmt.Sprintf("Best line (score %s): %s", signed(l.Score), strings.Join(strings.Split(l.Line, ""), " "))
	if v := br.view(); !strings.HasPrefix(v.Line, want) || strings.Contains(v.Line, "incomplete") || v.Message != "" {
		t.Errorf("line shown %q, want %q...; message %q", v.Line, want, v.Message)
	}

	// A link with the position in its fragment, to the end of a game.
	br.do("loading /#121314", chromedp.Navigate(ts.URL+"/#121314"))
	checkView(t, br.waitPosition("121314"), ts.URL, "121314", height)
	br.click(columnCell(1))
	v = br.waitPosition("1213141")
	checkView(t, v, ts.URL, "1213141", height)
	if !strings.Contains(v.Over, "the last move made four") || !strings.Contains(v.Over, "player 1 won") {
		t.Errorf("game over shown as %q", v.Over)
	}
	if disabled := eval[bool](br, `document.getElementById("best-line").disabled`); !disabled {
		t.Error("best line asked for at the end of the game")
	}

	// A link to moves that are no position: the API's error, and a new
	// game from there.
	var apiErr map[string]string
	if st := getJSON(t, ts.URL+"/v1/position?moves=9", &apiErr); st != http.StatusBadRequest {
		t.Fatalf("the API on 9: status %d", st)
	}
	br.do("loading /?moves=9", chromedp.Navigate(ts.URL+"/?moves=9"))
	br.waitFor("the error of moves 9", `!document.getElementById("message").hidden && document.querySelector("main").getAttribute("aria-busy") === "false"`)
	v = br.view()
	if v.Message != apiErr["error"] || len(v.Columns) != 5 {
		t.Errorf("moves 9: message %q (the API says %q), %d columns drawn", v.Message, apiErr["error"], len(v.Columns))
	}
	br.click("#new-game")
	checkView(t, br.waitPosition(""), ts.URL, "", height)

	// The jobs page: the book's record, then live progress.
	br.follow(`a[href="jobs.html"]`)
	br.waitFor("the job record", `document.querySelector('#jobs tr[data-job="j1"] .state')?.innerText === "solving (record)"`)
	if text := eval[string](br, `document.querySelector('#jobs tr[data-job="j1"] .progress').innerText`); !strings.Contains(text, "planned 123 · solved 45") {
		t.Errorf("the record's progress shown as %q", text)
	}
	jobs.set(queue.JobStatus{JobID: "j1", State: "deriving", Total: 100, Done: 40, Message: "waiting for disk space", Updated: time.Now()})
	br.waitFor("the live status, refreshed", `document.querySelector('#jobs tr[data-job="j1"] .state')?.innerText === "deriving"`)
	type jobView struct {
		Count   string  `json:"count"`
		Value   float64 `json:"value"`
		Max     float64 `json:"max"`
		Message string  `json:"message"`
	}
	jv := eval[jobView](br, `(() => { const tr = document.querySelector('#jobs tr[data-job="j1"]'); const bar = tr.querySelector("progress");
		return {count: tr.querySelector(".count").innerText, value: bar.value, max: bar.max, message: tr.querySelector(".message").innerText}; })()`)
	if jv.Count != "40 / 100" || jv.Value != 40 || jv.Max != 100 || jv.Message != "waiting for disk space" {
		t.Errorf("live job shown as %+v", jv)
	}
}

// TestWeb_bookRoot: the page of a book built under a root (as the quick
// start's, under 44444433) opens at that root, says what the book covers,
// and starts a new game there; the empty board stays one link away.
func TestWeb_bookRoot(t *testing.T) {
	t.Parallel()
	br := newBrowser(t)
	b := board54(t)
	_, ts := newTestServer(t, rootedBook(t, b, "33", 6), Options{SolveTimeout: stepTimeout})

	br.do("loading /", chromedp.Navigate(ts.URL+"/"))
	v := br.waitPosition("33")
	if v.URL != "/" || !strings.Contains(v.Source, "book") {
		t.Errorf("the page opened at %s, its position from %q; want / from the book", v.URL, v.Source)
	}
	if covers := eval[string](br, `document.getElementById("roots").innerText`); covers != " · covers 33 to 6 stones" {
		t.Errorf("the page says %q of what the book covers", covers)
	}
	br.click(columnButton(1))
	if v := br.waitPosition("331"); v.URL != "/?moves=331" {
		t.Errorf("after a move from the root: URL %s", v.URL)
	}
	br.click("#new-game")
	if v := br.waitPosition("33"); v.URL != "/" {
		t.Errorf("a new game: URL %s, want /", v.URL)
	}
	br.do("loading the empty board", chromedp.Navigate(ts.URL+"/?moves="))
	if v := br.waitPosition(""); v.URL != "/?moves=" || !strings.Contains(v.Source, "solver") {
		t.Errorf("the empty board: URL %s, from %q; want /?moves= from the solver", v.URL, v.Source)
	}
	br.checkConsole()
}
