package coordinator

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// Estimating a job. What a job costs is almost all the solving of its
// leaves, and a leaf's cost varies by orders of magnitude, so the estimate
// solves a sample of the job's own leaves, exactly as a worker thread does
// (in the job's order, SolveNear with the outcome of the position before, one
// table kept warm), and scales up. A worker's table is warm from the
// leaves before: the sample is made of runs of consecutive leaves, each
// solved with a cleared table whose first half only warms it and is not
// measured. The runs are spread over the whole job, one in each of as many
// equal parts of it, so that the sample is typical of the job and not of
// its start. The sampling's 95% interval comes from the runs (a bootstrap
// over them): leaves next to each other cost alike, so the runs, not the
// leaves, are the independent draws.
//
// What the sample measures is not yet what the job costs. A leaf shares
// much of its tree with leaves solved before it anywhere in the job, and a
// job's table holds those trees: a leaf's cost keeps falling as far as its
// warm-up was measured (4,096 leaves), which no affordable sample can
// solve. So the sample's CPU is scaled by the job's warmth, the ratio of
// a job's real CPU to its sample's, measured on whole jobs (JobWarmth),
// and the interval is widened by that ratio's spread.
//
// A small job is not estimated but measured. On the depth-8 job under
// 4444 (450 leaves, 40 s of CPU) the sample may solve a tenth of the
// leaves, 16 measured, and five seeds predicted 44 to 62 s with intervals
// as wide as 17 to 119 s: a few leaves say little about a job whose cost is
// a few hard leaves, and how warm a small job's table gets is not how warm
// a large one's does. When the sample predicts at most SolveUnder, the
// estimate solves the whole job as one worker thread would, from its first
// leaf with one warm table, and reports the CPU it took. The work is not
// lost: the scores go into the book, and the job that follows finds every
// leaf held and only derives.

// EstimateOptions tunes EstimateJob.
type EstimateOptions struct {
	// Sample is the number of leaves measured. The default value is
	// 2,048. At most a tenth of the job's leaves (sampleShare) are
	// solved, warm-ups included: a small job has fewer measured, in at
	// least 8 runs when it can.
	Sample int
	// RunLength is the number of leaves measured in a run. The default
	// value is 32.
	RunLength int
	// Warmup is the number of leaves solved before a run's, to warm the
	// table, not measured. The default value is RunLength.
	Warmup int
	// Seed chooses the runs. The default value is 0.
	Seed uint64
	// TableBytes is the size of the table a run is solved with (that of a
	// worker, solver.tt-size). The default value is
	// solver.DefaultTableBytes.
	TableBytes int64
	// Plan tunes the planning, which the job that follows keeps.
	Plan *PlanOptions
	// Progress, if set, is called once with 0 when the sample begins
	// (after the planning), then after each leaf solved with the leaves
	// solved so far and the leaves to solve (measured and warm-up).
	Progress func(done, total int)
	// SolveUnder, if positive, has a job whose predicted CPU is at most
	// this solved whole after the sample: its CPU measured, its leaves'
	// scores written to the book. Zero never solves a job whole.
	SolveUnder time.Duration
	// WholeProgress, if set, is called as the job is solved whole: once
	// with 0 when it begins, then after each leaf, as Progress.
	WholeProgress func(done, total int)
}

// Estimate is what EstimateJob found.
type Estimate struct {
	Plan     PlanStats
	Tasks    int           // tasks of the job
	Runs     int           // runs of the sample
	Measured int           // leaves measured
	Warmup   int           // leaves solved to warm a run's table, not measured
	PlanTime time.Duration // the planning's time (short if the plan was there)
	// SampleCPU is the CPU of one thread solving every leaf at the
	// sample's rate: what the leaves cost on the sample's cold tables.
	SampleCPU time.Duration
	// CPU is the predicted time of one thread solving every leaf in the
	// job, SampleCPU scaled by the job's warmth, and CPULow, CPUHigh its
	// 95% interval: the sampling's interval scaled by the lowest and the
	// highest warmth measured.
	CPU, CPULow, CPUHigh time.Duration
	// SampleNodes is the number of nodes a leaf of the sample searched,
	// on average.
	SampleNodes float64
	// HardestLeaf is the time of the hardest leaf measured: no number of
	// workers finishes before it.
	HardestLeaf time.Duration
	// Whole says the job was solved whole (EstimateOptions.SolveUnder):
	// CPU is the time it took on one thread, CPULow and CPUHigh the same,
	// HardestLeaf its hardest leaf, and the book holds every leaf's score.
	Whole bool
	// Spent is what estimating took: planning, solving the sample, and
	// solving the whole job if it was.
	Spent time.Duration
}

