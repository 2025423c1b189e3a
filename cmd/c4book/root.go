package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/config"
)

// Run runs the c4book command line args (without the program name) with
// the given standard streams. It returns when the command is done or soon
// after ctx is cancelled (errInterrupted). Errors are returned, not
// printed; help and results go to stdout, diagnostics to stderr.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	root := newRootCommand(&app{stdin: stdin, stdout: stdout, stderr: stderr})
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// app holds what the commands of one Run share.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// errInterrupted is returned by a command stopped by the cancellation of
// its context (Ctrl-C).
var errInterrupted = errors.New("interrupted")

// interruptedOr returns errInterrupted if ctx is done, else err: a solve
// that failed without an interruption failed for a reason of its own
// (solver.ErrInconsistent), which the user must see.
func interruptedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// usageError is a mistake in the command line (an unknown flag or command,
// a missing argument): the exit status is 2 and the message says where to
// find the usage.
type usageError struct {
	cmd string // the command path: "c4book solve"
	err error
}

func (e *usageError) Error() string {
	return fmt.Sprintf("%v\nRun '%s --help' for usage.", e.err, e.cmd)
}

func (e *usageError) Unwrap() error { return e.err }

// newUsageError wraps err as a usage error of cmd.
func newUsageError(cmd *cobra.Command, err error) error {
	return &usageError{cmd: cmd.CommandPath(), err: err}
}

// checkArgs makes the errors of an argument validator usage errors.
func checkArgs(valid cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := valid(cmd, args); err != nil {
			return newUsageError(cmd, err)
		}
		return nil
	}
}

// exitCode returns the exit status for the error Run returned: 0 for nil,
// 2 for a usage error, 130 after an interruption, 1 otherwise.
func exitCode(err error) int {
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		return 2
	case errors.Is(err, errInterrupted):
		return 130
	}
	return 1
}

const rootLong = `c4book builds exact Connect 4 opening books.

A coordinator enumerates every position of the board up to a chosen depth,
workers solve them with an exact alpha-beta solver, and the scores are
stored in a Pebble key-value book. The same binary solves single positions
and benchmarks the solver.

Positions are move strings, one 1-based column digit per move from the
empty board ("4453"). Scores follow Pascal Pons' convention: 0 is a draw;
a positive score means the player to move wins, and is W*H/2 + 1 minus the
number of stones the winner has played when the four is made (18 is the
fastest win on 7x6); a negative score is a loss, mirrored.

Settings come from, in increasing priority: defaults, the config file
(c4book.yaml in the current directory, or --config FILE), C4BOOK_*
environment variables (solver.tt-size is C4BOOK_SOLVER_TT_SIZE) and flags.`

// newRootCommand builds the c4book command and its subcommands.
func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:           "c4book",
		Short:         "Exact Connect 4 opening books",
		Long:          rootLong,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				err := fmt.Errorf("unknown command %q", args[0])
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					err = fmt.Errorf("%w (did you mean %s?)", err, strings.Join(s, " or "))
				}
				return newUsageError(cmd, err)
			}
			return cmd.Help()
		},
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(newUsageError)
	root.SuggestionsMinimumDistance = 2

	def := config.Default()
	pf := root.PersistentFlags()
	pf.String("config", "", "config `FILE` (default: "+config.DefaultFile+" in the current directory, if present)")
	keyFlag(pf, "width", "board.width", def.Board.Width, "columns of the board")
	keyFlag(pf, "height", "board.height", def.Board.Height, "rows of the board")
	pf.String("log-format", def.Log.Format, "`FORMAT` of the log lines on standard error: "+strings.Join(config.LogFormats, " or ")+" (log.format)")
	bindKey(pf, "log-format", "log.format")
	pf.String("log-level", def.Log.Level, "least `LEVEL` of the messages logged: "+strings.Join(config.LogLevels, ", ")+" (log.level)")
	bindKey(pf, "log-level", "log.level")

	root.AddCommand(newSolveCommand(a), newBenchCommand(a), newBookCommand(a))
	root.AddCommand(newGenerateCommand(a), newCoordinatorCommand(a), newWorkerCommand(a), newStatusCommand(a), newEstimateCommand(a))
	root.AddCommand(newServeCommand(a), newVersionCommand(a))
	return root
}
