package serve

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c4book/c4book/solver"
)

// benchBookEnv names a book to benchmark serving on, and benchRootEnv the
// moves of its root (docs/benchmarks.md); without them, a 5x4 book of
// depth 8 from the empty board is made.
const (
	benchBookEnv = "C4BOOK_SERVE_BENCH_BOOK"
	benchRootEnv = "C4BOOK_SERVE_BENCH_ROOT"
)

// benchClients is the number of clients asking at once.
const benchClients = 32

// BenchmarkServer_bookLookups measures GET /v1/position over loopback for
// positions the book answers alone (fewer stones than its depth), with
// benchClients clients at once: lookups a second and the 99th percentile
// of the latency, with the book read through Pebble and loaded in memory.
func BenchmarkServer_bookLookups(b *testing.B) {
	path := os.Getenv(benchBookEnv)
	if path == "" {
		path = testBook(b, board54(b), 8)
	}
	for _, load := range []bool{false, true} {
		name := "pebble"
		if load {
			name = "memory"
		}
		b.Run(name, func(b *testing.B) {
			srv, err := New(Options{Open: openReadOnly(path), Load: load})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			positions := bookPositions(b, srv)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			hs := &http.Server{Handler: srv.Handler()}
			go hs.Serve(ln)
			defer hs.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients}}
			base := "http://" + ln.Addr().String() + "/v1/position?moves="

			var next atomic.Int64
			lat := make([][]time.Duration, benchClients)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for c := range benchClients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						t := time.Now()
						resp, err := client.Get(base + positions[int(i)%len(positions)])
						if err != nil {
							b.Error(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							b.Errorf("status %d", resp.StatusCode)
							return
						}
						lat[c] = append(lat[c], time.Since(t))
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			all := slices.Concat(lat...)
			slices.Sort(all)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "lookups/s")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

// bookPositions returns the moves of positions srv answers from its book
// alone: every position with fewer stones than the book's depth reached
// from the root (benchRootEnv, or the empty board), up to 100,000 of
// them.
func bookPositions(b *testing.B, srv *Server) []string {
	src := srv.acquire()
	defer src.release()
	depth := src.depth
	var out []string
	seen := map[uint64]bool{}
	var walk func(p solver.Position, moves string)
	walk = func(p solver.Position, moves string) {
		if len(out) >= 100_000 || p.Moves() >= depth || gameOver(&p) != "" || seen[p.Key()] {
			return
		}
		seen[p.Key()] = true
		if _, ok, _ := src.book.GetEntry(p.Moves(), p.CanonicalKey()); !ok {
			return // outside the book's root
		}
		out = append(out, moves)
		for col, c := range p.Children() {
			walk(c, moves+fmt.Sprint(col+1))
		}
	}
	rootMoves := os.Getenv(benchRootEnv)
	root, err := srv.Board().Parse(rootMoves)
	if err != nil {
		b.Fatalf("%s: %v", benchRootEnv, err)
	}
	walk(root, rootMoves)
	if len(out) == 0 {
		b.Fatalf("no position of the book is answered from it alone (depth %d)", depth)
	}
	b.Logf("%d positions of a book of depth %d", len(out), depth)
	return out
}
