package queue

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// Options says how to connect to a NATS server.
type Options struct {
	// URL is the server, or servers separated by commas: "nats://host:4222",
	// "tls://host:4222". Credentials may be in the URL
	// ("nats://token@host:4222").
	URL string
	// Name names the client in the server's monitoring ("c4book worker
	// host-3"). The default value is "c4book".
	Name string
	// Creds is a credentials file (JWT and NKey seed), nats.creds.
	Creds string
	// NKey is a worker key file (WriteWorkerKey), nats.nkey: the worker
	// signs the server's challenge with it, and its replies come on its
	// own inbox (WorkerInbox), which is all its permissions let it read.
	NKey string
	// Token is an authentication token, nats.token.
	Token string
	// User and Password authenticate by name, nats.user and nats.password.
	User, Password string
	// TLSCert and TLSKey are a client certificate and its key (PEM), for
	// servers that verify clients. TLSCA is the authority to trust for the
	// server's certificate; the default is the system's roots.
	TLSCert, TLSKey, TLSCA string
	// ReconnectWait is the pause between reconnection attempts after the
	// connection is lost. A lost connection is retried forever. The default
	// value is 2 seconds.
	ReconnectWait time.Duration
	// Logger receives disconnections (and, once a minute while the
	// connection stays lost, that it still is), reconnections and
	// asynchronous errors (slow consumers). The default value (nil)
	// discards them.
	Logger *slog.Logger

	// downEvery is how often a lost connection is said to be still lost:
	// defaultDownEvery, shorter in tests.
	downEvery time.Duration
}

// Defaults of Options.
const (
	defaultName          = "c4book"
	defaultReconnectWait = 2 * time.Second
	defaultConnectWait   = 10 * time.Second // Connect without a ctx deadline
	defaultDownEvery     = time.Minute      // "still disconnected" lines
	drainTimeout         = 30 * time.Second // Close waits this long for in-flight messages

	// asyncMaxPending caps the jetstream client's async publishes; the
	// publishers of this package keep fewer in flight, so the client never
	// stalls them.
	asyncMaxPending = 4096
	// asyncAckTimeout fails an async publish whose ack never comes (a
	// connection lost for good), instead of waiting forever.
	asyncAckTimeout = 30 * time.Second
)

// Conn is a connection to NATS with JetStream. It is safe for concurrent
// use. Close it when done.
type Conn struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	log    *slog.Logger
	signer nkeys.KeyPair // the worker key results are signed with, or nil (signature.go)

	// closed is done once the connection is closed (by Close, or by
	// nats.go giving up on it), by markClosed: what waits on the
	// connection, a pull for one, ends with it.
	closed     context.Context
	markClosed context.CancelFunc

	// link is done once the connection in use is lost; each disconnection
	// ends it and starts the next (newLink). A request in flight then is
	// never answered (its reply went to the lost connection, or died with
	// the server), and failOnLoss ends the wait for it, as nats.go does
	// for asynchronous publishes.
	linkMu   sync.Mutex
	link     context.Context
	loseLink context.CancelFunc

	// workerTTL is the TTL of worker statuses: WorkerStatusTTL, shorter in
	// tests.
	workerTTL time.Duration

	mu      sync.Mutex
	streams map[string]jetstream.Stream // bound streams, by name
	kv      jetstream.KeyValue          // the status bucket, once bound

	downMu    sync.Mutex
	downSince time.Time // when the connection was lost; zero while connected
	downWatch bool      // sayDown runs

	refusedMu sync.Mutex
	refused   chan struct{} // closed at the server's next permission error, then replaced
	refusal   error         // the latest permission error
}

// Connect connects to the server at o.URL. A lost connection is retried
// forever, but the first connection is not: an unreachable server, a TLS
// failure or refused credentials fail at once, the first with an error
// wrapping ErrUnreachable (Transient: a caller that waits for its server
// calls Connect again, see Backoff.Retry), the last with an error wrapping
// ErrAuth. ctx bounds the wait for the first connection (10 seconds
// without a deadline).
func Connect(ctx context.Context, o Options) (*Conn, error) {
	if o.URL == "" {
		return nil, fmt.Errorf("%w: connect: no URL (nats.url)", ErrInvalidOptions)
	}
	return connect(ctx, o)
}

