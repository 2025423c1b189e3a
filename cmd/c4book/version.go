package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

const versionLong = `Print the version of c4book: the module version, the commit it was built
from (and "(modified)" if the tree had uncommitted changes) and the Go
version and platform, as the Go toolchain recorded them in the binary.

A binary built outside a module or a checkout (go run, go test, a copy of
the sources) has no version or commit: they are printed as "devel" and
"(unknown)".`

// newVersionCommand builds "c4book version".
func newVersionCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of c4book",
		Long:  versionLong,
		Args:  checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			bi, _ := debug.ReadBuildInfo()
			printVersion(a.stdout, buildVersion(bi))
			return nil
		},
	}
}

// versionInfo is what "c4book version" prints.
type versionInfo struct {
	Version  string // module version: "v1.2.0", a pseudo-version, or "devel"
	Commit   string // VCS revision, or "" if not recorded
	Modified bool   // the tree had uncommitted changes when built
	Go       string // Go version: "go1.26.0"
}

// buildVersion returns the version recorded in bi, which may be nil (no
// build information).
func buildVersion(bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: "devel", Go: runtime.Version()}
	if bi == nil {
		return v
	}
	// go build in a checkout records "(devel)" without a tag or VCS
	// information; go test and go run record nothing.
	if m := bi.Main.Version; m != "" && m != "(devel)" {
		v.Version = m
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// printVersion writes v as lines "name  value":
//
//	version  v1.2.0
//	commit   5b40217c... (modified)
//	go       go1.26.0 linux/amd64
func printVersion(w io.Writer, v versionInfo) {
	commit := "(unknown)"
	if v.Commit != "" {
		commit = v.Commit
		if v.Modified {
			commit += " (modified)"
		}
	}
	fmt.Fprintf(w, "version  %s\ncommit   %s\ngo       %s %s/%s\n", v.Version, commit, v.Go, runtime.GOOS, runtime.GOARCH)
}
