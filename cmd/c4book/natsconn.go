package main

import (
	"strings"

	"github.com/c4book/c4book/config"
)

// workerCommandLine returns the command a worker on another machine runs
// to join the server at url, configured as cfg; keys says that workers
// are registered (they then use their key file). Secrets are not printed:
// they appear as placeholders naming the key that holds them here.
func workerCommandLine(cfg config.Config, url string, keys bool) string {
	n := cfg.NATS
	var env []string
	switch {
	case keys:
		env = append(env, "C4BOOK_NATS_NKEY=<its key file, from c4book worker add>")
	case n.Token != "":
		env = append(env, "C4BOOK_NATS_TOKEN=<nats.token>")
	case n.User != "":
		env = append(env, "C4BOOK_NATS_USER="+shellQuote(n.User), "C4BOOK_NATS_PASSWORD=<nats.password>")
	}
	if n.TLS.Cert != "" {
		env = append(env, "C4BOOK_NATS_TLS_CA=<CA file of the server certificate>")
		if n.TLS.CA != "" {
			env = append(env, "C4BOOK_NATS_TLS_CERT=<client certificate>", "C4BOOK_NATS_TLS_KEY=<client key>")
		}
	}
	return strings.Join(append(env, "c4book worker --nats "+url), " ")
}

// shellQuote quotes s for a POSIX shell if it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,/:@%+=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
