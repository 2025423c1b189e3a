package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
)

const bookRevokeLong = `Take the results of a worker found wrong or lying out of the book: every
entry it solved (each solved entry records the registered worker that
solved it), and every derived entry whose score may depend on one of them
(all derived entries shallower than its deepest entry, except those scored
by the rules alone). The jobs of the book that held any are marked: the
next run of the same generate or coordinator command makes the job's plan
again, solves the removed positions again and derives the rest, and the
book is then exact again. The worker is quarantined in every job of the
book, so its results still in a queue are ignored; "c4book worker remove"
also refuses its key.

NAME is a registered worker (c4book worker list), active or removed.
Entries solved by workers without a key (a shared token, no
authentication, a job's own local worker) record no worker and cannot be
revoked by name: --unkeyed revokes all of them at once (results a holder
of the token forged among them). The book
must not be in use by a job: stop the job first. Interrupted, revoke can
be run again: it finishes what it started.`

// newBookRevokeCommand builds "c4book book revoke".
func newBookRevokeCommand(a *app) *cobra.Command {
	var name string
	var unkeyed bool
	cmd := &cobra.Command{
		Use:     "revoke --worker NAME | --unkeyed [--book PATH]",
		Short:   "Remove a worker's results, and the scores derived from them, so that the job solves them again",
		Long:    bookRevokeLong,
		Example: "  c4book book revoke --worker lab-3 --book depth12.db\n  c4book generate --depth 12 --book depth12.db",
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			switch {
			case name != "" && unkeyed:
				return newUsageError(cmd, errors.New("--worker and --unkeyed: one at a time"))
			case name == "" && !unkeyed:
				return newUsageError(cmd, errors.New("--worker NAME or --unkeyed is required: the registered worker whose results to remove (c4book worker list), or all results without a key"))
			case !unkeyed:
				if err := book.ValidWorkerName(name); err != nil {
					return newUsageError(cmd, fmt.Errorf("--worker: %w", err))
				}
			}
			path := bookPath(cfg)
			bk, err := openBook(cmd, cfg, path, bookReadWrite)
			if book.IsLocked(err) {
				return fmt.Errorf("%w; a job (generate or coordinator) running on it would go on storing results: stop the job, then revoke", err)
			}
			if err != nil {
				return err
			}
			revoke := func() (book.RevokeReport, error) { return bk.RevokeWorker(name) }
			if unkeyed {
				revoke = bk.RevokeUnkeyed
			}
			r, err := revoke()
			if err != nil {
				return closeBook(bk, err)
			}
			printRevoke(a.stdout, path, r)
			return closeBook(bk, nil)
		},
	}
	cmd.Flags().StringVar(&name, "worker", "", "the registered worker `NAME` whose results to remove")
	cmd.Flags().BoolVar(&unkeyed, "unkeyed", false, "remove every result solved without a key (no registered worker)")
	return cmd
}

// printRevoke writes what a revocation did.
func printRevoke(w io.Writer, path string, r book.RevokeReport) {
	solved, derived := r.Total()
	who := fmt.Sprintf("worker %s (number %d)", r.Worker.Name, r.Worker.Number)
	if r.Unkeyed {
		who = "the workers without a key"
	}
	if solved == 0 {
		fmt.Fprintf(w, "The book %s holds no entry solved by %s: nothing removed.\n", path, who)
		return
	}
	if r.Unkeyed {
		fmt.Fprintf(w, "Results without a key revoked in %s:\n", path)
	} else {
		fmt.Fprintf(w, "Worker %s (number %d) revoked in %s:\n", r.Worker.Name, r.Worker.Number, path)
	}
	fmt.Fprintf(w, "  removed %s entries it solved (%s)\n", human.Count(solved), depthSpan(r.Solved))
	if derived > 0 {
		fmt.Fprintf(w, "  removed %s derived entries that may depend on them (%s)\n", human.Count(derived), depthSpan(r.Derived))
	}
	if len(r.Jobs) > 0 {
		fmt.Fprintf(w, "  jobs to run again: %s\n", strings.Join(r.Jobs, ", "))
		fmt.Fprintln(w, "Run each again (the same generate or coordinator command): it solves the removed positions and derives the rest.")
	} else {
		fmt.Fprintln(w, "No job of the book holds these positions: generate them again with a job that does.")
	}
	if !r.Unkeyed && r.Worker.Active() {
		fmt.Fprintf(w, "Worker %s is still registered: c4book worker remove %s refuses its key.\n", r.Worker.Name, r.Worker.Name)
	}
}

// depthSpan describes the depths with a count: "depth 8", "depths 0..7".
func depthSpan(byDepth []int64) string {
	lo, hi := -1, -1
	for d, n := range byDepth {
		if n > 0 {
			if lo < 0 {
				lo = d
			}
			hi = d
		}
	}
	if lo == hi {
		return fmt.Sprintf("depth %d", lo)
	}
	return fmt.Sprintf("depths %d..%d", lo, hi)
}
