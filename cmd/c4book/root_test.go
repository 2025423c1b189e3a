package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRun_help(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"--help"}, {"help"}} {
		t.Run(fmt.Sprint(args), func(t *testing.T) {
			r := run(t, "", args...)
			wantOK(t, r)
			for _, want := range []string{"c4book builds exact Connect 4 opening books", "solve", "bench", "version", "completion", "--config", "--width", "C4BOOK_"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("help does not mention %q:\n%s", want, r.stdout)
				}
			}
		})
	}
	t.Run("completion bash", func(t *testing.T) {
		r := run(t, "", "completion", "bash")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "__start_c4book") {
			t.Errorf("completion bash printed no bash completion script:\n%.200s", r.stdout)
		}
	})
	t.Run("solve --help", func(t *testing.T) {
		r := run(t, "", "solve", "--help")
		wantOK(t, r)
		for _, want := range []string{"--weak", "--analyze", "--tt-size", "--width", `"-"`} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("solve help does not mention %q:\n%s", want, r.stdout)
			}
		}
	})
	// A worker's table (generate runs one) is worker.tt-size, not the
	// 64 MiB of a solve.
	for _, cmd := range []string{"worker", "generate"} {
		t.Run(cmd+" --help", func(t *testing.T) {
			r := run(t, "", cmd, "--help")
			wantOK(t, r)
			if !strings.Contains(r.stdout, "(worker.tt-size)") || strings.Contains(r.stdout, "(solver.tt-size)") {
				t.Errorf("%s --help: --tt-size does not set worker.tt-size:\n%s", cmd, r.stdout)
			}
		})
	}
}

func TestRun_usageErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"slove"}, `unknown command "slove" (did you mean solve or serve?)`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"solve", "--nope"}, "unknown flag: --nope"},
		{[]string{"bench", "--limit", "many", "f"}, `invalid argument "many"`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := run(t, "", c.args...)
			wantErr(t, r, c.want, "--help' for usage")
			if code := exitCode(r.err); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), 1},
		{&usageError{cmd: "c4book", err: errors.New("bad flag")}, 2},
		{fmt.Errorf("solve: %w", errInterrupted), 130},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.err), func(t *testing.T) {
			if got := exitCode(c.err); got != c.want {
				t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
}