// EstimateJob plans the job spec in dir (kept for the job, as MakePlan
// does, positions scored at once written to bk) and solves a sample of its
// leaves to predict the CPU of solving them all.
func EstimateJob(ctx context.Context, spec Spec, bk PlanBook, dir string, o EstimateOptions) (Estimate, error) {
	if o.Sample <= 0 {
		o.Sample = 2048
	}
	if o.RunLength <= 0 {
		o.RunLength = 32
	}
	if o.Warmup <= 0 {
		o.Warmup = o.RunLength
	}
	if o.TableBytes == 0 {
		o.TableBytes = solver.DefaultTableBytes
	}
	start := time.Now()
	var e Estimate
	st, err := MakePlan(ctx, spec, bk, dir, o.Plan)
	if err != nil {
		return e, fmt.Errorf("planning: %w", err)
	}
	e.Plan, e.PlanTime = st, time.Since(start)
	leaves, err := openLeaves(dir)
	if err != nil {
		return e, err
	}
	defer leaves.Close()
	e.Tasks = newTaskTable(leaves, spec.TaskSize).Len()
	if leaves.Len() == 0 {
		e.Spent = time.Since(start)
		return e, nil
	}
	runs := chooseRuns(leaves.Len(), o.Sample, o.RunLength, o.Warmup, o.Seed)
	s, err := solver.New(spec.Board, o.TableBytes)
	if err != nil {
		return e, err
	}
	total := 0
	for _, r := range runs {
		total += int(r.warmup + r.measured)
	}
	var runMeans []float64 // seconds a leaf, by run
	var sum, nodes float64
	done := 0
	if o.Progress != nil {
		o.Progress(0, total) // the sample begins: its time starts now, not at the planning
	}
	for _, r := range runs {
		s.Table().Clear()
		keys, err := leaves.Keys(nil, r.first, r.first+r.warmup+r.measured)
		if err != nil {
			return e, err
		}
		var runSum float64
		guess := 0
		for i, k := range keys {
			p, err := spec.Board.PositionFromKey(k)
			if err != nil {
				return e, err
			}
			s.ResetNodes()
			t0 := time.Now()
			v, err := s.SolveNearContext(ctx, p, guess)
			if err != nil {
				return e, err
			}
			took := time.Since(t0)
			guess = solver.Outcome(v)
			done++
			if o.Progress != nil {
				o.Progress(done, total)
			}
			if int64(i) < r.warmup {
				e.Warmup++
				continue
			}
			e.Measured++
			runSum += took.Seconds()
			nodes += float64(s.Nodes())
			e.HardestLeaf = max(e.HardestLeaf, took)
		}
		sum += runSum
		runMeans = append(runMeans, runSum/float64(r.measured))
	}
	e.Runs = len(runs)
	n := float64(leaves.Len())
	mean := sum / float64(e.Measured)
	lo, hi := bootstrapMean(runMeans, o.Seed)
	scale := func(sec, warmth float64) time.Duration { return time.Duration(sec * n * warmth * float64(time.Second)) }
	e.SampleCPU = scale(mean, 1)
	e.CPU, e.CPULow, e.CPUHigh = scale(mean, JobWarmth), scale(lo, JobWarmthLow), scale(hi, JobWarmthHigh)
	e.SampleNodes = nodes / float64(e.Measured)
	if o.SolveUnder > 0 && e.CPU <= o.SolveUnder {
		took, hardest, err := solveWhole(ctx, spec, bk, leaves, s, o.WholeProgress)
		if err != nil {
			return e, err
		}
		e.Whole, e.CPU, e.CPULow, e.CPUHigh, e.HardestLeaf = true, took, took, took, hardest
	}
	e.Spent = time.Since(start)
	return e, nil
}

// wholeBatch is how many leaves solveWhole reads, and writes to the book,
// at a time.
const wholeBatch = 1024

// solveWhole solves every leaf of the job in its order as one worker thread
// does (SolveNear with the outcome of the leaf before, one table warm from
// the first leaf), writing the scores to bk a batch at a time, and returns
// the time the solving took and the hardest leaf's. Stopped, it returns
// the error, the batches written before staying in the book: exact scores
// the job run after finds there.
func solveWhole(ctx context.Context, spec Spec, bk PlanBook, leaves *jobLeaves, s *solver.Solver, progress func(done, total int)) (took, hardest time.Duration, err error) {
	n := leaves.Len()
	if progress != nil {
		progress(0, int(n))
	}
	s.Table().Clear()
	batch := make([]book.Entry, 0, wholeBatch)
	var keys []uint64
	guess := 0
	for first := int64(0); first < n; first += wholeBatch {
		keys, err = leaves.Keys(keys[:0], first, min(n, first+wholeBatch))
		if err != nil {
			return 0, 0, err
		}
		batch = batch[:0]
		for i, k := range keys {
			p, err := spec.Board.PositionFromKey(k)
			if err != nil {
				return 0, 0, err
			}
			t0 := time.Now()
			v, err := s.SolveNearContext(ctx, p, guess)
			if err != nil {
				return 0, 0, err
			}
			leaf := time.Since(t0)
			took += leaf
			hardest = max(hardest, leaf)
			guess = solver.Outcome(v)
			batch = append(batch, book.Entry{Depth: spec.Depth, Key: k, Value: book.Value{Score: v, Origin: book.OriginSolved}})
			if progress != nil {
				progress(int(first)+i+1, int(n))
			}
		}
		if err := bk.PutBatch(batch); err != nil {
			return 0, 0, err
		}
	}
	return took, hardest, nil
}

