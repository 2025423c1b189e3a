package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/cmd/c4book/internal/jobproc"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/queue"
)

const workerAddLong = `Make the key of a new worker machine and register it in the book: the
coordinator (or generate) of a job on this book, listening with --listen,
then accepts that worker by its key alone, and lets it do only what a
worker does (see docs/cluster.md, "Worker keys").

The key file (--out, default NAME.nkey) holds the private half of a NATS
nkey; it is written with mode 0600 and never overwritten. Copy it to the
worker's machine only, and run the worker there with
--nkey FILE (nats.nkey). The book records NAME and the public half.

NAME is 1 to 64 letters, digits, '-' or '_', and is never given twice in
a book, even after "worker remove". If a job is running on the book, the
job applies the change within seconds, without stopping.

--observer makes an observer's key instead: it may only read the
cluster's status (c4book status --nkey FILE, with --watch or --json),
and the server refuses it everything else. Give it to whoever watches
the cluster; "worker list" shows it, "worker remove" removes it, as a
worker's.`

const workerRemoveLong = `Remove a registered worker or observer: the jobs on the book refuse its
key from then on. A job running on the book applies it within seconds:
the key's connections are closed and it is refused when it tries to
connect again; the job goes on with the others. The book keeps the record
(the name is never given again).`

// newWorkerAddCommand builds "c4book worker add".
func newWorkerAddCommand(a *app) *cobra.Command {
	var out string
	var observer bool
	cmd := &cobra.Command{
		Use:   "add NAME [--observer] [--book PATH] [--out FILE]",
		Short: "Make a worker's (or an observer's) key file and register it in the book",
		Long:  workerAddLong,
		Example: "  c4book worker add lab-3 --book depth12.db --out lab-3.nkey\n  scp lab-3.nkey lab-3:/etc/c4book/worker.nkey\n" +
			"  c4book worker add ops --observer --book depth12.db && c4book status --nats nats://coordinator:4222 --nkey ops.nkey",
		Args: checkArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			name := args[0]
			if err := book.ValidWorkerName(name); err != nil {
				return newUsageError(cmd, err)
			}
			if out == "" {
				out = name + ".nkey"
			}
			role := book.RoleWorker
			if observer {
				role = book.RoleObserver
			}
			pub, err := queue.WriteKey(out, name, queue.Role(role))
			if err != nil {
				return err
			}
			w, err := changeRegistry(cmd, cfg, book.RegistryChange{Op: book.RegistryAdd, Name: name, PublicKey: pub, Role: role})
			if err != nil {
				os.Remove(out) // no use without its registration
				return err
			}
			fmt.Fprintf(a.stdout, "%s %s (number %d) registered in %s\n", w.Role, w.Name, w.Number, cfg.Book.Path)
			if w.Role == book.RoleObserver {
				fmt.Fprintf(a.stdout, "key file: %s (mode 0600; it reads the cluster's status and nothing else)\npublic key: %s\n", out, w.PublicKey)
				fmt.Fprintf(a.stdout, "to watch the cluster: c4book status --nats URL --nkey %s --watch\n", filepath.Base(out))
				return nil
			}
			fmt.Fprintf(a.stdout, "key file: %s (mode 0600; copy it to the worker's machine only)\npublic key: %s\n", out, w.PublicKey)
			fmt.Fprintf(a.stdout, "on that machine: c4book worker --nats URL --nkey %s\n", filepath.Base(out))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the key to `FILE` (default NAME.nkey); never overwritten")
	cmd.Flags().BoolVar(&observer, "observer", false, "make an observer's key, which may only read the cluster's status (c4book status --nkey)")
	addRegistryFlags(cmd)
	return cmd
}

// newWorkerRemoveCommand builds "c4book worker remove".
func newWorkerRemoveCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remove NAME [--book PATH]",
		Short: "Remove a registered worker or observer: its key is refused from then on",
		Long:  workerRemoveLong,
		Args:  checkArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			w, err := changeRegistry(cmd, cfg, book.RegistryChange{Op: book.RegistryRemove, Name: args[0]})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s %s (number %d) removed from %s\n", w.Role, w.Name, w.Number, cfg.Book.Path)
			return nil
		},
	}
	addRegistryFlags(cmd)
	return cmd
}

