package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLoad_unknownEnv: a C4BOOK_ variable that is no key's, a key
// misspelt, fails Load naming it and the key it is nearest to; the
// variables c4book reads that are not keys, and empty ones, are left
// alone.
func TestLoad_unknownEnv(t *testing.T) {
	isolateEnv(t)
	misspelt := envPrefix + "QUEUE_CROSS_CHEK" // written so, lest TestOtherEnvVars find it
	t.Run("misspelt key", func(t *testing.T) {
		t.Setenv(misspelt, "0.25")
		_, err := Load(Source{Dir: t.TempDir()})
		wantError(t, err, "environment variable "+misspelt+" is not a configuration key",
			"did you mean C4BOOK_QUEUE_CROSS_CHECK, the key queue.cross-check?", "unset it")
	})
	t.Run("far from every key", func(t *testing.T) {
		t.Setenv(envPrefix+"COLOUR", "red")
		_, err := Load(Source{Dir: t.TempDir()})
		wantError(t, err, envPrefix+"COLOUR is not a configuration key: unset it")
	})
	t.Run("empty", func(t *testing.T) {
		t.Setenv(misspelt, "")
		mustLoad(t, Source{Dir: t.TempDir()})
	})
	t.Run("not keys, but known", func(t *testing.T) {
		for _, name := range otherEnvVars {
			t.Setenv(name, "x")
		}
		mustLoad(t, Source{Dir: t.TempDir()})
	})
	t.Run("the caller's own", func(t *testing.T) {
		t.Setenv(envPrefix+"OPTIONAL_PART", "x")
		_, err := Load(Source{Dir: t.TempDir()})
		wantError(t, err, envPrefix+"OPTIONAL_PART is not a configuration key")
		mustLoad(t, Source{Dir: t.TempDir(), OtherEnv: []string{envPrefix + "OPTIONAL_PART"}})
	})
}

// TestOtherEnvVars: every C4BOOK_ name in the code, tests and scripts of
// the repository is a key's variable, one of otherEnvVars, one its
// reader passes in Source.OtherEnv, or not a variable at all (the
// streams' names), so that a variable read somewhere never fails Load,
// and otherEnvVars lists no variable nobody reads.
func TestOtherEnvVars(t *testing.T) {
	notVariables := []string{"C4BOOK_TASKS", "C4BOOK_RESULTS"} // JetStream streams (queue/subjects.go)
	// The lying worker's (cmd/c4book/lie.go), in the binaries built with
	// the tag c4book_testlie only, which pass them in Source.OtherEnv.
	callers := []string{"C4BOOK_TEST_LIE_FRACTION", "C4BOOK_TEST_LIE_POSITIONS"}
	name := regexp.MustCompile(`C4BOOK_[A-Z0-9][A-Z0-9_]*`)
	seen := map[string]bool{}
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if base := d.Name(); path != root && (strings.HasPrefix(base, ".") && base != ".ci" || base == "testdata" || base == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".sh" && ext != ".conf" && ext != ".service" && filepath.Base(filepath.Dir(path)) != ".ci" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range name.FindAllString(string(data), -1) {
			if strings.HasSuffix(n, "_") { // a prefix: C4BOOK_NATS_TLS_*
				continue
			}
			if !seen[n] {
				seen[n] = true
				if !isKeyEnv(n) && !slices.Contains(otherEnvVars, n) && !slices.Contains(notVariables, n) && !slices.Contains(callers, n) {
					t.Errorf("%s: %s is neither a key's variable nor in otherEnvVars: Load would refuse it", path, n)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range otherEnvVars {
		if !seen[n] {
			t.Errorf("otherEnvVars lists %s, which no code, test or script reads", n)
		}
	}
}
