package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/c4book/c4book/book"
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
			w, err := changeRegistry(cmd, cfg, registryChange{op: "add", name: name, key: pub, role: role})
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
			w, err := changeRegistry(cmd, cfg, registryChange{op: "remove", name: args[0]})
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
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			bk, err := openBook(cmd, cfg, cfg.Book.Path, bookReadOnly)
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
observer's (read the status, nothing else). scripts/nats-server-keys.conf includes the file
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
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			bk, err := openBook(cmd, cfg, cfg.Book.Path, bookReadOnly)
			if err != nil {
				return err
			}
			keys, err := activeWorkers(bk)
			if err = closeBook(bk, err); err != nil {
				return err
			}
			data := queue.ServerConfUsers(keys)
			if out == "" {
				_, err := a.stdout.Write(data)
				return err
			}
			if err := os.WriteFile(out+".tmp", data, 0o600); err != nil {
				return err
			}
			if err := os.Rename(out+".tmp", out); err != nil {
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
	cmd.Flags().String("book", config.Default().Book.Path, "the book at `PATH` whose jobs the workers serve (book.path)")
	bindKey(cmd.Flags(), "book", "book.path")
}

// Changes of the registry while a job runs. A job holds its book open for
// writing, so no other process may open it: "worker add" and "worker
// remove" then leave the change as a request file in the directory
// requestDir of the book, and the job applies it (applyRegistryRequests,
// every registryPoll), writes the outcome beside it and tells its server.
// Whoever may write in the book's directory may change its workers, as
// whoever may open the book may.
//
//	<book>/worker-requests/<unix ns>.req   "add NAME PUBKEY", "add NAME PUBKEY observer" or "remove NAME"
//	<book>/worker-requests/<unix ns>.taken the request, claimed by the job
//	<book>/worker-requests/<unix ns>.ok    the record as applied: "NUMBER NAME PUBKEY ROLE"
//	<book>/worker-requests/<unix ns>.err   why it was refused
//
// A worker's "add" has no role, as before observers; a job from before
// them refuses an observer's as unreadable rather than register a worker,
// and its answers have no role (the command reads them as a worker's).
//
// The command withdraws a request nobody took in time by removing its
// .req file; the job claims one by renaming it, so one of the two wins.
const requestDir = "worker-requests"

// registryPoll is how often a job looks for requests, and requestWait how
// long the command waits for a job to apply one; shorter in tests.
var (
	registryPoll = 2 * time.Second
	requestWait  = 15 * time.Second
)

// registryChange is one change of the registry.
type registryChange struct {
	op, name, key string
	role          book.Role // of an add: RoleWorker or RoleObserver
}

// changeRegistry applies c to the book of cfg, through its running job if
// one holds it.
func changeRegistry(cmd *cobra.Command, cfg config.Config, c registryChange) (book.Worker, error) {
	mode := bookReadWrite
	if _, err := os.Stat(cfg.Book.Path); c.op == "add" && os.IsNotExist(err) {
		mode = bookCreate // workers registered before the first job
	}
	bk, err := openBook(cmd, cfg, cfg.Book.Path, mode)
	switch {
	case book.IsLocked(err):
		fmt.Fprintf(cmd.ErrOrStderr(), "The book %s is held by a running job: asking the job to %s worker %s.\n", cfg.Book.Path, c.op, c.name)
		return requestChange(cmd.Context(), cfg.Book.Path, c)
	case err != nil:
		return book.Worker{}, err
	}
	w, err := applyChange(bk, c)
	return w, closeBook(bk, err)
}

// applyChange applies c to bk.
func applyChange(bk *book.Book, c registryChange) (book.Worker, error) {
	switch {
	case c.op == "add" && c.role == book.RoleObserver:
		return bk.AddObserver(c.name, c.key)
	case c.op == "add":
		return bk.AddWorker(c.name, c.key)
	}
	return bk.RemoveWorker(c.name)
}

