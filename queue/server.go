package queue

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// ServerOptions configures an embedded NATS server with JetStream.
type ServerOptions struct {
	// StoreDir is the JetStream directory. It is required: left empty,
	// nats-server would put the data in the OS temp directory.
	StoreDir string
	// Listen is the HOST:PORT on which the server accepts clients from
	// other machines; port 0 (or -1) picks a free port. Empty means no
	// network listener at all: clients connect in-process (Server.Connect).
	// The default value is "".
	Listen string
	// Token, or User and Password, authenticate clients (nats.token,
	// nats.user, nats.password). A listening server needs one of them, or
	// client certificates (TLSCA), unless AllowNoAuth is set.
	Token, User, Password string
	// TLSCert and TLSKey are the PEM files of the server's certificate; set
	// both to serve TLS on Listen. TLSCA, if set, is the authority that
	// client certificates must be signed by; clients without one are
	// refused (mutual TLS), which counts as authentication.
	TLSCert, TLSKey, TLSCA string
	// Monitor is the HOST:PORT of the server's HTTP monitoring endpoint
	// (nats-server's /varz, /jsz, /healthz ...; nats.monitor), which has
	// no authentication: keep it on a private address. Port 0 picks a
	// free one (see MonitorAddr). Empty means none. The default value is
	// "".
	Monitor string
	// Workers, when not nil, turns on keys (see auth.go): each worker
	// connects with its nkey and gets WorkerPermissions, and the
	// coordinator's in-process connections use a key made for this server
	// alone, with every right. Token, user and password, if set, still
	// grant every right: they are the operator's, not the workers'. A
	// listening server with workers needs no other credentials. A client
	// certificate (TLSCA) alone no longer authenticates: it identifies no
	// user. Change the workers of a running server with SetWorkers. The
	// default value (nil) has no keys.
	Workers []WorkerKey
	// AllowNoAuth lets a listening server accept clients without
	// credentials. For tests only. The default value is false.
	AllowNoAuth bool
	// ReadyTimeout bounds the wait for the server to accept connections.
	// The default value is 10 seconds.
	ReadyTimeout time.Duration
	// Logger receives the server's notices, warnings and errors, at most
	// one line of a kind every 10 seconds with the count of the others
	// (see serverlog.go). The default value (nil) discards them.
	Logger *slog.Logger

	// logEvery replaces serverLogEvery, for tests.
	logEvery time.Duration
}

// defaultReadyTimeout is ServerOptions.ReadyTimeout when left zero.
const defaultReadyTimeout = 10 * time.Second

// Server is an embedded nats-server with JetStream.
type Server struct {
	ns   *server.Server
	opts ServerOptions
	host string // host of Listen as given; "" when not listening

	sopts *server.Options // as started, for SetWorkers
	coord nkeys.KeyPair   // the coordinator's key, when ServerOptions.Workers is not nil

	workersMu sync.Mutex
}

// StartServer starts an embedded server and waits until it accepts
// connections.
func StartServer(o ServerOptions) (*Server, error) {
	sopts, host, err := o.serverOptions()
	if err != nil {
		return nil, err
	}
	var coord nkeys.KeyPair
	if o.Workers != nil {
		if coord, err = nkeys.CreateUser(); err != nil {
			return nil, fmt.Errorf("queue: embedded server: the coordinator's key: %w", err)
		}
		pub, _ := coord.PublicKey()
		sopts.Nkeys = nkeyUsers(o.Workers, pub)
	}
	saved := sopts.Clone()
	ns, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("queue: embedded server: %w", err)
	}
	if o.Logger != nil {
		ns.SetLogger(newSlogAdapter(o.Logger, o.logEvery), false, false)
	}
	go ns.Start()
	wait := o.ReadyTimeout
	if wait <= 0 {
		wait = defaultReadyTimeout
	}
	if !ns.ReadyForConnections(wait) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("queue: embedded server not ready for connections after %v (store %s, listen %q)", wait, o.StoreDir, o.Listen)
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("queue: embedded server started without JetStream (store %s)", o.StoreDir)
	}
	return &Server{ns: ns, opts: o, host: host, sopts: saved, coord: coord}, nil
}

// SetWorkers replaces the workers the server accepts (ServerOptions.Workers
// must have been set): a worker added may connect at once; the
// connections of a worker removed are closed, and it is refused when it
// tries to connect again. The server's other clients are not disturbed.
func (s *Server) SetWorkers(workers []WorkerKey) error {
	if s.coord == nil {
		return fmt.Errorf("%w: SetWorkers on a server started without workers (ServerOptions.Workers)", ErrInvalidOptions)
	}
	s.workersMu.Lock()
	defer s.workersMu.Unlock()
	pub, _ := s.coord.PublicKey()
	o := s.sopts.Clone()
	o.Nkeys = nkeyUsers(workers, pub)
	if err := s.ns.ReloadOptions(o); err != nil {
		return fmt.Errorf("queue: embedded server: reload its workers: %w", err)
	}
	return nil
}

// MonitorAddr returns the HOST:PORT of the monitoring endpoint, or "" if
// the server has none (ServerOptions.Monitor).
func (s *Server) MonitorAddr() string {
	if a := s.ns.MonitorAddr(); a != nil {
		return a.String()
	}
	return ""
}

