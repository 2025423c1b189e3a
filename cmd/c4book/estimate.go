package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/cmd/c4book/internal/progress"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/coordinator"
	"github.com/c4book/c4book/solver"
)

const estimateLong = `Predict what a job will cost before running it: plan it, solve a random
sample of its tasks exactly as a worker thread does, and scale up.

Where the plan goes: with --book PATH (or book.path in the environment or
the config file) into that book, created if needed, and kept there for
the job that follows, as generate would make it; without, into a
temporary book that is removed at the end, which says so: estimate writes
nothing the user did not ask for (a depth-14 plan is 1.4 GB).

It prints the job's positions, leaves and tasks; the predicted CPU of
solving every leaf on one thread, with a 95% interval; the wall time on
1, 2, 8 and 64 cores (the CPU shared out among as many cores as there
are tasks, never less than the hardest leaf measured, plus planning and
deriving); and the book's size on disk.
With --json the last line is one JSON object with the same figures
("leaves", "tasks", "cpu_seconds", "cpu_seconds_low", "cpu_seconds_high",
"wall_seconds", "book_bytes", ...).

The sample is --sample leaves (default 2048), in runs of 32 consecutive
leaves spread over the whole job, each run solved with a cleared table
warmed by the 32 leaves before it, as a worker's table is warm from the
leaves before. At most a tenth of the job's leaves are solved: a small
job is measured on fewer, in at least 8 shorter runs. --seed S repeats a
choice. Progress goes to standard error.

What the sample measures is not yet what the job costs: a leaf shares
much of its tree with leaves solved before it anywhere in the job, and
the job's table keeps those trees, which no affordable sample can solve.
So the prediction is the sample's rate times the job's warmth, the ratio
of real CPU to the sample's measured on whole jobs (0.40 to 0.63 on five
jobs from depth 8 to 12; the prediction takes 0.5, and was 0.96 to 1.24
times the real CPU on three jobs not used to fit it, the full depth-10
job among them), and the interval is the sample's, widened by that
ratio's ends. Once the job runs, its progress line is the better guide.

A small job is measured instead: when the sample predicts at most
--solve-under of CPU (default 2m; 0: never), the whole job is solved as
one worker thread solves it, and the CPU it took is printed (a few leaves
say little of a small job: on the depth-8 job under 4444 the sample's
predictions ranged over 1.5x). With --book the work is not lost: the
leaves' scores go into the book, and the job that follows only derives.`

const estimateExample = `  c4book estimate --depth 12
  c4book estimate --depth 8 --root 4444 --json
  c4book estimate --depth 14 --book 7x6.db   # the plan kept for "c4book generate --depth 14 --book 7x6.db"`

// estimateCores are the machine sizes the wall time is predicted for.
var estimateCores = []int{1, 2, 8, 64}