// requestChange leaves c for the job holding the book at path, and waits
// for its outcome.
func requestChange(ctx context.Context, path string, c registryChange) (book.Worker, error) {
	dir := filepath.Join(path, requestDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return book.Worker{}, err
	}
	base := filepath.Join(dir, strconv.FormatInt(time.Now().UnixNano(), 10))
	line := c.op + " " + c.name
	if c.key != "" {
		line += " " + c.key
	}
	if c.role == book.RoleObserver {
		line += " " + string(book.RoleObserver)
	}
	if err := os.WriteFile(base+".tmp", []byte(line+"\n"), 0o600); err != nil {
		return book.Worker{}, err
	}
	if err := os.Rename(base+".tmp", base+".req"); err != nil {
		return book.Worker{}, err
	}
	deadline := time.Now().Add(requestWait)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(base + ".ok"); err == nil {
			os.Remove(base + ".ok")
			f := strings.Fields(string(data))
			if len(f) != 3 && len(f) != 4 {
				return book.Worker{}, fmt.Errorf("the job's answer %q is unreadable", data)
			}
			n, _ := strconv.ParseUint(f[0], 10, 32)
			w := book.Worker{Number: uint32(n), Name: f[1], PublicKey: f[2], Role: book.RoleWorker}
			if len(f) == 4 {
				w.Role = book.Role(f[3])
			}
			return w, nil
		}
		if data, err := os.ReadFile(base + ".err"); err == nil {
			os.Remove(base + ".err")
			return book.Worker{}, errors.New(strings.TrimSpace(string(data)))
		}
		select {
		case <-ctx.Done():
			return book.Worker{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Not taken: withdraw it, unless the job takes it meanwhile.
	if os.Remove(base+".req") == nil {
		return book.Worker{}, fmt.Errorf("the process holding the book %s did not apply the change within %v (is it a job of this version?); nothing changed", path, requestWait)
	}
	return book.Worker{}, fmt.Errorf("the job took the change but did not answer within %v: see its log and c4book worker list", requestWait)
}

// applyRegistryRequests applies the requests left for the job on bk (see
// requestDir) and reports whether the registry changed. If it did,
// changed is called before the outcomes are written: the command that
// asked waits for its outcome, so what changed does before it returns.
func applyRegistryRequests(bk *book.Book, log *slog.Logger, changed func()) bool {
	dir := filepath.Join(bk.Path(), requestDir)
	names, _ := filepath.Glob(filepath.Join(dir, "*.req"))
	slices.Sort(names)
	type outcome struct {
		base string
		w    book.Worker
		err  error
	}
	var outcomes []outcome
	applied := false
	for _, req := range names {
		// Claimed by a rename, so that the command cannot withdraw a
		// request the job is applying.
		base := strings.TrimSuffix(req, ".req")
		if os.Rename(req, base+".taken") != nil {
			continue // withdrawn
		}
		req = base + ".taken"
		data, err := os.ReadFile(req)
		if err != nil {
			os.Remove(req)
			continue
		}
		var w book.Worker
		f := strings.Fields(string(data))
		switch {
		case len(f) == 3 && f[0] == "add" || len(f) == 4 && f[0] == "add" && f[3] == string(book.RoleObserver) || len(f) == 2 && f[0] == "remove":
			c := registryChange{op: f[0], name: f[1], role: book.RoleWorker}
			if len(f) >= 3 {
				c.key = f[2]
			}
			if len(f) == 4 {
				c.role = book.RoleObserver
			}
			w, err = applyChange(bk, c)
			if err == nil {
				applied = true
				log.Info("worker registry changed", "op", c.op, "name", c.name, "role", w.Role, "number", w.Number)
			}
		default:
			err = fmt.Errorf("unreadable request %q", data)
		}
		outcomes = append(outcomes, outcome{base, w, err})
	}
	if applied && changed != nil {
		changed()
	}
	for _, o := range outcomes {
		if o.err != nil {
			answer(o.base+".err", []byte(o.err.Error()+"\n"))
		} else {
			answer(o.base+".ok", fmt.Appendf(nil, "%d %s %s %s\n", o.w.Number, o.w.Name, o.w.PublicKey, o.w.Role))
		}
		os.Remove(o.base + ".taken")
	}
	return applied
}

// answer writes the job's answer to a request at path whole: written
// beside it and renamed, since the command reads it as soon as it is
// there.
func answer(path string, data []byte) {
	if os.WriteFile(path+".tmp", data, 0o600) == nil {
		_ = os.Rename(path+".tmp", path)
	}
}

// activeWorkers returns the keys of the active workers and observers of
// bk, each with its role, but those of the workers quarantined in the job
// of the given ids: a job's server refuses the key of a worker it caught
// lying, which would otherwise go on taking its tasks.
func activeWorkers(bk *book.Book, jobs ...string) ([]queue.WorkerKey, error) {
	ws, err := bk.Workers()
	if err != nil {
		return nil, err
	}
	quarantined := map[string]bool{}
	for _, id := range jobs {
		j, ok, err := bk.Job(id)
		if err != nil {
			return nil, err
		}
		if ok {
			for _, name := range j.Quarantined {
				quarantined[name] = true
			}
		}
	}
	keys := []queue.WorkerKey{}
	for _, w := range ws {
		if w.Active() && !quarantined[w.Name] {
			keys = append(keys, queue.WorkerKey{Name: w.Name, PublicKey: w.PublicKey, Role: queue.Role(w.Role)})
		}
	}
	return keys, nil
}

// followRegistry applies the registry requests left for the job, every
// registryPoll until ctx is done. After a change, and before the command
// that asked for it hears back, it gives the server the active workers
// and observers, so that the command returns once an added key is
// accepted and a removed one refused, and snap takes a snapshot of the
// book: readers of the book (c4book worker list) read its snapshots while
// the job holds it, and would otherwise miss the change until the next
// one.
func followRegistry(ctx context.Context, bk *book.Book, job string, srv *queue.Server, snap *snapshotter, log *slog.Logger) {
	changed := func() {
		keys, err := activeWorkers(bk, job)
		if err == nil {
			err = srv.SetWorkers(keys)
		}
		if err != nil {
			log.Error("worker registry: the server keeps its former workers", "error", err)
		}
		snap.take()
	}
	tick := time.NewTicker(registryPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		applyRegistryRequests(bk, log, changed)
	}
}