// connect connects with o and any extra nats options (an in-process
// server).
func connect(ctx context.Context, o Options, extra ...nats.Option) (*Conn, error) {
	c := &Conn{log: o.Logger, streams: map[string]jetstream.Stream{}, workerTTL: WorkerStatusTTL,
		refused: make(chan struct{})}
	c.closed, c.markClosed = context.WithCancel(context.Background())
	c.link, c.loseLink = context.WithCancel(context.Background())
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	opts, err := c.natsOptions(ctx, o)
	if err != nil {
		return nil, err
	}
	opts = append(opts, extra...)

	type dialed struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan dialed, 1)
	go func() {
		nc, err := nats.Connect(o.URL, opts...)
		done <- dialed{nc, err}
	}()
	var d dialed
	select {
	case d = <-done:
	case <-ctx.Done():
		go func() { // close the connection if it comes after all
			if d := <-done; d.nc != nil {
				d.nc.Close()
			}
		}()
		return nil, fmt.Errorf("queue: connect to %s: %w", redact(o.URL), ctx.Err())
	}
	if d.err != nil {
		return nil, connectError(o, d.err)
	}
	c.nc = d.nc
	c.js, err = jetstream.New(c.nc,
		jetstream.WithPublishAsyncMaxPending(asyncMaxPending),
		jetstream.WithPublishAsyncTimeout(asyncAckTimeout))
	if err != nil {
		c.nc.Close()
		return nil, fmt.Errorf("queue: jetstream: %w", err)
	}
	return c, nil
}

// natsOptions translates o, wiring the connection events to c's logger.
func (c *Conn) natsOptions(ctx context.Context, o Options) ([]nats.Option, error) {
	name := o.Name
	if name == "" {
		name = defaultName
	}
	wait := o.ReconnectWait
	if wait <= 0 {
		wait = defaultReconnectWait
	}
	downEvery := o.downEvery
	if downEvery <= 0 {
		downEvery = defaultDownEvery
	}
	timeout := defaultConnectWait
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	opts := []nats.Option{
		nats.Name(name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(wait),
		// The first connection fails fast: a wrong credential or address
		// is an error at once, not an endless retry.
		nats.RetryOnFailedConnect(false),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			c.newLink()
			c.log.Warn("nats: disconnected", "client", name, "err", err)
			c.lost(name, wait, downEvery)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			c.found()
			// At the level of the disconnection it ends: whoever was
			// told the one (a command logs a connection's warnings
			// only) is told the other.
			c.log.Warn("nats: reconnected", "client", name, "url", nc.ConnectedUrlRedacted(), "reconnects", nc.Stats().Reconnects)
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			if err := nc.LastError(); err != nil {
				c.log.Warn("nats: connection closed", "client", name, "err", err)
			} else {
				c.log.Debug("nats: connection closed", "client", name)
			}
			c.markClosed()
		}),
		nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			c.log.Warn("nats: asynchronous error", "client", name, "subject", subject, "err", err)
			if errors.Is(err, nats.ErrPermissionViolation) {
				c.refuse(err)
			}
		}),
	}
	switch {
	case o.NKey != "":
		k, err := ReadKey(o.NKey)
		if err != nil {
			return nil, fmt.Errorf("nats.nkey: %w", err)
		}
		nk, err := nats.NkeyOptionFromSeed(o.NKey)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrKeyFile, o.NKey, err)
		}
		if c.signer, err = loadSigner(o.NKey); err != nil {
			return nil, err
		}
		opts = append(opts, nk, nats.CustomInboxPrefix(WorkerInbox(k.Name)))
	case o.Creds != "":
		if err := checkCreds(o.Creds); err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserCredentials(o.Creds))
	case o.Token != "":
		opts = append(opts, nats.Token(o.Token))
	case o.User != "":
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, fmt.Errorf("%w: connect: nats.tls.cert and nats.tls.key go together", ErrInvalidOptions)
	}
	if err := checkTLSFiles(o.TLSCert, o.TLSKey, o.TLSCA); err != nil {
		return nil, err
	}
	if o.TLSCert != "" {
		opts = append(opts, nats.ClientCert(o.TLSCert, o.TLSKey))
	}
	if o.TLSCA != "" {
		opts = append(opts, nats.RootCAs(o.TLSCA))
	}
	return opts, nil
}