// newWorkerListCommand builds "c4book worker list".
func newWorkerListCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list [--book PATH]",
		Short: "List the workers and observers registered in the book",
		Args:  checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, bk, err := readBook(cmd)
			if err != nil {
				return err
			}
			ws, err := bk.Workers()
			if err != nil {
				return closeBook(bk, err)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NUMBER\tNAME\tROLE\tSTATE\tADDED\tPUBLIC KEY")
			for _, w := range ws {
				state := "active"
				if !w.Active() {
					state = "removed " + w.Removed.Local().Format(time.DateTime)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", w.Number, w.Name, w.Role, state, w.Added.Local().Format(time.DateTime), w.PublicKey)
			}
			return closeBook(bk, tw.Flush())
		},
	}
	addRegistryFlags(cmd)
	return cmd
}

const workerConfLong = `Write the users of an external nats-server that give the workers and
observers registered in the book the rights they have on the
coordinator's embedded server, and no more: the coordinator's user and
password (from nats-server's environment: C4BOOK_NATS_USER,
C4BOOK_NATS_PASSWORD) with every right, each active worker by its key
with a worker's permissions, and each active observer with an
observer's (read the status, nothing else). scripts/deploy/nats-server-keys.conf includes the file
c4book-workers.conf beside it. After "worker add" or "remove", write it
again and reload the server (nats-server --signal reload, or SIGHUP).

Without --out it writes to standard output; with --out the file is
replaced whole, with mode 0600.`

// newWorkerConfCommand builds "c4book worker conf".
func newWorkerConfCommand(a *app) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:     "conf [--book PATH] [--out FILE]",
		Short:   "Write the users of an external nats-server for the registered workers and observers",
		Long:    workerConfLong,
		Example: "  c4book worker conf --book depth12.db --out /etc/c4book/c4book-workers.conf && nats-server --signal reload",
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, bk, err := readBook(cmd)
			if err != nil {
				return err
			}
			keys, err := jobproc.WorkerKeys(bk)
			if err = closeBook(bk, err); err != nil {
				return err
			}
			data := queue.ServerConfUsers(keys)
			if out == "" {
				_, err := a.stdout.Write(data)
				return err
			}
			if err := writeFileAtomic(out, 0o600, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
				return err
			}
			observers := 0
			for _, k := range keys {
				if k.Role == queue.RoleObserver {
					observers++
				}
			}
			fmt.Fprintf(a.stderr, "%s: the coordinator, %d workers and %d observers; reload nats-server to apply it.\n", out, len(keys)-observers, observers)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write to `FILE` (replaced whole, mode 0600) instead of standard output")
	addRegistryFlags(cmd)
	return cmd
}

// addRegistryFlags adds --book to a command of the registry.
func addRegistryFlags(cmd *cobra.Command) {
	keyFlag(cmd.Flags(), "book", "book.path", config.Default().Book.Path, "the book at `PATH` whose jobs the workers serve")
}

// registryPoll is how often a job looks for registry requests (see
// book.RequestDir), and requestWait how long the command waits for a job
// to apply one; shorter in tests.
var (
	registryPoll = jobproc.DefaultRegistryPoll
	requestWait  = book.DefaultRequestWait
)

// changeRegistry applies c to the book of cfg, through its running job if
// one holds it.
func changeRegistry(cmd *cobra.Command, cfg config.Config, c book.RegistryChange) (book.Worker, error) {
	mode := bookReadWrite
	if _, err := os.Stat(cfg.Book.Path); c.Op == book.RegistryAdd && os.IsNotExist(err) {
		mode = bookCreate // workers registered before the first job
	}
	bk, err := openBook(cmd, cfg, cfg.Book.Path, mode)
	switch {
	case book.IsLocked(err) && !book.TakesRequests(cfg.Book.Path):
		return book.Worker{}, fmt.Errorf("%w; that job takes no changes of its workers: a job that does not admit remote workers "+
			"(a plain generate, without --listen) runs its workers in its own process, which need no key. "+
			"Stop it (Ctrl-C; running it again resumes) and %s the worker then, or run the job with --listen to admit remote workers", err, c.Op)
	case book.IsLocked(err):
		fmt.Fprintf(cmd.ErrOrStderr(), "The book %s is held by a running job: asking the job to %s worker %s.\n", cfg.Book.Path, c.Op, c.Name)
		return book.RequestChange(cmd.Context(), cfg.Book.Path, c, requestWait)
	case err != nil:
		return book.Worker{}, err
	}
	w, err := bk.ApplyChange(c)
	return w, closeBook(bk, err)
}