// serverOptions checks o and translates it for nats-server. It returns
// the host part of Listen.
func (o ServerOptions) serverOptions() (*server.Options, string, error) {
	if o.StoreDir == "" {
		return nil, "", fmt.Errorf("%w: embedded server: StoreDir (nats.store-dir) is required", ErrInvalidOptions)
	}
	if o.Token != "" && o.User != "" {
		return nil, "", fmt.Errorf("%w: embedded server: set nats.token or nats.user, not both", ErrInvalidOptions)
	}
	if (o.User == "") != (o.Password == "") {
		return nil, "", fmt.Errorf("%w: embedded server: nats.user and nats.password go together", ErrInvalidOptions)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") || (o.TLSCA != "" && o.TLSCert == "") {
		return nil, "", fmt.Errorf("%w: embedded server: TLS needs a certificate and its key (nats.tls.cert, nats.tls.key; nats.tls.ca is optional)", ErrInvalidOptions)
	}
	sopts := &server.Options{
		JetStream: true,
		StoreDir:  o.StoreDir,
		NoSigs:    true,
		NoLog:     o.Logger == nil,
		// Token and user: only one is set (checked above).
		Authorization: o.Token,
		Username:      o.User,
		Password:      o.Password,
	}
	if o.Monitor != "" {
		host, portStr, err := net.SplitHostPort(o.Monitor)
		port, perr := strconv.Atoi(portStr)
		if err != nil || perr != nil || port < 0 || port > 65535 {
			return nil, "", fmt.Errorf("%w: embedded server: monitoring address %q is not HOST:PORT (nats.monitor)", ErrInvalidOptions, o.Monitor)
		}
		if port == 0 {
			port = server.RANDOM_PORT
		}
		sopts.HTTPHost, sopts.HTTPPort = host, port
	}
	if o.Listen == "" {
		if o.TLSCert != "" {
			return nil, "", fmt.Errorf("%w: embedded server: TLS files given but nats.listen is empty: an in-process server has no listener to secure", ErrInvalidOptions)
		}
		sopts.DontListen = true
		return sopts, "", nil
	}
	host, portStr, err := net.SplitHostPort(o.Listen)
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil || port < -1 || port > 65535 {
		return nil, "", fmt.Errorf("%w: embedded server: listen address %q is not HOST:PORT", ErrInvalidOptions, o.Listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT // nats-server reads 0 as its default port 4222
	}
	sopts.Host, sopts.Port = host, port
	if sopts.Host == "" {
		sopts.Host = "0.0.0.0"
	}
	if o.Token == "" && o.User == "" && o.TLSCA == "" && len(o.Workers) == 0 && !o.AllowNoAuth {
		return nil, "", fmt.Errorf("%w: nats.listen is %q but no credentials are configured: set nats.token, or nats.user and nats.password (or client certificates with nats.tls.ca), or register workers (c4book worker add)", ErrNoAuth, o.Listen)
	}
	if o.TLSCert != "" {
		if err := checkTLSFiles(o.TLSCert, o.TLSKey, o.TLSCA); err != nil {
			return nil, "", err
		}
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{
			CertFile: o.TLSCert,
			KeyFile:  o.TLSKey,
			CaFile:   o.TLSCA,
			Verify:   o.TLSCA != "",
		})
		if err != nil {
			return nil, "", fmt.Errorf("%w: embedded server TLS: %v", ErrInvalidOptions, err)
		}
		sopts.TLSConfig = tc
		sopts.TLS = true
		sopts.TLSVerify = o.TLSCA != ""
		sopts.TLSTimeout = 5
	}
	return sopts, host, nil
}

// ClientURL returns the URL other machines connect to, such as
// "nats://host:4222" or "tls://host:4222", or "" when the server does not
// listen. For a server listening on all interfaces the host is this
// machine's host name.
func (s *Server) ClientURL() string {
	if s.opts.Listen == "" {
		return ""
	}
	tcp, ok := s.ns.Addr().(*net.TCPAddr)
	if !ok {
		return ""
	}
	host := s.host
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		} else {
			host = "127.0.0.1"
		}
	}
	u := url.URL{Scheme: "nats", Host: net.JoinHostPort(host, strconv.Itoa(tcp.Port))}
	if s.opts.TLSCert != "" {
		u.Scheme = "tls"
	}
	return u.String()
}

// Connect returns an in-process connection to the server, with the
// server's credentials. name names the client in the server's monitoring
// ("c4book coordinator"). Options other than the name take their
// defaults; to log connection events, use ConnectInProcess.
func (s *Server) Connect(name string) (*Conn, error) {
	return s.ConnectInProcess(context.Background(), Options{Name: name})
}

// ConnectInProcess is Connect with Options: o.Name, o.Logger and
// o.ReconnectWait are used; the URL, credentials and TLS files are ignored
// (the server's credentials are used, and in-process traffic needs no
// TLS).
func (s *Server) ConnectInProcess(ctx context.Context, o Options) (*Conn, error) {
	o.URL, o.Creds, o.NKey, o.TLSCert, o.TLSKey, o.TLSCA = "", "", "", "", "", ""
	o.Token, o.User, o.Password = s.opts.Token, s.opts.User, s.opts.Password
	extra := []nats.Option{nats.InProcessServer(s.ns)}
	if s.coord != nil {
		// The coordinator's own key, with every right.
		o.Token, o.User, o.Password = "", "", ""
		pub, _ := s.coord.PublicKey()
		extra = append(extra, nats.Nkey(pub, s.coord.Sign))
	}
	return connect(ctx, o, extra...)
}

// Shutdown stops the server and waits until it has stopped. JetStream
// data stays in StoreDir for the next start.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}
