package coordinator

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"os"
	"path/filepath"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/internal/keyfile"
	"github.com/c4book/c4book/solver"
)

// Spec is what a generation job builds: the exact score of every
// non-terminal position reachable from Root with at most Depth stones.
type Spec struct {
	Board    *solver.Board
	Root     string // move string of the root; "" is the empty board
	Depth    int    // most stones of a position of the job
	TaskSize int    // most positions a task holds
}

// ID returns the job's id: board, root and depth, a valid NATS subject
// token ("7x6-d12", "7x6-4453-d12").
func (s Spec) ID() string {
	if s.Root == "" {
		return fmt.Sprintf("%v-d%d", s.Board, s.Depth)
	}
	return fmt.Sprintf("%v-%s-d%d", s.Board, s.Root, s.Depth)
}

// Validate checks the spec and returns the root position.
func (s Spec) Validate() (solver.Position, error) {
	if s.Board == nil {
		return solver.Position{}, errors.New("job: no board")
	}
	root, err := ParseRoot(s.Board, s.Root)
	if err != nil {
		return solver.Position{}, fmt.Errorf("job root: %w", err)
	}
	if s.Depth < root.Moves() || s.Depth > s.Board.Cells() {
		return solver.Position{}, fmt.Errorf("job depth %d: must be between the root's %d stones and %d", s.Depth, root.Moves(), s.Board.Cells())
	}
	if s.TaskSize < 1 {
		return solver.Position{}, fmt.Errorf("job task size %d: must be at least 1", s.TaskSize)
	}
	return root, nil
}

// ParseRoot returns the position of moves on b as the root of a job: the
// moves must be legal, and the game not over (no four made, the board not
// full), for the book needs a position with moves left. It is the one
// check of a root: Spec.Validate and config's generate.root use it.
func ParseRoot(b *solver.Board, moves string) (solver.Position, error) {
	root, err := b.Parse(moves)
	if err != nil {
		return solver.Position{}, err
	}
	if root.Over() {
		return solver.Position{}, fmt.Errorf("%q is a finished game: the book needs a position with moves left", moves)
	}
	return root, nil
}

// A job's plan is a directory of key files and lists (package keyfile),
// the job's positions one depth at a time:
//
//	level-DD  the canonical keys of the job's non-terminal positions of DD
//	          stones, from the root's depth to the job's;
//	paths-DD  a list: for each key of level-DD, in the same order, its
//	          path (below);
//	leaves    the keys of level-D (the job's depth) to solve: those the
//	          book did not hold and that are not scored at once;
//	order     a list: the indexes in leaves of the leaves in the order the
//	          job solves them, its tasks being runs of this order.
//
// Level d+1 is made from level d alone: the children of its positions,
// sorted and deduplicated on disk (keyfile.Sorter, keeping the shortest
// path of each), so that memory does not grow with the job. Positions
// scored at once (a win with the next stone, a full board) are written to
// the book as their level is made. A file is whole once it has its name;
// the paths of a level are removed once the next level is whole (only the
// deepest whole level's are needed to go on), and those of the job's depth
// once the leaves file, written last, is whole. A plan cut short is resumed
// from its deepest whole level that has its paths.
//
// Paths give the job its locality. A worker's table helps its next leaf
// only as far as the two share descendants, which relatives do (siblings
// transpose into each other's subtrees) and neighbours in key order seldom
// do (they differ in the lowest columns, whose stones never move). So the
// leaves are solved in depth-first order: a position's path is the column
// ranks (center first, base Width) of the moves from the root to it, the
// smallest over its parents' paths, as a depth-first walk that takes the
// center first meets it first. Sorting the leaves by path puts the leaves
// of one ancestor together, siblings next to each other; it also starts
// the job at the center, with typical leaves, not easy ones. A path of
// more digits than a uint64 holds stops growing: the leaves under it then
// come in key order.
//
// A plan made before paths has no paths files and no order: a whole one
// is solved in key order (its tasks stay what they were); one cut short
// is made again from its first level without paths.

