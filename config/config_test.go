package config

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/c4book/c4book/solver"
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
			"nats.url": `""`, "queue.ack-wait": "30s", "queue.max-deliver": "5", "queue.task-size": "256",
			"worker.concurrency": "0", "generate.depth": "8", "generate.root": `""`,
			"log.format": `"text"`, "log.level": `"info"`,
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
	t.Run("documented in docs/configuration.md", func(t *testing.T) {
		const page = "docs/configuration.md"
		text, err := os.ReadFile(filepath.Join("..", page))
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]string{} // key name -> its table row
		for line := range strings.Lines(string(text)) {
			line = strings.TrimRight(line, "\n")
			name, ok := keyRowName(line)
			if !ok {
				continue
			}
			if _, dup := rows[name]; dup {
				t.Errorf("%s has two rows for %s", page, name)
			}
			rows[name] = line
		}
		for _, k := range Keys() {
			want := "| `" + k.Name + "` | `" + k.Default + "` | `" + k.Env + "` | " + k.Doc + " |"
			switch got, ok := rows[k.Name]; {
			case !ok:
				t.Errorf("%s has no row for key %s; want\n%s", page, k.Name, want)
			case got != want:
				t.Errorf("%s: the row of %s is\n%s\nwant (from config.Keys)\n%s", page, k.Name, got, want)
			}
			delete(rows, k.Name)
		}
		for _, name := range slices.Sorted(maps.Keys(rows)) {
			t.Errorf("%s has a row for %s, which is not a configuration key", page, name)
		}
	})
}

// keyRowName returns the key a table row of docs/configuration.md
// documents: the row starts "| `KEY` |".
func keyRowName(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "| `")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, "` |")
	return name, ok && name != ""
}

// countFields counts the fields of a struct type that are not structs
// themselves, at any depth, but those tagged key:"-" (set by Load, not
// keys).
func countFields(t reflect.Type) int {
	n := 0
	for f := range t.Fields() {
		if f.Tag.Get("key") == "-" {
			continue
		}
		if f.Type.Kind() == reflect.Struct {
			n += countFields(f.Type)
		} else {
			n++
		}
	}
	return n
}

// TestDefault_workerTTSize: a worker's table is 256 MiB by default, less
// on a machine with less than 1 GiB, never below solver.tt-size's default.
func TestDefault_workerTTSize(t *testing.T) {
	got := int64(Default().Worker.TTSize)
	want := int64(DefaultWorkerTTSize)
	if m := solver.MaxTableBytes(); m > 0 && m/4 < want {
		want = max(m/4, solver.DefaultTableBytes)
	}
	if got != want {
		t.Errorf("worker.tt-size default %d bytes, want %d (machine memory %d)", got, want, solver.MaxTableBytes())
	}
	c := Default()
	if err := c.Validate(); err != nil {
		t.Errorf("the default configuration is invalid: %v", err)
	}
}