// refuse records a permission error of the server and ends the reads
// that fail on one (failOnRefusal).
func (c *Conn) refuse(err error) {
	c.refusedMu.Lock()
	defer c.refusedMu.Unlock()
	c.refusal = err
	close(c.refused)
	c.refused = make(chan struct{})
}

// failOnRefusal returns ctx, ended with an error wrapping ErrForbidden
// (context.Cause, see refusedErr) as soon as the server refuses a request
// of the connection; stop releases it. The server says so only in an
// asynchronous error, and the request itself would wait for its timeout
// for an answer that never comes. Any refusal ends it, the request of
// another goroutine too: it is for reads on connections whose requests
// are all allowed but for a lack of rights of the whole credential (c4book
// status with a worker's key).
func (c *Conn) failOnRefusal(ctx context.Context) (_ context.Context, stop func()) {
	c.refusedMu.Lock()
	refused := c.refused
	c.refusedMu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-refused:
			c.refusedMu.Lock()
			err := c.refusal
			c.refusedMu.Unlock()
			cancel(fmt.Errorf("%w: %w", ErrForbidden, err))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

// refusedErr returns, for the error err of a read under ctx, the refusal
// that ended ctx (failOnRefusal) if one did, and err otherwise.
func refusedErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrForbidden) {
		return fmt.Errorf("queue: %w", cause)
	}
	return err
}

// newLink ends the link the connection has lost and starts the next: the
// requests in flight on the lost one fail (failOnLoss). nats.go calls the
// disconnect handler a little after the loss: a request buffered in
// between, which the server will answer, fails too, harmlessly for the
// callers of failOnLoss (a publish made again with its message id, an
// ack).
func (c *Conn) newLink() {
	c.linkMu.Lock()
	defer c.linkMu.Unlock()
	c.loseLink()
	c.link, c.loseLink = context.WithCancel(context.Background())
}

// failOnLoss returns ctx, ended with nats.ErrDisconnected (context.Cause,
// see lossErr) as soon as the connection is lost; release releases it. It
// is for requests whose reply cannot come once the connection that sent
// them is gone: sent again, they are answered.
func (c *Conn) failOnLoss(ctx context.Context) (_ context.Context, release func()) {
	c.linkMu.Lock()
	link := c.link
	c.linkMu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(link, func() { cancel(nats.ErrDisconnected) })
	return ctx, func() { stop(); cancel(nil) }
}

// lossErr returns, for the error err of a request under ctx, an error
// wrapping nats.ErrDisconnected (transient) if the loss of the connection
// ended ctx (failOnLoss), and err otherwise.
func lossErr(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), nats.ErrDisconnected) {
		return fmt.Errorf("connection lost before the reply: %w", nats.ErrDisconnected)
	}
	return err
}

// lost records that the connection is lost and, unless it runs already,
// starts sayDown.
func (c *Conn) lost(name string, wait, every time.Duration) {
	c.downMu.Lock()
	defer c.downMu.Unlock()
	if c.downSince.IsZero() {
		c.downSince = time.Now()
	}
	if !c.downWatch {
		c.downWatch = true
		go c.sayDown(name, wait, every)
	}
}

// found records that the connection is back.
func (c *Conn) found() {
	c.downMu.Lock()
	c.downSince = time.Time{}
	c.downMu.Unlock()
}