// levelFile returns the name of the key file of depth d in a plan.
func levelFile(dir string, d int) string { return filepath.Join(dir, fmt.Sprintf("level-%02d", d)) }

// PlansDir returns where the jobs of the book at bookPath keep their plans
// by default (Config.PlanDir), each in a directory named by its id: a plan
// made there (by estimate, say) is the one the job uses.
func PlansDir(bookPath string) string { return filepath.Join(bookPath, "plans") }

// pathsFile returns the name of the list of paths of depth d in a plan.
func pathsFile(dir string, d int) string { return filepath.Join(dir, fmt.Sprintf("paths-%02d", d)) }

// leavesFile returns the name of the key file of the leaves to solve.
func leavesFile(dir string) string { return filepath.Join(dir, "leaves") }

// orderFile returns the name of the list of the leaves in the job's order.
func orderFile(dir string) string { return filepath.Join(dir, "order") }

// PlanStats counts a plan's positions.
type PlanStats struct {
	Positions int64 // non-terminal positions of the job, with those in the book
	InBook    int64 // of them, held by the book when their level was made
	Immediate int64 // scored at once and written by this planning
	Leaves    int64 // positions to solve

	// Kept: the plan was made before (by estimate, or a run stopped
	// before it solved) and only counted, so InBook and Immediate are not
	// known (0): the positions that planning scored at once are in the
	// book now.
	Kept bool
}

// PlanOptions tunes MakePlan.
type PlanOptions struct {
	// MemKeys is the most keys a level's sorter keeps in a buffer before
	// it spills a sorted run to disk: 16 bytes each, with its path; a
	// sorter has three such buffers once it spills, one being filled, one
	// being spilled on the other core, and the sort's room (the last level
	// has a second sorter, for the order). The default value is
	// DefaultPlanMemKeys.
	MemKeys int
	// Progress, if set, is called every so often with the number of
	// positions planned.
	Progress func(positions int64)
}

// DefaultPlanMemKeys is the default PlanOptions.MemKeys: buffers of 16
// MiB of keys and paths, 48 MiB a sorter that spills, 80 MiB at the last
// level (the level's sorter merging, the order's filling).
const DefaultPlanMemKeys = 1 << 20

// planProgressEvery is how many positions MakePlan makes between progress
// calls and context checks.
const planProgressEvery = 1 << 16

