package main

import (
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

// addTTSizeFlag adds --tt-size, which sets solver.tt-size.
func addTTSizeFlag(fs *pflag.FlagSet) {
	fs.String("tt-size", config.Default().Solver.TTSize.String(),
		"transposition table `SIZE`: bytes or with a suffix KiB, MiB, GiB, KB, MB, GB (solver.tt-size)")
	bindKey(fs, "tt-size", "solver.tt-size")
}

// addWorkerTTSizeFlag adds --tt-size, which sets worker.tt-size: the
// table of a worker, or of generate's own.
func addWorkerTTSizeFlag(fs *pflag.FlagSet) {
	fs.String("tt-size", config.Default().Worker.TTSize.String(),
		"transposition table `SIZE` of the worker, shared by its threads: bytes or with a suffix KiB, MiB, GiB, KB, MB, GB (worker.tt-size)")
	bindKey(fs, "tt-size", "worker.tt-size")
}

// addThreadsFlag adds --threads, which sets solver.threads.
func addThreadsFlag(fs *pflag.FlagSet) {
	fs.Int("threads", config.Default().Solver.Threads,
		"`N` threads search each position together, sharing the table (solver.threads)")
	bindKey(fs, "threads", "solver.threads")
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
