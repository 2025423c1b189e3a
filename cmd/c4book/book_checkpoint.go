package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/cmd/c4book/internal/ctxio"
	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/coordinator"
)

const bookCheckpointLong = `Write the scores of a job's solved leaves to FILE, small enough to carry
a job under way to another machine, where "c4book book restore" puts them
in a new book and the job goes on from there.

The job is the one of --depth and --root (the flags given to generate or
coordinator); the book holds its plan until it is done. The file holds
one byte a leaf of the plan, in the order the job solves them, and names
the leaves by a digest of the plan rather than by their keys: about 23 MB
for the depth-14 job's 23,192,137 leaves, 3 to 5 MB once compressed (xz,
zstd). Its format: docs/format.md, "Checkpoints".

--solved-only leaves out the scores a restore put in the book: the
checkpoint of one more session of a job carried from machine to machine,
restored after the ones before it (restores add up).

Like the other commands that read the book, it reads the newest snapshot
while a job runs: a checkpoint taken then holds the leaves solved up to
the snapshot.`

const bookCheckpointExample = `  c4book book checkpoint --depth 14 --book 7x6.db d14.leaves && xz -9 d14.leaves
  c4book book checkpoint --depth 12 --root 3344 --book part.db part.leaves
  c4book book checkpoint --depth 14 --solved-only --book 7x6.db d14-2.leaves`

const bookRestoreLong = `Put the scores of a checkpoint ("c4book book checkpoint") into the book,
as imported entries, and plan the checkpoint's job in it: the job run on
the book ("c4book generate" or "coordinator" with the same --depth and
--root) then solves only the leaves the checkpoint does not hold.

The plan made here must be the checkpoint's, which the file's plan digest
checks: restore into a new book (--create makes it), or into one whose
plan of the job was made before any of its leaves were solved. The board
is --width and --height (board.width, board.height), the standard 7x6 by
default, and must be the file's. A score the book holds otherwise than
the file is an error, and nothing is written. Planning takes a minute at
depth 14, with the plan's disk (1.3 GB).`

const bookRestoreExample = `  xz -dc d14.leaves.xz | c4book book restore --create --book 7x6.db -
  c4book coordinator --depth 14 --book 7x6.db --listen 0.0.0.0:4222`

// newBookCheckpointCommand builds "c4book book checkpoint".
func newBookCheckpointCommand(a *app) *cobra.Command {
	var root string
	var depth int
	var solvedOnly bool
	cmd := &cobra.Command{
		Use:     "checkpoint --depth D [--root MOVES] [--solved-only] [--book PATH] FILE",
		Short:   "Write the scores of a job's solved leaves, to carry it to another machine",
		Long:    bookCheckpointLong,
		Example: bookCheckpointExample,
		Args:    checkArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("depth") {
				return newUsageError(cmd, fmt.Errorf("--depth is needed: the depth of the job to checkpoint"))
			}
			_, bk, err := readBook(cmd)
			if err != nil {
				return err
			}
			spec := coordinator.Spec{Board: bk.Board(), Root: root, Depth: depth, TaskSize: 1}
			if _, err := spec.Validate(); err != nil {
				return closeBook(bk, err)
			}
			var st coordinator.CheckpointStats
			start := time.Now()
			err = writeFileAtomic(args[0], 0o644, func(w io.Writer) error {
				st, err = coordinator.SaveCheckpoint(cmd.Context(), spec, bk,
					filepath.Join(coordinator.PlansDir(bk.Path()), spec.ID()), w, solvedOnly)
				return err
			})
			if err == nil {
				fmt.Fprintf(a.stdout, "Job %s: %s of %s leaves solved (%.1f%%), written to %s in %s.\n", spec.ID(),
					human.Count(st.Held), human.Count(st.Leaves), percent(st.Held, st.Leaves), args[0], time.Since(start).Round(time.Second))
			}
			if err != nil {
				err = interruptedOr(cmd.Context(), err)
			}
			return closeBook(bk, err)
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "the job's root, `MOVES` (default: the empty board)")
	cmd.Flags().IntVar(&depth, "depth", 0, "the job's depth `D`")
	cmd.Flags().BoolVar(&solvedOnly, "solved-only", false, "write only the scores solved in this book, not those a restore put in it")
	return cmd
}

// newBookRestoreCommand builds "c4book book restore".
func newBookRestoreCommand(a *app) *cobra.Command {
	var create bool
	cmd := &cobra.Command{
		Use:     "restore [--create] [--book PATH] FILE",
		Short:   "Put a checkpoint's scores in a book, for its job to go on",
		Long:    bookRestoreLong,
		Example: bookRestoreExample,
		Args:    checkArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			var in io.Reader = a.stdin
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			cr := ctxio.NewReader(cmd.Context(), in)
			defer cr.Close()
			mode := bookReadWrite
			if create {
				mode = bookCreate
			}
			bk, err := openBook(cmd, cfg, bookPath(cfg), mode)
			if err != nil {
				return err
			}
			start := time.Now()
			fmt.Fprintf(a.stderr, "Planning the checkpoint's job in %s and restoring its scores ...\n", bk.Path())
			spec, st, err := coordinator.RestoreCheckpoint(cmd.Context(), bk.Board(), bk, coordinator.PlansDir(bk.Path()),
				bufio.NewReaderSize(cr, 1<<16), nil)
			if err == nil {
				fmt.Fprintf(a.stdout, "Job %s: %s of %s leaves restored (%.1f%%; %s written) in %s: run the job (--depth %d%s) to solve the rest.\n",
					spec.ID(), human.Count(st.Held), human.Count(st.Leaves), percent(st.Held, st.Leaves), human.Count(st.Written),
					time.Since(start).Round(time.Second), spec.Depth, rootFlag(spec.Root))
			} else {
				err = fmt.Errorf("%s: %w", args[0], err)
			}
			if err != nil {
				err = interruptedOr(cmd.Context(), err)
			}
			return closeBook(bk, err)
		},
	}
	cmd.Flags().BoolVar(&create, "create", false, "make the book if it does not exist, for the board of --width and --height")
	return cmd
}

// percent returns part of whole in percent, 0 for an empty whole.
func percent(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// rootFlag returns " --root MOVES" for a root, "" for the empty board.
func rootFlag(root string) string {
	if root == "" {
		return ""
	}
	return " --root " + root
}
