package serve

import (
	"context"
	"errors"
	"fmt"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/solver"
)

// errTimeout marks an answer that needed more solving than
// serve.solve-timeout allows (HTTP 503). Asking again is no cure: the
// position needs the same solving, of which a request gets no more.
var errTimeout = errors.New("solving takes longer than serve.solve-timeout allows")

// errBusy marks an answer that waited serve.solve-timeout for a solver,
// every one being busy (HTTP 503, with Retry-After): asking again in a
// moment may find one free.
var errBusy = errors.New("every solver of this server stayed busy")

// pooledSolver is a solver of the pool with the oracle of the source it
// was last used with. Its table stays warm from one question to the next.
// The solver is made at its first use: a server answering from its book
// alone never allocates the tables.
type pooledSolver struct {
	s   *solver.Solver // nil until first used
	o   *book.Oracle
	src *source // the source o reads, held by the solver; nil before first use
}

// solverPool lends solvers to requests that need one: at most as many
// positions are solved at once as there are solvers; a request waits for
// one until its deadline.
type solverPool struct {
	free       chan *pooledSolver
	board      *solver.Board
	tableBytes int64
}

// newSolverPool returns a pool of n solvers of board b, each with a table
// of tableBytes, made when first needed.
func newSolverPool(b *solver.Board, n int, tableBytes int64) *solverPool {
	p := &solverPool{free: make(chan *pooledSolver, n), board: b, tableBytes: tableBytes}
	for range n {
		p.free <- &pooledSolver{}
	}
	return p
}

// get takes a solver, waiting for one until ctx ends, and points its
// oracle at src.
func (p *solverPool) get(ctx context.Context, src *source) (*pooledSolver, error) {
	var sv *pooledSolver
	select {
	case sv = <-p.free:
	case <-ctx.Done():
		return nil, errBusy
	}
	if sv.s == nil {
		s, err := solver.New(p.board, p.tableBytes)
		if err != nil {
			p.free <- sv
			return nil, fmt.Errorf("solver.tt-size: %w", err)
		}
		sv.s = s
	}
	if sv.src == src {
		return sv, nil
	}
	if err := sv.detach(); err != nil {
		p.free <- sv
		return nil, err
	}
	o, err := src.newOracle()
	if err == nil {
		err = o.Attach(sv.s)
	}
	if err != nil || !src.tryAcquire() {
		if o != nil {
			o.Close()
		}
		p.free <- sv
		if err == nil {
			err = errors.New("the book was closed")
		}
		return nil, err
	}
	// The table's entries stay true: every book of a board holds exact
	// scores, so a newer snapshot does not make them wrong.
	sv.o, sv.src = o, src
	return sv, nil
}

// put gives sv back.
func (p *solverPool) put(sv *pooledSolver) { p.free <- sv }

// detach closes sv's oracle and lets go of its source.
func (sv *pooledSolver) detach() error {
	if sv.src == nil {
		return nil
	}
	sv.s.SetOracle(nil, 0)
	err := sv.o.Close()
	sv.src.release()
	sv.o, sv.src = nil, nil
	return err
}

// close detaches every solver; none may be in use.
func (p *solverPool) close() {
	for {
		select {
		case sv := <-p.free:
			sv.detach()
		default:
			return
		}
	}
}
