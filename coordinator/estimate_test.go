package coordinator

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/c4book/c4book/solver"
)

// TestChooseRuns: the runs fit in the job, do not overlap, measure about
// the sample asked for, solve at most a tenth of the leaves, and a small
// job gets at least minRuns shorter runs.
func TestChooseRuns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n                 int64
		sample, run       int
		wantRuns          int
		wantMeasuredLeast int64
	}{
		{4_200_000, 2048, 32, 64, 2048},
		{450, 2048, 32, 8, 16},
		{3, 2048, 32, 1, 1},
		{100_000, 64, 32, 2, 64},
	} {
		runs := chooseRuns(c.n, c.sample, c.run, c.run, 7)
		var solved, measured, end int64
		for _, r := range runs {
			if r.first < end || r.first+r.warmup+r.measured > c.n || r.measured < 1 || r.warmup < 0 {
				t.Errorf("n %d: run %+v overlaps the one before (ending at %d) or leaves the job", c.n, r, end)
			}
			end = r.first + r.warmup + r.measured
			solved += r.warmup + r.measured
			measured += r.measured
		}
		if len(runs) != c.wantRuns || measured < c.wantMeasuredLeast || solved > max(1, c.n/sampleShare) {
			t.Errorf("n %d, sample %d: %d runs, %d measured, %d solved; want %d runs, at least %d measured, at most %d solved",
				c.n, c.sample, len(runs), measured, solved, c.wantRuns, c.wantMeasuredLeast, max(1, c.n/sampleShare))
		}
	}
}

// TestBootstrapMean: the interval holds the mean, and is a point for one
// value.
func TestBootstrapMean(t *testing.T) {
	t.Parallel()
	xs := []float64{1, 2, 3, 4, 10}
	lo, hi := bootstrapMean(xs, 1)
	if m := meanOf(xs); lo > m || hi < m || lo < 1 || hi > 10 || lo == hi {
		t.Errorf("interval [%v, %v] for mean %v", lo, hi, m)
	}
	if lo, hi := bootstrapMean([]float64{3}, 1); lo != 3 || hi != 3 {
		t.Errorf("one value: [%v, %v], want [3, 3]", lo, hi)
	}
}

