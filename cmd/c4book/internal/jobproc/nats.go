package jobproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/c4book/c4book/book"
	"github.com/c4book/c4book/config"
	"github.com/c4book/c4book/queue"
)

// StoreDirName is the directory of the embedded server's JetStream data
// inside the book directory, when nats.store-dir is empty.
const StoreDirName = "nats"

// StoreDir returns the JetStream directory of the embedded server:
// nats.store-dir, or the directory StoreDirName inside the book.
func StoreDir(cfg config.Config) string {
	if cfg.NATS.StoreDir != "" {
		return cfg.NATS.StoreDir
	}
	return filepath.Join(cfg.Book.Path, StoreDirName)
}

// natsOptions returns the options of a connection to nats.url, named
// name in the server's monitoring.
func natsOptions(cfg config.Config, name string, log *slog.Logger) queue.Options {
	n := cfg.NATS
	return queue.Options{
		URL: n.URL, Name: name, Creds: n.Creds, NKey: n.NKey, Token: n.Token, User: n.User, Password: n.Password,
		TLSCert: n.TLS.Cert, TLSKey: n.TLS.Key, TLSCA: n.TLS.CA, Logger: log,
	}
}

// Connect connects to the server at nats.url, named name in the server's
// monitoring, logging to log. The error says which settings to check: the
// credentials when the server refused them.
func Connect(ctx context.Context, cfg config.Config, name string, log *slog.Logger) (*queue.Conn, error) {
	conn, err := queue.Connect(ctx, natsOptions(cfg, name, log))
	if err != nil {
		return nil, connectError(cfg, err)
	}
	return conn, nil
}

// serverBackoff paces the attempts of ConnectWaiting. Its lines are
// warnings: the server is not where nats.url says.
var serverBackoff = queue.Backoff{Max: 5 * time.Second, Level: slog.LevelWarn}

// ConnectWaiting is Connect for a worker, which outlives its server: while
// no server answers at nats.url (not started yet, restarting, its machine
// rebooting), it tries again, saying so to wait at the first failure and
// then once a minute (to wait), until ctx is done. Refused credentials
// and TLS failures still fail at once.
func ConnectWaiting(ctx context.Context, cfg config.Config, name string, log, wait *slog.Logger) (*queue.Conn, error) {
	var conn *queue.Conn
	err := serverBackoff.Retry(ctx, wait, "the NATS server (nats.url)", func() error {
		var err error
		conn, err = queue.Connect(ctx, natsOptions(cfg, name, log))
		return err
	})
	switch {
	case err == nil:
		return conn, nil
	case ctx.Err() != nil:
		return nil, err
	}
	return nil, connectError(cfg, err)
}

// connectError explains err, the failure of a first connection to
// nats.url: the keys to set when the server refused the credentials.
func connectError(cfg config.Config, err error) error {
	n := cfg.NATS
	if errors.Is(err, queue.ErrAuth) {
		if n.Token == "" && n.User == "" && n.Creds == "" && n.NKey == "" && n.TLS.Cert == "" {
			return fmt.Errorf("the server at %s needs credentials and none are set: set nats.token (C4BOOK_NATS_TOKEN), or nats.user and nats.password, or nats.creds, or nats.nkey (a worker's or an observer's key file), to what the server expects: %w", n.URL, err)
		}
		if n.NKey != "" {
			return fmt.Errorf("the server at %s refused the key of nats.nkey (%s): is the worker registered (c4book worker list on the coordinator's machine), or was it removed? %w", n.URL, n.NKey, err)
		}
		return fmt.Errorf("the server at %s refused the credentials: check nats.token, nats.user and nats.password, or nats.creds (%s): %w", n.URL, CredentialsSet(n), err)
	}
	return fmt.Errorf("connecting to the NATS server at %s (nats.url): %w", n.URL, err)
}

// CredentialsSet names the credentials configured, for messages:
// "nats.token is set".
func CredentialsSet(n config.NATS) string {
	var set []string
	for _, s := range []struct{ key, value string }{
		{"nats.token", n.Token}, {"nats.user", n.User}, {"nats.password", n.Password},
		{"nats.creds", n.Creds}, {"nats.nkey", n.NKey}, {"nats.tls.cert", n.TLS.Cert},
	} {
		if s.value != "" {
			set = append(set, s.key)
		}
	}
	switch len(set) {
	case 0:
		return "none is set"
	case 1:
		return set[0] + " is set"
	}
	return strings.Join(set, " and ") + " are set"
}

// CheckListenAuth returns an error if the embedded server would listen on
// nats.listen without authentication: a token, a user and password,
// client certificates, or workers registered in the book (registered
// is their number).
func CheckListenAuth(cfg config.Config, registered int) error {
	n := cfg.NATS
	if n.Listen == "" || n.HasAuth() || registered > 0 {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without authentication: workers on other machines must prove who they are. "+
		"Register each worker with its own key (c4book worker add NAME --book %s), "+
		"or set nats.token (C4BOOK_NATS_TOKEN), or nats.user and nats.password (C4BOOK_NATS_USER, C4BOOK_NATS_PASSWORD), "+
		"or client certificates (nats.tls.cert, nats.tls.key and nats.tls.ca)", n.Listen, cfg.Book.Path)
}

// bookHasWorkers returns the number of active workers registered in the
// book at path, 0 if it cannot tell (no book yet).
func bookHasWorkers(path string) int {
	bk, err := book.Open(path, &book.Options{ReadOnly: true, CacheBytes: 1 << 20})
	if err != nil {
		return 0
	}
	defer bk.Close()
	ws, err := bk.ActiveWorkers()
	if err != nil {
		return 0
	}
	return len(ws)
}

// startServer starts the embedded server with JetStream in StoreDir(cfg),
// listening on nats.listen if set, with the credentials and TLS files of
// the configuration. workers, if not nil, turns keys on: the registered
// workers (see queue.ServerOptions.Workers).
func startServer(cfg config.Config, workers []queue.WorkerKey, log *slog.Logger) (*queue.Server, error) {
	if err := CheckListenAuth(cfg, len(workers)); err != nil {
		return nil, err
	}
	n := cfg.NATS
	srv, err := queue.StartServer(queue.ServerOptions{
		StoreDir: StoreDir(cfg), Listen: n.Listen, Monitor: n.Monitor,
		Token: n.Token, User: n.User, Password: n.Password,
		TLSCert: n.TLS.Cert, TLSKey: n.TLS.Key, TLSCA: n.TLS.CA,
		Workers: workers,
		Logger:  log,
	})
	if err != nil {
		return nil, fmt.Errorf("starting the embedded NATS server (store %s): %w", StoreDir(cfg), err)
	}
	return srv, nil
}

// queueBackoff paces the attempts of WaitForTasks: binding is one cheap
// request, and a worker should start soon after its coordinator.
var queueBackoff = queue.Backoff{Max: 2 * time.Second}

// WaitForTasks binds to the workers' task consumer, waiting until a
// coordinator has created it, or the server answers again. It says so to
// log (if not nil) at the first failure and then once a minute.
func WaitForTasks(ctx context.Context, conn *queue.Conn, log *slog.Logger) (*queue.TaskSource, error) {
	var tasks *queue.TaskSource
	what := "a coordinator (c4book coordinator or generate) to set up the task queue on " + conn.ConnectedURL()
	err := queueBackoff.Retry(ctx, log, what, func() error {
		var err error
		tasks, err = conn.Tasks(ctx)
		return err
	})
	return tasks, err
}