// newEstimateCommand builds "c4book estimate".
func newEstimateCommand(a *app) *cobra.Command {
	var sample, warmup int
	var seed uint64
	var solveUnder time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "estimate --depth D [--root MOVES] [--sample N] [--seed S] [--solve-under DURATION] [--json] [--book PATH]",
		Short:   "Predict a job's CPU, wall time and book size by solving a sample of its leaves",
		Long:    estimateLong,
		Example: estimateExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sample < 1 {
				return newUsageError(cmd, fmt.Errorf("--sample %d: must be at least 1", sample))
			}
			if !cmd.Flags().Changed("seed") {
				seed = rand.Uint64()
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			board, err := solver.NewBoard(cfg.Board.Width, cfg.Board.Height)
			if err != nil {
				return fmt.Errorf("board.width, board.height: %w", err)
			}
			spec := coordinator.Spec{Board: board, Root: cfg.Generate.Root, Depth: cfg.Generate.Depth, TaskSize: cfg.Queue.TaskSize}
			if _, err := spec.Validate(); err != nil {
				return err
			}
			path := bookPath(cfg)
			if !cfg.Book.PathGiven {
				tmp, err := os.MkdirTemp("", "c4book-estimate-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				path = filepath.Join(tmp, "book")
				fmt.Fprintf(a.stderr, "No --book: the plan goes into a temporary book, %s, removed at the end (--book PATH keeps it, and a small job's scores, for the job that follows).\n", path)
			}
			bk, err := openBook(cmd, cfg, path, bookCreate)
			if err != nil {
				return err
			}
			step := progress.NewStep(a.stderr, "solving the sample", "leaves", 5*time.Second)
			whole := progress.NewStep(a.stderr, "solving the whole job (a small one)", "leaves", 5*time.Second)
			e, err := coordinator.EstimateJob(cmd.Context(), spec, bk, filepath.Join(coordinator.PlansDir(bk.Path()), spec.ID()), coordinator.EstimateOptions{
				Sample: sample, Warmup: warmup, Seed: seed, TableBytes: int64(cfg.Solver.TTSize), SolveUnder: solveUnder,
				Progress:      func(done, total int) { step.Update(int64(done), int64(total)) },
				WholeProgress: func(done, total int) { whole.Update(int64(done), int64(total)) },
			})
			if err != nil {
				if cmd.Context().Err() != nil {
					return closeBook(bk, errInterrupted)
				}
				return closeBook(bk, err)
			}
			printEstimate(a.stdout, spec, e, seed, asJSON, cfg.Book.PathGiven)
			return closeBook(bk, nil)
		},
	}
	f, def := cmd.Flags(), config.Default()
	keyFlag(f, "depth", "generate.depth", def.Generate.Depth, "depth `D` of the job")
	keyFlag(f, "root", "generate.root", def.Generate.Root, "`MOVES` of the job's root; empty: the empty board")
	keyFlag(f, "book", "book.path", "", "book directory `PATH` of the job, created if needed in an existing directory, where the plan is kept (default: a temporary one, removed)")
	keyFlag(f, "task-size", "queue.task-size", def.Queue.TaskSize, "`N` positions in one task")
	f.IntVar(&sample, "sample", 2048, "`N` leaves measured")
	f.IntVar(&warmup, "warmup", 0, "`N` leaves solved before each run of 32 to warm the table (default 32)")
	f.Uint64Var(&seed, "seed", 0, "seed of the sample's choice (default: random, printed)")
	f.DurationVar(&solveUnder, "solve-under", 2*time.Minute, "solve the whole job, its CPU measured and its scores stored, when the sample predicts at most `DURATION` (0: never)")
	f.BoolVar(&asJSON, "json", false, "end with one JSON object of the figures")
	addTTSizeFlag(f)
	return cmd
}

// estimateJSON is the object estimate --json prints.
type estimateJSON struct {
	Job            string           `json:"job"`
	Positions      int64            `json:"positions"`
	Leaves         int64            `json:"leaves"`
	Tasks          int              `json:"tasks"`
	SampleLeaves   int              `json:"sample_leaves"`
	SampleRuns     int              `json:"sample_runs"`
	WarmupLeaves   int              `json:"warmup_leaves"`
	Seed           uint64           `json:"seed"`
	CPUSeconds     float64          `json:"cpu_seconds"`
	CPUSecondsLow  float64          `json:"cpu_seconds_low"`
	CPUSecondsHigh float64          `json:"cpu_seconds_high"`
	SampleCPU      float64          `json:"sample_cpu_seconds"`
	SampleNodes    float64          `json:"sample_nodes_per_leaf"`
	HardestLeaf    float64          `json:"hardest_leaf_seconds"`
	WallSeconds    map[string]int64 `json:"wall_seconds"`
	BookBytes      int64            `json:"book_bytes"`
	SpentSeconds   float64          `json:"spent_seconds"`
	SolvedWhole    bool             `json:"solved_whole"`
}

