package main

import "github.com/spf13/pflag"

// addMetricsFlag adds --metrics, which sets metrics.listen: the address
// of the command's metrics.Server.
func addMetricsFlag(f *pflag.FlagSet) {
	keyFlag(f, "metrics", "metrics.listen", "", "`HOST:PORT` on which to serve Prometheus metrics (/metrics), health (/healthz) and Go's profiles (/debug/pprof/); empty: none")
}
