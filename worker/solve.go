package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// solve solves the positions of t in order with th's solver, made anew
// when the board changes. A panic of the solver is returned as an error.
func (w *worker) solve(ctx context.Context, th *thread, t *queue.Task, positions []solver.Position) (res queue.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			th.solver = nil
			err = fmt.Errorf("solver panic: %v", r)
		}
	}()
	b := positions[0].Board()
	if th.solver == nil || th.solver.Board() != b {
		th.solver = nil
		t, err := w.sharedTable(b)
		if err != nil {
			return res, err
		}
		th.solver = solver.NewShared(t)
	}
	s := th.solver
	// Threads with no task of their own may help with this one.
	s.OpenTeam()
	th.busy.Store(s)
	w.wakeHelpers()
	defer func() {
		th.busy.Store(nil)
		s.CloseTeam()
	}()
	start := time.Now()
	s.ResetNodes()
	res = queue.Result{JobID: t.JobID, TaskID: t.TaskID, Keys: t.Keys, Scores: make([]int8, len(positions))}
	guess := 0
	for i, p := range positions {
		// Neighbouring positions often have the same outcome: the first
		// question asked of a position is whether it scores at least the
		// outcome of the one before (1: does it win? 0: does it at least
		// draw? -1: is it at worst lost to the very last stone?). Guessing
		// the score itself costs more when wrong than it saves when right
		// (docs/solver.md, measurements behind the constants).
		if beforeSolve != nil {
			beforeSolve(p)
		}
		// A value comes only from a search that finished and was
		// confirmed (solver.Solver.runSolve); any error, a stop among
		// them, hands the whole task back: no score of it is published.
		v, err := s.SolveNearContext(ctx, p, guess)
		if err != nil {
			return res, err
		}
		res.Scores[i] = int8(v)
		guess = solver.Outcome(v)
	}
	res.Nodes = s.Nodes()
	res.Elapsed = time.Since(start)
	return res, nil
}

// heartbeat returns how often to report progress on a task now: three
// times in the AckWait the coordinator chose, when the task source tells
// it (queue.TaskSource does, and follows its changes), and at most
// Config.Heartbeat.
func (w *worker) heartbeat() time.Duration {
	if aw, ok := w.tasks.(interface{ AckWait() time.Duration }); ok && aw.AckWait() > 0 {
		return min(w.cfg.Heartbeat, aw.AckWait()/3)
	}
	return w.cfg.Heartbeat
}

// sharedTable returns the worker's table for board b, made anew (and the
// old one left to the threads still on it) when the board changes.
func (w *worker) sharedTable(b *solver.Board) (*solver.Table, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.table != nil && w.table.Board() == b {
		return w.table, nil
	}
	w.table = nil
	t, err := solver.NewTable(b, w.cfg.TableBytes)
	if err != nil {
		return nil, err
	}
	w.table = t
	return t, nil
}

// beforeSolve, if set, is called before each position is solved: a seam
// for tests to make the solver fail. Nil outside tests.
var beforeSolve func(p solver.Position)

// boards caches boards by size, so that tasks of one size share one
// *solver.Board and a thread keeps its solver across them.
var boards sync.Map // [2]uint8 -> *solver.Board

// decodeTask returns the positions of t, or an error naming what makes the
// task impossible to solve: a board that does not exist, a key that is not
// a position of it, a position whose game is over.
func decodeTask(t *queue.Task) ([]solver.Position, error) {
	size := [2]uint8{t.Width, t.Height}
	bv, ok := boards.Load(size)
	if !ok {
		b, err := solver.NewBoard(int(t.Width), int(t.Height))
		if err != nil {
			return nil, err
		}
		bv, _ = boards.LoadOrStore(size, b)
	}
	b := bv.(*solver.Board)
	if len(t.Keys) == 0 {
		return nil, errors.New("no positions")
	}
	positions := make([]solver.Position, len(t.Keys))
	for i, k := range t.Keys {
		p, err := b.PositionFromKey(k)
		if err != nil {
			return nil, fmt.Errorf("position %d: %w", i, err)
		}
		if p.Moves() > 0 && p.LastMoveWon() {
			return nil, fmt.Errorf("position %d: the game is over", i)
		}
		positions[i] = p
	}
	return positions, nil
}