// MakePlan writes the plan of the job spec in dir (made if need be), and
// writes the positions scored at once to the book. The leaves are ordered
// by path, relatives together, so that a run of them is a good task, one
// worker's table serving the whole run. MakePlan resumes a plan cut short;
// on a whole plan it only counts.
func MakePlan(ctx context.Context, spec Spec, bk PlanBook, dir string, opts *PlanOptions) (PlanStats, error) {
	var o PlanOptions
	if opts != nil {
		o = *opts
	}
	if o.MemKeys <= 0 {
		o.MemKeys = DefaultPlanMemKeys
	}
	root, err := spec.Validate()
	if err != nil {
		return PlanStats{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return PlanStats{}, err
	}
	pl := &planner{spec: spec, book: bk, dir: dir, opts: o, ctx: ctx, rootDepth: root.Moves()}
	pl.rank = make([]uint64, spec.Board.Width())
	for r, col := range spec.Board.CenterFirst() {
		pl.rank[col] = uint64(r)
	}
	if exists(leavesFile(dir)) {
		return pl.count()
	}
	start, err := pl.resumeFrom(root.Moves())
	if err != nil {
		return PlanStats{}, err
	}
	for d := start; d <= spec.Depth; d++ {
		var err error
		if d == root.Moves() {
			err = pl.level(d, func(add func(key, path uint64) error) error { return add(root.CanonicalKey(), 0) })
		} else {
			err = pl.level(d, pl.children(d-1))
		}
		if err != nil {
			return pl.stats, err
		}
		if d > root.Moves() {
			// Level d is whole: the paths of d-1 are needed no more.
			if err := removeFile(pathsFile(dir, d-1)); err != nil {
				return pl.stats, err
			}
		}
	}
	// The leaves file is whole: the plan is, and needs no paths.
	return pl.stats, removeFile(pathsFile(dir, spec.Depth))
}

// resumeFrom returns the depth from which a plan cut short is made again:
// one deeper than its deepest whole level below the job's depth that has
// its paths, every level from the root's depth to it being whole (their
// positions counted); the root's depth for a new plan, or one made before
// paths.
func (pl *planner) resumeFrom(rootDepth int) (int, error) {
	for d := pl.spec.Depth - 1; d >= rootDepth; d-- {
		if !exists(levelFile(pl.dir, d)) || !exists(pathsFile(pl.dir, d)) {
			continue
		}
		var positions int64
		for l := rootDepth; l <= d; l++ {
			kf, err := keyfile.Open(levelFile(pl.dir, l))
			if errors.Is(err, os.ErrNotExist) {
				return rootDepth, nil // a level is missing: made again from the root
			}
			if err != nil {
				return 0, err
			}
			positions += kf.Len()
			kf.Close()
		}
		pl.stats.Positions += positions
		return d + 1, nil
	}
	return rootDepth, nil
}

// removeFile removes the file at path, which may be gone already.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// exists reports whether a file is found under path.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// planner is the state of MakePlan.
type planner struct {
	spec      Spec
	book      PlanBook
	dir       string
	opts      PlanOptions
	ctx       context.Context
	rootDepth int
	rank      []uint64 // per column: its rank center first, a path's digit
	stats     PlanStats
	batch     []book.Entry // positions scored at once, to write
}

// pathsGrow reports whether the paths of depth d have a digit more than
// those of depth d-1: whether a uint64 holds them, Width^(d-rootDepth).
func (pl *planner) pathsGrow(d int) bool {
	w := uint64(pl.spec.Board.Width())
	scale := uint64(1)
	for range d - pl.rootDepth {
		hi, lo := bits.Mul64(scale, w)
		if hi != 0 {
			return false
		}
		scale = lo
	}
	return true
}

// children returns a function that adds the canonical keys of the
// non-terminal children of the positions of level d, with their paths.
func (pl *planner) children(d int) func(add func(key, path uint64) error) error {
	return func(add func(key, path uint64) error) error {
		kf, err := keyfile.Open(levelFile(pl.dir, d))
		if err != nil {
			return err
		}
		defer kf.Close()
		pf, err := keyfile.OpenList(pathsFile(pl.dir, d))
		if err != nil {
			return err
		}
		defer pf.Close()
		if pf.Len() != kf.Len() {
			return fmt.Errorf("plan level %d: %d paths for %d positions", d, pf.Len(), kf.Len())
		}
		b := pl.spec.Board
		w, grow := uint64(b.Width()), pl.pathsGrow(d+1)
		sc, paths := kf.Scan(0, kf.Len()), pf.Scan(0, pf.Len())
		for sc.Next() && paths.Next() {
			p, err := b.PositionFromKey(sc.Key())
			if err != nil {
				return fmt.Errorf("plan level %d: %w", d, err)
			}
			// The children, also of a position in the book or won at
			// once: they are positions of the job too.
			for col, child := range p.Children() {
				if child.LastMoveWon() {
					continue // terminal: not a book position
				}
				path := paths.Key()
				if grow {
					path = path*w + pl.rank[col]
				}
				if err := add(child.CanonicalKey(), path); err != nil {
					return err
				}
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		return paths.Err()
	}
}

// level makes the key file and paths of depth d from the keys and paths
// gen adds (a key's smallest path is its own), and, at the job's depth,
// the leaves file and the order.
func (pl *planner) level(d int, gen func(add func(key, path uint64) error) error) error {
	// The planner is one goroutine: its sorters spill on the other core.
	sorter := keyfile.NewFirstSorter(pl.dir, pl.opts.MemKeys)
	sorter.SpillInBackground()
	defer sorter.Close()
	if err := gen(sorter.Add); err != nil {
		return err
	}
	w, err := keyfile.Create(levelFile(pl.dir, d))
	if err != nil {
		return err
	}
	defer w.Abort() // after Close: nothing left to remove
	pw, err := keyfile.CreateList(pathsFile(pl.dir, d))
	if err != nil {
		return err
	}
	defer pw.Abort()
	var leaves *keyfile.Writer
	var order *keyfile.Sorter // leaf indexes by path
	if d == pl.spec.Depth {
		if leaves, err = keyfile.Create(leavesFile(pl.dir)); err != nil {
			return err
		}
		defer leaves.Abort()
		order = keyfile.NewSorter(pl.dir, pl.opts.MemKeys)
		order.SpillInBackground()
		defer order.Close()
	}
	held, stop := iter.Pull2(pl.book.Entries(d, d))
	defer stop()
	next, err, ok := held()
	b := pl.spec.Board
	last, started := uint64(0), false
	err = sorter.Merge(func(key, path uint64) error {
		if started && key == last {
			return nil // reached by a longer path too
		}
		last, started = key, true
		// The book's entries of depth d, in key order, beside the level's.
		for ok && err == nil && next.Key < key {
			next, err, ok = held()
		}
		if err != nil {
			return err
		}
		if err := w.Add(key); err != nil {
			return err
		}
		if err := pw.Add(path); err != nil {
			return err
		}
		pl.stats.Positions++
		if pl.stats.Positions%planProgressEvery == 0 {
			if pl.opts.Progress != nil {
				pl.opts.Progress(pl.stats.Positions)
			}
			if err := pl.ctx.Err(); err != nil {
				return err
			}
		}
		if ok && next.Key == key {
			pl.stats.InBook++
			return nil
		}
		p, err := b.PositionFromKey(key)
		if err != nil {
			return err
		}
		if s, ruled := p.RuleScore(); ruled {
			return pl.immediate(book.EntryOf(p, book.Value{Score: s, Origin: book.OriginDerived}))
		}
		if leaves == nil {
			return nil
		}
		if err := order.Add(path, uint64(pl.stats.Leaves)); err != nil {
			return err
		}
		pl.stats.Leaves++
		return leaves.Add(key)
	})
	if err == nil {
		err = pl.flush()
	}
	if err == nil && order != nil {
		err = pl.writeOrder(order)
	}
	if err == nil {
		err = pw.Close()
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil && leaves != nil {
		err = leaves.Close() // last: the plan is whole
	}
	return err
}

// writeOrder writes the order file: the leaf indexes order yields, by
// path.
func (pl *planner) writeOrder(order *keyfile.Sorter) error {
	ow, err := keyfile.CreateList(orderFile(pl.dir))
	if err != nil {
		return err
	}
	defer ow.Abort()
	if err := order.Merge(func(_, leaf uint64) error { return ow.Add(leaf) }); err != nil {
		return err
	}
	return ow.Close()
}

// immediate queues e, a position scored at once, for the book.
func (pl *planner) immediate(e book.Entry) error {
	pl.batch = append(pl.batch, e)
	pl.stats.Immediate++
	if len(pl.batch) >= writeBatch {
		return pl.flush()
	}
	return nil
}

// flush writes the positions scored at once queued.
func (pl *planner) flush() error {
	if len(pl.batch) == 0 {
		return nil
	}
	err := pl.book.PutBatch(pl.batch)
	pl.batch = pl.batch[:0]
	return err
}

// count returns the stats of a whole plan from its files.
func (pl *planner) count() (PlanStats, error) {
	root, _ := pl.spec.Validate()
	for d := root.Moves(); d <= pl.spec.Depth; d++ {
		kf, err := keyfile.Open(levelFile(pl.dir, d))
		if err != nil {
			return pl.stats, err
		}
		pl.stats.Positions += kf.Len()
		kf.Close()
	}
	kf, err := keyfile.Open(leavesFile(pl.dir))
	if err != nil {
		return pl.stats, err
	}
	pl.stats.Leaves = kf.Len()
	pl.stats.Kept = true
	return pl.stats, kf.Close()
}

// RemovePlan removes the plan of the job spec in dir.
func RemovePlan(dir string) error { return os.RemoveAll(dir) }
