package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion_Run(t *testing.T) {
	t.Parallel()
	r := run(t, "", "version")
	wantOK(t, r)
	// go test records neither a module version nor a commit.
	want := "version  devel\ncommit   (unknown)\ngo       " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if r.stdout != want {
		t.Errorf("got\n%s\nwant\n%s", r.stdout, want)
	}
	t.Run("no arguments", func(t *testing.T) {
		wantErr(t, run(t, "", "version", "extra"), "unknown command", "--help' for usage")
	})
}

func TestBuildVersion(t *testing.T) {
	t.Parallel()
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	cases := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build information", nil, "version  devel\ncommit   (unknown)\ngo       " + runtime.Version()},
		{
			"go test",
			&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/c4book/c4book", Version: "(devel)"}},
			"version  devel\ncommit   (unknown)\ngo       go1.26.0",
		},
		{
			"release",
			&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"},
				Settings: settings("vcs", "git", "vcs.revision", "5b40217c", "vcs.modified", "false")},
			"version  v1.2.0\ncommit   5b40217c\ngo       go1.26.0",
		},
		{
			"modified checkout",
			&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.0.0-20250101000000-5b40217c0000+dirty"},
				Settings: settings("vcs.revision", "5b40217c", "vcs.modified", "true")},
			"version  v0.0.0-20250101000000-5b40217c0000+dirty\ncommit   5b40217c (modified)\ngo       go1.26.0",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			printVersion(&b, buildVersion(c.bi))
			want := c.want + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
			if b.String() != want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), want)
			}
		})
	}
}
