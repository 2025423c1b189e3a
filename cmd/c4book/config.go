package main

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/c4book/c4book/config"
)

// keyAnnotation marks a flag that sets a configuration key; the
// annotation's value is the key.
const keyAnnotation = "c4book-config-key"

// bindKey marks the flag name of fs as setting the configuration key. The
// flag must exist.
func bindKey(fs *pflag.FlagSet, name, key string) {
	if err := fs.SetAnnotation(name, keyAnnotation, []string{key}); err != nil {
		panic(err) // a flag name misspelled in the code
	}
}

// keyFlag adds the flag name to fs, of value's type and default, which
// sets the configuration key: its usage ends with the key, in
// parentheses, so that --help names the key the flag sets.
func keyFlag[T int | string | float64 | time.Duration](fs *pflag.FlagSet, name, key string, value T, usage string) {
	usage += " (" + key + ")"
	switch v := any(value).(type) {
	case int:
		fs.Int(name, v, usage)
	case string:
		fs.String(name, v, usage)
	case float64:
		fs.Float64(name, v, usage)
	case time.Duration:
		fs.Duration(name, v, usage)
	}
	bindKey(fs, name, key)
}

// addTTSizeFlag adds --tt-size, which sets solver.tt-size.
func addTTSizeFlag(fs *pflag.FlagSet) {
	keyFlag(fs, "tt-size", "solver.tt-size", config.Default().Solver.TTSize.String(), "transposition table `SIZE`: bytes or with a suffix KiB, MiB, GiB, KB, MB, GB")
}

// addWorkerTTSizeFlag adds --tt-size, which sets worker.tt-size: the
// table of a worker, or of generate's own.
func addWorkerTTSizeFlag(fs *pflag.FlagSet) {
	keyFlag(fs, "tt-size", "worker.tt-size", config.Default().Worker.TTSize.String(), "transposition table `SIZE` of the worker, shared by its threads: bytes or with a suffix KiB, MiB, GiB, KB, MB, GB")
}

// addThreadsFlag adds --threads, which sets solver.threads.
func addThreadsFlag(fs *pflag.FlagSet) {
	keyFlag(fs, "threads", "solver.threads", config.Default().Solver.Threads, "`N` threads search each position together, sharing the table")
}

// loadConfig loads the configuration of the running command cmd: the
// defaults, the config file named by --config, the environment and the
// flags of cmd (its own and those it inherits) that set keys. Only the
// running command's flags are bound, so flags of the same name on other
// commands never interfere.
func loadConfig(cmd *cobra.Command) (config.Config, error) {
	flags := map[string]*pflag.Flag{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if key := f.Annotations[keyAnnotation]; len(key) == 1 {
			flags[key[0]] = f
		}
	})
	file, err := cmd.Flags().GetString("config")
	if err != nil {
		return config.Config{}, err
	}
	return config.Load(config.Source{File: file, Flags: flags, OtherEnv: testEnvVars()})
}