// sayDown logs, every interval every while the connection stays lost, that
// nats.go still tries to reconnect (every wait) and for how long it has:
// an hour-long outage is a line a minute, not silence. It returns once the
// connection is back or closed.
func (c *Conn) sayDown(name string, wait, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-c.closed.Done():
			return
		case <-tick.C:
		}
		c.downMu.Lock()
		since := c.downSince
		if since.IsZero() {
			c.downWatch = false
			c.downMu.Unlock()
			return
		}
		c.downMu.Unlock()
		c.log.Warn("nats: still disconnected, reconnecting", "client", name, "waited", roundWait(time.Since(since)), "every", wait)
	}
}

// connectError explains a failed first connection.
func connectError(o Options, err error) error {
	url := redact(o.URL)
	if url == "" {
		url = "in-process server"
	}
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked):
		return fmt.Errorf("%w: check nats.token / nats.user / nats.creds / nats.nkey (connecting to %s)", ErrAuth, url)
	case errors.As(err, &unknownCA), errors.As(err, &badHost):
		return fmt.Errorf("queue: connect to %s: TLS: %w (check nats.tls.ca and the server's certificate)", url, err)
	case strings.Contains(err.Error(), "certificate required"):
		return fmt.Errorf("queue: connect to %s: %w (the server wants a client certificate: nats.tls.cert and nats.tls.key)", url, err)
	case unreachable(err):
		return fmt.Errorf("queue: connect to %s: %w: %w", url, ErrUnreachable, err)
	}
	return fmt.Errorf("queue: connect to %s: %w", url, err)
}

// unreachable reports whether err, the failure of a first connection,
// says that no server answered at the address: nothing listens there
// (nats.go reports a refused connection as ErrNoServers), the network
// or the name of the host is not there (yet), or the server hung up or
// timed out before its greeting.
func unreachable(err error) bool {
	var netErr net.Error
	return errors.Is(err, nats.ErrNoServers) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.As(err, &netErr)
}

// redact hides the credentials in a URL list for messages.
func redact(urls string) string {
	if urls == "" {
		return ""
	}
	out := ""
	for i, u := range splitURLs(urls) {
		if i > 0 {
			out += ","
		}
		out += redactOne(u)
	}
	return out
}

// Close drains the connection (subscriptions stop, pending publishes are
// flushed) and waits until it is closed. Closing a closed Conn is a no-op.
func (c *Conn) Close() error {
	if c.nc.IsClosed() {
		return nil
	}
	err := c.nc.Drain()
	if err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		c.nc.Close()
		return fmt.Errorf("queue: close: %w", err)
	}
	select {
	case <-c.closed.Done():
	case <-time.After(drainTimeout + 5*time.Second):
		c.nc.Close()
	}
	return nil
}

// ConnectedURL returns the URL of the server the connection is on, with
// credentials hidden, or "" while disconnected.
func (c *Conn) ConnectedURL() string { return c.nc.ConnectedUrlRedacted() }

// stream returns the named stream, bound once and kept.
func (c *Conn) stream(ctx context.Context, name string) (jetstream.Stream, error) {
	c.mu.Lock()
	s, ok := c.streams[name]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := c.js.Stream(ctx, name)
	if err != nil {
		return nil, c.notReady(fmt.Sprintf("stream %s", name), err)
	}
	c.mu.Lock()
	c.streams[name] = s
	c.mu.Unlock()
	return s, nil
}

// notReady wraps err, adding ErrNotReady when what is missing on the
// server and ErrClosed when the connection is closed.
func (c *Conn) notReady(what string, err error) error {
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound), errors.Is(err, jetstream.ErrConsumerNotFound),
		errors.Is(err, jetstream.ErrBucketNotFound), errors.Is(err, jetstream.ErrConsumerDeleted):
		return fmt.Errorf("queue: %s: %w (the coordinator creates it with EnsureStreams): %w", what, ErrNotReady, err)
	case errors.Is(err, nats.ErrConnectionClosed):
		return fmt.Errorf("queue: %s: %w", what, ErrClosed)
	}
	return fmt.Errorf("queue: %s: %w", what, err)
}

// splitURLs splits a comma-separated list of URLs.
func splitURLs(list string) []string {
	var out []string
	for _, u := range strings.Split(list, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// redactOne hides the user information (token, user and password) of a URL.
func redactOne(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	return u.String()
}