// JobWarmth is the job's warmth, a job's real CPU over its sample's
// (SampleCPU), with the lowest and highest measured: on the idle 2-core
// machine, the jobs run by generate (docs/benchmarks.md, "Estimates
// against real runs"). On the five jobs it was fitted on, it was 0.40 to
// 0.63: the depth-8 job under 4444 0.41, the full depth-8 job 0.40, the
// full depth-12 job 0.41 (1 GiB table) to 0.53 (64 MiB), two depth-12
// jobs under 6-stone roots 0.61 and 0.63. The estimate takes their
// geometric middle and its interval their ends. Three jobs not used to
// fit it, depth 10 under 443, depth 12 under 345 and the full depth-10
// job, came out at 0.48, 0.44 and 0.52. A change to the solver or to the order of the leaves calls for
// measuring them again.
const (
	JobWarmth     = 0.50 // the prediction's
	JobWarmthLow  = 0.40 // the interval's low end's
	JobWarmthHigh = 0.63 // the interval's high end's
)

// deriveRate is how many positions a second deriving goes through: a
// model of the phase after the solving, small beside it (the quick start,
// 2,342,855 positions above its leaves, derived in about 5 s on 2 cores).
const deriveRate = 400_000

// bookBytesPerEntry is a compacted book's size on disk per entry, the
// directory's logs and manifest included (docs/benchmarks.md, "The book").
const bookBytesPerEntry = 5.74

// Wall returns the predicted wall time of the job on cores cores: the
// planning, the solving shared out among as many cores as there are tasks
// (never less than the hardest leaf), and the deriving.
func (e Estimate) Wall(cores int) time.Duration {
	solve := max(e.CPU/time.Duration(max(1, min(cores, e.Tasks))), e.HardestLeaf)
	derive := time.Duration(float64(e.Plan.Positions-e.Plan.Leaves) / deriveRate * float64(time.Second))
	return e.PlanTime + solve + derive
}

// BookBytes returns the predicted size of the job's book on disk, once
// compacted.
func (e Estimate) BookBytes() int64 {
	return int64(float64(e.Plan.Positions) * bookBytesPerEntry)
}

// estimateRun is a run of consecutive leaves from first: warmup of them to
// warm the table, then measured.
type estimateRun struct {
	first, warmup, measured int64
}

// minRuns is how many runs a small job's sample is cut into, when it can.
const minRuns = 8

// sampleShare is the part of a job's leaves the sample may solve at most,
// warm-ups included: 1/sampleShare. A leaf of the sample costs about twice
// what it costs in the job (the job's warmth): on the depth-8 job under
// 4444 a fifth of the leaves cost 42 to 45% of the job's CPU
// (docs/benchmarks.md), a tenth about half that.
const sampleShare = 10

// chooseRuns picks runs of consecutive leaves among n to measure sample
// leaves, runLength a run after as many to warm the table, one at a
// random place in each of as many equal parts of the job. At most
// n/sampleShare leaves are solved: a small job gets shorter runs, at
// least minRuns of them when it can.
func chooseRuns(n int64, sample, runLength, warmup int, seed uint64) []estimateRun {
	budget := max(1, n/sampleShare)
	measure, warm := int64(runLength), int64(warmup)
	k := max(1, (int64(sample)+measure-1)/measure)
	if k*(warm+measure) > budget {
		k = budget / (warm + measure)
		if k < minRuns {
			// Shorter runs, warmed in the same proportion.
			k = max(1, min(minRuns, budget))
			per := max(1, budget/k)
			measure = max(1, per*measure/(warm+measure))
			warm = per - measure
		}
	}
	warm = max(0, min(warm, budget/k-measure))
	rng := rand.New(rand.NewPCG(seed, 0xe57))
	part := n / k
	var runs []estimateRun
	for i := range k {
		from := i * part
		length := min(warm+measure, part)
		first := from + rng.Int64N(part-length+1)
		w := min(warm, length-1)
		runs = append(runs, estimateRun{first: first, warmup: w, measured: length - w})
	}
	return runs
}

// meanOf returns the mean of xs, 0 for none.
func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// bootstrapMean returns a 95% interval of the mean of the population xs
// are drawn from: the 2.5th and 97.5th percentiles of the means of 2,000
// resamples of xs with replacement. With one value, the interval is that
// value.
func bootstrapMean(xs []float64, seed uint64) (lo, hi float64) {
	if len(xs) < 2 {
		m := meanOf(xs)
		return m, m
	}
	rng := rand.New(rand.NewPCG(seed, 0xb007))
	means := make([]float64, 2000)
	for i := range means {
		var sum float64
		for range xs {
			sum += xs[rng.IntN(len(xs))]
		}
		means[i] = sum / float64(len(xs))
	}
	slices.Sort(means)
	return means[int(math.Floor(0.025*float64(len(means))))], means[int(math.Ceil(0.975*float64(len(means))))-1]
}