// printEstimate writes what estimate found.
// kept says whether the plan and scores stay in a book the user named.
func printEstimate(w io.Writer, spec coordinator.Spec, e coordinator.Estimate, seed uint64, asJSON, kept bool) {
	keptNote := "the plan is kept in the book for the job"
	if !kept {
		keptNote = "the plan is not kept: no --book"
	}
	fmt.Fprintf(w, "Job %s: %s positions, %s to solve in %s tasks of %d (planned in %v; %s).\n",
		spec.ID(), human.Count(e.Plan.Positions), human.Count(e.Plan.Leaves), human.Count(e.Tasks), spec.TaskSize, human.Span(e.PlanTime), keptNote)
	if e.Tasks == 0 {
		fmt.Fprintln(w, "Nothing to solve: the book holds every leaf.")
	} else {
		fmt.Fprintf(w, "Sample: %s leaves measured in %d runs (%s more solved to warm the table; seed %d); the estimate took %v.\n",
			human.Count(e.Measured), e.Runs, human.Count(e.Warmup), seed, human.Span(e.Spent))
		if e.Whole {
			fmt.Fprintf(w, "CPU to solve: %v on one thread, measured: the sample predicted %v, a small job, so it was solved whole, as one worker thread solves it.\n",
				human.Span(e.CPU), human.Span(time.Duration(float64(e.SampleCPU)*coordinator.JobWarmth)))
			if kept {
				fmt.Fprintln(w, "Its leaves' scores are in the book: the job that follows (generate, coordinator) finds them there and only derives.")
			}
		} else {
			fmt.Fprintf(w, "CPU to solve: %v (95%%: %v to %v) on one thread.\n",
				human.Span(e.CPU), human.Span(e.CPULow), human.Span(e.CPUHigh))
			fmt.Fprintf(w, "That is the sample's rate (%v for the job, %s nodes a leaf on cold tables) times the job's warmth, %.2f: a whole job's table made the real CPU %.2f to %.2f of the sample's on the jobs measured (docs/benchmarks.md).\n",
				human.Span(e.SampleCPU), human.Count(int64(e.SampleNodes)), coordinator.JobWarmth, coordinator.JobWarmthLow, coordinator.JobWarmthHigh)
		}
		walls := make([]string, len(estimateCores))
		for i, c := range estimateCores {
			walls[i] = human.Counted(c, "core") + " " + human.Span(e.Wall(c))
		}
		fmt.Fprintf(w, "Wall time: %s (the hardest leaf measured: %v).\n", strings.Join(walls, ", "), e.HardestLeaf.Round(time.Millisecond))
	}
	bookBytes := e.BookBytes()
	fmt.Fprintf(w, "Book: about %.1f MB on disk once compacted (%s entries).\n", float64(bookBytes)/1e6, human.Count(e.Plan.Positions))
	if !asJSON {
		return
	}
	j := estimateJSON{Job: spec.ID(), Positions: e.Plan.Positions, Leaves: e.Plan.Leaves, Tasks: e.Tasks, SampleLeaves: e.Measured,
		SampleRuns: e.Runs, WarmupLeaves: e.Warmup, Seed: seed, CPUSeconds: e.CPU.Seconds(), CPUSecondsLow: e.CPULow.Seconds(), CPUSecondsHigh: e.CPUHigh.Seconds(),
		SampleCPU: e.SampleCPU.Seconds(), SampleNodes: e.SampleNodes, HardestLeaf: e.HardestLeaf.Seconds(), WallSeconds: map[string]int64{}, BookBytes: bookBytes, SpentSeconds: e.Spent.Seconds(), SolvedWhole: e.Whole}
	for _, c := range estimateCores {
		j.WallSeconds[fmt.Sprint(c)] = int64(e.Wall(c).Seconds())
	}
	data, _ := json.Marshal(j)
	fmt.Fprintln(w, string(data))
}
