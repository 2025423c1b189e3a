package book

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/c4book/c4book/solver"
)

// Re-solving is Verify's check of entries against the solver: the only one
// that sees a wrong solved entry, which has no children in the book. Two
// choices of entries:
//
//   - a sample, stratified: the entries are grouped by who scored them
//     (each worker that solved entries, by number; the entries derived
//     from their children; the imported ones), each group gets an equal
//     share of the sample, and within a group every depth gets at least
//     one entry and the rest of the share in proportion to its size. A
//     worker that solved few entries is checked as closely as one that
//     solved many, and no depth is left out. Positions scored by the
//     rules alone (a win at once, a full board) are not drawn: the
//     children check covers them all.
//   - every solved entry (VerifyOptions.Solved): what a job's workers
//     solved, solved again, in key order as they were; it costs about what
//     solving them cost the job.
//
// The entries are solved by several solvers on one table, each taking runs
// of neighbouring entries, as a worker's threads take tasks.

// resolveBatch is the number of neighbouring entries one solver takes at
// a time.
const resolveBatch = 64

// group says who scored an entry, for the sample's strata: 1 + the worker
// number of a solved entry, 0 for a solved entry of no registered worker
// too, and the origin's complement for the others, so that each is its own
// group.
func group(e Entry) uint64 {
	if e.Origin == OriginSolved {
		return uint64(e.Worker) + 1
	}
	return ^uint64(e.Origin)
}

// stratum is one depth of one group.
type stratum struct {
	group uint64
	depth int
}

// reservoir holds a uniform random choice of at most its capacity of the
// entries offered to it (Vitter's algorithm R).
type reservoir struct {
	offered int64
	entries []Entry
}

// stratifiedSample chooses n entries among those offered to it (see
// above), at random with rng.
type stratifiedSample struct {
	n      int
	rng    *rand.Rand
	strata map[stratum]*reservoir
}

func newStratifiedSample(n int, rng *rand.Rand) *stratifiedSample {
	return &stratifiedSample{n: n, rng: rng, strata: map[stratum]*reservoir{}}
}

// offer adds e to the entries the sample is chosen from.
func (s *stratifiedSample) offer(e Entry) {
	k := stratum{group(e), e.Depth}
	r := s.strata[k]
	if r == nil {
		r = &reservoir{}
		s.strata[k] = r
	}
	r.offered++
	if len(r.entries) < s.n {
		r.entries = append(r.entries, e)
	} else if j := s.rng.Int64N(r.offered); j < int64(s.n) {
		r.entries[j] = e
	}
}

// choose returns the sample, in key order.
func (s *stratifiedSample) choose() []Entry {
	byGroup := map[uint64][]stratum{}
	for k := range s.strata {
		byGroup[k.group] = append(byGroup[k.group], k)
	}
	groups := slices.Sorted(func(yield func(uint64) bool) {
		for g := range byGroup {
			if !yield(g) {
				return
			}
		}
	})
	var chosen []Entry
	for i, g := range groups {
		share := s.n / len(groups)
		if i < s.n%len(groups) {
			share++
		}
		strata := byGroup[g]
		slices.SortFunc(strata, func(a, b stratum) int { return cmp.Compare(a.depth, b.depth) })
		sizes := make([]int64, len(strata))
		for j, k := range strata {
			sizes[j] = s.strata[k].offered
		}
		for j, q := range apportion(share, sizes) {
			r := s.strata[strata[j]]
			// A reservoir is a uniform choice as a set, not in its order:
			// shuffled, any q of it are.
			s.rng.Shuffle(len(r.entries), func(a, b int) { r.entries[a], r.entries[b] = r.entries[b], r.entries[a] })
			chosen = append(chosen, r.entries[:q]...)
		}
	}
	slices.SortFunc(chosen, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.Key, b.Key))
	})
	return chosen
}

// apportion splits n among strata of the given sizes: one each while n
// lasts, the rest in proportion to their sizes (rounded down, what is left
// to the largest), and never more than a stratum's size.
func apportion(n int, sizes []int64) []int {
	q := make([]int, len(sizes))
	var total int64
	for i, size := range sizes {
		if n > 0 && size > 0 {
			q[i]++
			n--
		}
		total += size
	}
	if n <= 0 || total == 0 {
		return q
	}
	rest := n
	for i, size := range sizes {
		add := int(int64(rest) * size / total)
		add = min(add, int(size)-q[i])
		q[i] += add
		n -= add
	}
	order := make([]int, len(sizes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
	for n > 0 {
		gave := false
		for _, i := range order {
			if n > 0 && int64(q[i]) < sizes[i] {
				q[i]++
				n--
				gave = true
			}
		}
		if !gave {
			break
		}
	}
	return q
}

// resolveFunc is called with each entry re-solved and the solver's score.
type resolveFunc func(e Entry, p solver.Position, score int)

// resolveAll solves the entries entries yields, in batches of neighbours,
// with s and threads-1 more solvers on its table, and calls done with
// each. It returns the first error: ctx's, a solver's (its value is then
// not given), or entries'.
func resolveAll(ctx context.Context, s *solver.Solver, threads int, entries func(yield func(Entry) bool) error, done resolveFunc) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []Entry, threads)
	var (
		mu       sync.Mutex
		firstErr error
		failed   atomic.Bool
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		failed.Store(true)
		cancel()
	}
	var wg sync.WaitGroup
	for i := range max(threads, 1) {
		sv := s
		if i > 0 {
			sv = solver.NewShared(s.Table())
		}
		wg.Go(func() {
			for batch := range batches {
				guess := 0
				for _, e := range batch {
					if failed.Load() {
						continue
					}
					p, _ := s.Board().PositionFromKey(e.Key) // decoded: a position
					// A value only from a finished, confirmed search.
					v, err := sv.SolveNearContext(ctx, p, guess)
					if err != nil {
						fail(err)
						continue
					}
					guess = solver.Outcome(v)
					done(e, p, v)
				}
			}
		})
	}
	var batch []Entry
	err := entries(func(e Entry) bool {
		batch = append(batch, e)
		if len(batch) == resolveBatch {
			select {
			case batches <- batch:
			case <-ctx.Done():
				return false
			}
			batch = nil
		}
		return true
	})
	if len(batch) > 0 && ctx.Err() == nil {
		batches <- batch
	}
	close(batches)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	switch {
	case firstErr != nil:
		return firstErr
	case err != nil:
		return err
	}
	return ctx.Err()
}
