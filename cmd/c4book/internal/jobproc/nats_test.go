package jobproc

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/c4book/c4book/config"
)

func TestCheckListenAuth(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		nats config.NATS
		ok   bool
	}{
		{"not listening", config.NATS{}, true},
		{"token", config.NATS{Listen: ":4222", Token: "t"}, true},
		{"user and password", config.NATS{Listen: ":4222", User: "u", Password: "p"}, true},
		{"client certificates", config.NATS{Listen: ":4222", TLS: config.TLS{Cert: "c", Key: "k", CA: "ca"}}, true},
		{"nothing", config.NATS{Listen: ":4222"}, false},
		{"user without password", config.NATS{Listen: ":4222", User: "u"}, false},
		{"TLS without client CA", config.NATS{Listen: ":4222", TLS: config.TLS{Cert: "c", Key: "k"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.NATS = c.nats
			err := CheckListenAuth(cfg, 0)
			if (err == nil) != c.ok {
				t.Fatalf("got %v, want ok %v", err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "nats.token") {
				t.Errorf("the error does not say which keys to set: %v", err)
			}
		})
	}
}

func TestStoreDir(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Book.Path = filepath.Join("data", "7x6.db")
	if got, want := StoreDir(cfg), filepath.Join("data", "7x6.db", "nats"); got != want {
		t.Errorf("default: got %s, want %s", got, want)
	}
	cfg.NATS.StoreDir = "/var/lib/c4book"
	if got := StoreDir(cfg); got != "/var/lib/c4book" {
		t.Errorf("nats.store-dir set: got %s", got)
	}
}
