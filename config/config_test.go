package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestEnvVar(t *testing.T) {
	cases := map[string]string{
		"nats.url":       "C4BOOK_NATS_URL",
		"solver.tt-size": "C4BOOK_SOLVER_TT_SIZE",
		"nats.tls.cert":  "C4BOOK_NATS_TLS_CERT",
	}
	for key, want := range cases {
		t.Run(key, func(t *testing.T) {
			if got := EnvVar(key); got != want {
				t.Errorf("EnvVar(%q) = %q, want %q", key, got, want)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	t.Run("every field has one key", func(t *testing.T) {
		var cfg Config
		seen := map[any]string{}
		for _, k := range keys {
			f := k.field(&cfg)
			if other, ok := seen[f]; ok {
				t.Errorf("keys %s and %s set the same field", other, k.name)
			}
			seen[f] = k.name
		}
		if n := countFields(reflect.TypeOf(cfg)); len(seen) != n {
			t.Errorf("%d keys set %d fields, Config has %d", len(keys), len(seen), n)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		want := map[string]string{
			"board.width": "7", "board.height": "6", "solver.tt-size": "64MiB", "book.path": `"c4book.db"`,
			"nats.url": `""`, "queue.ack-wait": "30s", "queue.max-deliver": "5", "queue.task-size": "64",
			"worker.concurrency": "0", "generate.depth": "8", "generate.root": `""`,
		}
		for _, k := range Keys() {
			if w, ok := want[k.Name]; ok && k.Default != w {
				t.Errorf("%s: default %s, want %s", k.Name, k.Default, w)
			}
			if k.Doc == "" || k.Env != EnvVar(k.Name) {
				t.Errorf("%s: doc %q, env %q", k.Name, k.Doc, k.Env)
			}
		}
	})
	t.Run("documented in README", func(t *testing.T) {
		readme, err := os.ReadFile(filepath.Join("..", "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range Keys() {
			row := "| `" + k.Name + "` | `" + k.Default + "` | `" + k.Env + "` |"
			if !strings.Contains(string(readme), row) {
				t.Errorf("README.md has no row starting %s", row)
			}
		}
	})
}

// countFields counts the fields of a struct type that are not structs
// themselves, at any depth.
func countFields(t reflect.Type) int {
	n := 0
	for f := range t.Fields() {
		if f.Type.Kind() == reflect.Struct {
			n += countFields(f.Type)
		} else {
			n++
		}
	}
	return n
}
