package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// envPrefix begins the environment variable of every key (see EnvVar).
const envPrefix = "C4BOOK_"

// otherEnvVars are the variables beginning with envPrefix that are not
// configuration keys and that Load leaves alone: the variables of the
// tests, benchmarks and scripts, and those of the nats-server configuration files in scripts/deploy/.
// Any other such variable is an error of Load (see checkEnv), unless the
// caller names it in Source.OtherEnv.
var otherEnvVars = []string{
	"C4BOOK_TESTDATA",         // Pons' reference sets, for tests
	"C4BOOK_BENCH_DIR",        // benchmark books (cmd/c4book)
	"C4BOOK_CHROMIUM",         // the browser of serve's page test
	"C4BOOK_SNAPSHOT_BOOK",    // a book for BenchmarkBook_Snapshot
	"C4BOOK_SERVE_BENCH_BOOK", // a book for serve's benchmarks
	"C4BOOK_SERVE_BENCH_ROOT", // its root
	"C4BOOK_PACKED_BENCH",     // a packed book for book/packed's benchmarks
	"C4BOOK_STANDIN_NATS",     // scripts/tools/coordinator-memory.sh's stand-in worker
	"C4BOOK_TEST_BOOK_HOLDER", // helper processes of book's tests
	"C4BOOK_TEST_SNAPSHOT_WRITER",
	"C4BOOK_NATS_HOST",  // scripts/deploy/nats-server*.conf: nats-server's address,
	"C4BOOK_NATS_PORT",  // port
	"C4BOOK_NATS_STORE", // and JetStream directory
}

// checkEnv returns an error naming each variable of environ (as
// os.Environ gives it) that begins with envPrefix, is not empty and is
// neither a key's variable nor one of otherEnvVars or other, with the
// key it is nearest to. Such a variable is most likely a key misspelt: ignored, it
// would leave that key at its default without a word, in a service as
// well as at a terminal, so it is an error, as an unknown key of a config
// file is. An empty variable counts as unset, as for keys.
func checkEnv(environ, other []string) error {
	var errs []error
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) || value == "" || slices.Contains(otherEnvVars, name) || slices.Contains(other, name) || isKeyEnv(name) {
			continue
		}
		errs = append(errs, fmt.Errorf("environment variable %s is not a configuration key%s: unset it (docs/configuration.md lists the keys and their variables)", name, suggestEnv(name)))
	}
	return errors.Join(errs...)
}

// isKeyEnv reports whether name is the environment variable of a key.
func isKeyEnv(name string) bool {
	return slices.ContainsFunc(keys, func(k key) bool { return EnvVar(k.name) == name })
}

// suggestEnv returns ` (did you mean C4BOOK_BOARD_WIDTH, the key
// board.width?)` for the key whose variable is nearest to name, or ""
// when none is near.
func suggestEnv(name string) string {
	best, bestDist := "", 4 // at most 3 edits
	for _, k := range keys {
		if d := editDistance(name, EnvVar(k.name)); d < bestDist {
			best, bestDist = k.name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s, the key %s?)", EnvVar(best), best)
}
