// Command servelatency measures how fast "c4book serve" answers the
// positions people play: it plays random games from the empty board (or
// from -root), each to its end, and asks the server for every position
// of every game whose game is not over, one request at a time, timing
// each from the client (GET /v1/position). It prints the count, the
// latencies' percentiles, those of the book's answers and of the
// solver's, the stones of the slowest 1% and the slowest positions (with
// -samples, every request to a file); it exits with status 1 if a
// request failed or, with -p99, if the 99th percentile is above it.
//
// scripts/tools/serve-latency.sh starts a server on a book, pinned to one
// core, and runs it; run it alone against any server:
//
//	go run ./scripts/tools/servelatency -url http://127.0.0.1:8080 -games 1000
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/c4book/c4book/solver"
)

// answer is the part of serve's Answer this command reads.
type answer struct {
	Moves  string `json:"moves"`
	Source string `json:"source"`
}

// sample is one request timed.
type sample struct {
	moves   string
	source  string
	latency time.Duration
}

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "`URL` of the c4book serve to measure")
	games := flag.Int("games", 1000, "`N` random games played, every position of each asked for")
	root := flag.String("root", "", "`MOVES` every game starts from (default: the empty board)")
	seed := flag.Uint64("seed", 1, "`SEED` of the random games: the same seed, the same positions")
	p99 := flag.Duration("p99", 0, "fail (status 1) if the 99th percentile of the latencies is above `D`; 0: report only")
	timeout := flag.Duration("timeout", time.Minute, "most time `D` for one request")
	samples := flag.String("samples", "", "write every request to `FILE`, in the order asked: \"microseconds stones source moves\"")
	flag.Parse()
	if err := run(*base, *games, *root, *seed, *p99, *timeout, *samples); err != nil {
		fmt.Fprintln(os.Stderr, "servelatency:", err)
		os.Exit(1)
	}
}

func run(base string, games int, root string, seed uint64, p99, timeout time.Duration, samplesFile string) error {
	client := &http.Client{Timeout: timeout}
	board, err := serverBoard(client, base)
	if err != nil {
		return err
	}
	start, err := board.Parse(root)
	if err != nil {
		return fmt.Errorf("-root %q: %w", root, err)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var samples []sample
	var failed []string
	began := time.Now()
	for range games {
		p, moves := start, []byte(root)
		for !p.Over() {
			s, err := ask(client, base, string(moves))
			if err != nil {
				failed = append(failed, fmt.Sprintf("%q: %v", moves, err))
			} else {
				samples = append(samples, s)
			}
			var cols []int
			for c := range board.Width() {
				if p.CanPlay(c) {
					cols = append(cols, c)
				}
			}
			c := cols[rng.IntN(len(cols))]
			p.Play(c)
			moves = append(moves, byte('1'+c))
		}
	}
	wall := time.Since(began)
	if samplesFile != "" {
		if err := writeSamples(samplesFile, samples); err != nil {
			return err
		}
	}
	report(os.Stdout, samples, games, wall)
	switch {
	case len(failed) > 0:
		for _, f := range failed[:min(len(failed), 10)] {
			fmt.Fprintln(os.Stderr, "failed:", f)
		}
		return fmt.Errorf("%d of %d requests failed", len(failed), len(failed)+len(samples))
	case p99 > 0 && percentile(latencies(samples), 0.99) > p99:
		return fmt.Errorf("p99 %v is above -p99 %v", percentile(latencies(samples), 0.99), p99)
	}
	return nil
}

// serverBoard returns the board of the server's book (GET /v1/stats).
func serverBoard(client *http.Client, base string) (*solver.Board, error) {
	resp, err := client.Get(strings.TrimSuffix(base, "/") + "/v1/stats")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var st struct {
		Board string `json:"board"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/stats: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("GET /v1/stats: %w", err)
	}
	var w, h int
	if _, err := fmt.Sscanf(st.Board, "%dx%d", &w, &h); err != nil {
		return nil, fmt.Errorf("GET /v1/stats: board %q: %w", st.Board, err)
	}
	return solver.NewBoard(w, h)
}

// ask asks the server for the position moves and times it.
func ask(client *http.Client, base, moves string) (sample, error) {
	t0 := time.Now()
	resp, err := client.Get(strings.TrimSuffix(base, "/") + "/v1/position?moves=" + url.QueryEscape(moves))
	if err != nil {
		return sample{}, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil {
		return sample{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return sample{}, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return sample{}, err
	}
	return sample{moves: moves, source: a.Source, latency: d}, nil
}

// writeSamples writes samples to the file path, one a line.
func writeSamples(path string, samples []sample) error {
	var b strings.Builder
	for _, s := range samples {
		fmt.Fprintf(&b, "%d %d %s %s\n", s.latency.Microseconds(), len(s.moves), s.source, s.moves)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// report prints the latencies of samples, all and by source, and the
// slowest.
func report(w io.Writer, samples []sample, games int, wall time.Duration) {
	fmt.Fprintf(w, "%d positions of %d games in %v (%.0f requests/s)\n", len(samples), games, wall.Round(time.Millisecond), float64(len(samples))/wall.Seconds())
	line := func(what string, ls []time.Duration) {
		if len(ls) == 0 {
			return
		}
		fmt.Fprintf(w, "  %-7s %7d  p50 %-9v p90 %-9v p99 %-9v max %v\n", what, len(ls),
			percentile(ls, 0.5), percentile(ls, 0.9), percentile(ls, 0.99), percentile(ls, 1))
	}
	line("all", latencies(samples))
	bySource := map[string][]time.Duration{}
	for _, s := range samples {
		bySource[s.source] = append(bySource[s.source], s.latency)
	}
	for _, src := range slices.Sorted(maps.Keys(bySource)) {
		slices.Sort(bySource[src])
		line(src, bySource[src])
	}
	slices.SortFunc(samples, func(a, b sample) int { return cmp.Compare(b.latency, a.latency) })
	fmt.Fprintf(w, "  the slowest 1%% by stones:")
	byStones := map[int]int{}
	for _, s := range samples[:len(samples)/100] {
		byStones[len(s.moves)]++
	}
	for _, n := range slices.Sorted(maps.Keys(byStones)) {
		fmt.Fprintf(w, " %d: %d", n, byStones[n])
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "  slowest:")
	for _, s := range samples[:min(5, len(samples))] {
		fmt.Fprintf(w, "    %-9v %s (%d stones, %s)\n", s.latency.Round(time.Microsecond), s.moves, len(s.moves), s.source)
	}
}

// latencies returns the latencies of samples, sorted.
func latencies(samples []sample) []time.Duration {
	ls := make([]time.Duration, len(samples))
	for i, s := range samples {
		ls[i] = s.latency
	}
	slices.Sort(ls)
	return ls
}

// percentile returns the q-quantile of sorted ls (nearest rank), rounded
// to microseconds.
func percentile(ls []time.Duration, q float64) time.Duration {
	if len(ls) == 0 {
		return 0
	}
	i := int(q*float64(len(ls))+0.999999) - 1
	return ls[max(0, min(i, len(ls)-1))].Round(time.Microsecond)
}