// TestEstimateJob: on a small board the estimate plans the job (the plan
// the job then uses), measures at most a tenth of its leaves and predicts
// a positive CPU inside its interval, the sample's rate scaled by the
// job's warmth.
func TestEstimateJob(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	mb := newMemBook()
	dir := filepath.Join(t.TempDir(), "plan")
	e, err := EstimateJob(context.Background(), spec, mb, dir, EstimateOptions{Sample: 64, RunLength: 8, TableBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if e.Plan.Leaves == 0 || e.Tasks == 0 || e.Measured == 0 || e.Runs == 0 || e.CPU <= 0 || e.CPULow > e.CPU || e.CPUHigh < e.CPU || e.SampleNodes <= 0 {
		t.Fatalf("estimate %+v", e)
	}
	// The prediction is the sample's rate times the job's warmth.
	if want := time.Duration(float64(e.SampleCPU) * JobWarmth); e.CPU < want-time.Microsecond || e.CPU > want+time.Microsecond {
		t.Errorf("CPU %v, want the sample's %v times %v", e.CPU, e.SampleCPU, JobWarmth)
	}
	if int64(e.Measured+e.Warmup) > max(1, e.Plan.Leaves/sampleShare) {
		t.Errorf("solved %d of %d leaves, more than a tenth", e.Measured+e.Warmup, e.Plan.Leaves)
	}
	// The plan is kept: made again, it is only counted.
	st, err := MakePlan(context.Background(), spec, mb, dir, nil)
	if err != nil || st.Leaves != e.Plan.Leaves {
		t.Errorf("the plan again: %+v, %v; want %d leaves", st, err, e.Plan.Leaves)
	}
}

// TestEstimate_Wall: the solving is shared among as many cores as there
// are tasks, never less than the hardest leaf, and the planning and the
// deriving are added.
func TestEstimate_Wall(t *testing.T) {
	e := Estimate{Plan: PlanStats{Positions: 1_400_000, Leaves: 1_000_000}, Tasks: 4,
		PlanTime: 2 * time.Second, CPU: 80 * time.Second, HardestLeaf: 3 * time.Second}
	derive := time.Second // 400,000 positions above the leaves
	for _, c := range []struct {
		cores int
		want  time.Duration
	}{
		{1, 2*time.Second + 80*time.Second + derive},
		{2, 2*time.Second + 40*time.Second + derive},
		{64, 2*time.Second + 20*time.Second + derive}, // 4 tasks: 4 cores at most
	} {
		if got := e.Wall(c.cores); got != c.want {
			t.Errorf("%d cores: %v, want %v", c.cores, got, c.want)
		}
	}
	e.HardestLeaf = time.Minute
	if got, want := e.Wall(64), 2*time.Second+time.Minute+derive; got != want {
		t.Errorf("hardest leaf of a minute: %v, want %v", got, want)
	}
	if got := e.BookBytes(); got != int64(1_400_000*bookBytesPerEntry) {
		t.Errorf("BookBytes = %d", got)
	}
}

// TestEstimateJob_whole: a job whose prediction is under SolveUnder is
// solved whole: the CPU is measured (its interval a point), every leaf's
// exact score is in the book, so that the job run after has no task left
// to solve; with SolveUnder 0, or a prediction above it, the book gets
// no leaf.
func TestEstimateJob_whole(t *testing.T) {
	t.Parallel()
	b := solver.MustBoard(5, 4)
	spec := Spec{Board: b, Root: "33", Depth: 8, TaskSize: 8}
	leafEntries := func(mb *memBook) int {
		n := 0
		for _, err := range mb.Entries(spec.Depth, spec.Depth) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	immediate := -1 // entries of the leaves' depth the planning wrote: positions scored at once
	for _, under := range []time.Duration{0, time.Nanosecond} {
		mb := newMemBook()
		e, err := EstimateJob(context.Background(), spec, mb, filepath.Join(t.TempDir(), "plan"),
			EstimateOptions{Sample: 64, RunLength: 8, TableBytes: 1 << 20, SolveUnder: under})
		if err != nil {
			t.Fatal(err)
		}
		n := leafEntries(mb)
		if immediate < 0 {
			immediate = n
		}
		if e.Whole || n != immediate || n > int(e.Plan.Immediate) {
			t.Errorf("SolveUnder %v: whole %v, %d entries of the leaves' depth, want %d (at most the %d scored at once)", under, e.Whole, n, immediate, e.Plan.Immediate)
		}
	}

	mb := newMemBook()
	dir := filepath.Join(t.TempDir(), "plan")
	var calls, last int
	e, err := EstimateJob(context.Background(), spec, mb, dir, EstimateOptions{Sample: 64, RunLength: 8, TableBytes: 1 << 20,
		SolveUnder: time.Hour, WholeProgress: func(done, total int) { calls++; last = done }})
	if err != nil {
		t.Fatal(err)
	}
	if !e.Whole || e.CPU <= 0 || e.CPULow != e.CPU || e.CPUHigh != e.CPU || e.HardestLeaf <= 0 || e.HardestLeaf > e.CPU {
		t.Fatalf("estimate %+v: want the job solved whole, its CPU measured", e)
	}
	if calls != int(e.Plan.Leaves)+1 || last != int(e.Plan.Leaves) {
		t.Errorf("WholeProgress called %d times, last with %d; want %d, then %d", calls, last, e.Plan.Leaves+1, e.Plan.Leaves)
	}
	leaves, err := openLeaves(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer leaves.Close()
	keys, err := leaves.Keys(nil, 0, leaves.Len())
	if err != nil {
		t.Fatal(err)
	}
	s, err := solver.New(b, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		p, err := b.PositionFromKey(k)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := mb.score(p)
		if want := s.Solve(p); !ok || got != want {
			t.Fatalf("leaf %v: the book holds %d (%v), the solver says %d", p, got, ok, want)
		}
	}
	tasks := newTaskTable(leaves, spec.TaskSize)
	if err := tasks.markHeld(mb.Entries(spec.Depth, spec.Depth)); err != nil {
		t.Fatal(err)
	}
	if n := leafEntries(mb); n != immediate+int(e.Plan.Leaves) {
		t.Errorf("%d entries of the leaves' depth, want %d scored at once and %d leaves", n, immediate, e.Plan.Leaves)
	}
	if left, total := tasks.leavesLeft(); left != 0 || total != e.Plan.Leaves {
		t.Errorf("after the estimate, the job has %d of %d leaves left to solve, want none", left, total)
	}
}
