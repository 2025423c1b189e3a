package book

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// holderEnv names the book a helper process of TestOpen_inUse holds.
const holderEnv = "C4BOOK_TEST_BOOK_HOLDER"

// TestOpen_inUse: a book another process holds open for writing is
// refused, naming that process (its pid and command line), not with
// Pebble's "resource temporarily unavailable"; once the holder closes it,
// it opens, and the name is that of the new holder.
func TestOpen_inUse(t *testing.T) {
	t.Parallel()
	if path := os.Getenv(holderEnv); path != "" {
		holderProcess(t, path)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("a lock held by another process is told apart from other failures on Linux only")
	}
	path := filepath.Join(t.TempDir(), "book")
	openBook(t, path, testOptions(board4x4)).Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestOpen_inUse$", "--", "--nats=nats://user:secret@host:4222")
	cmd.Env = append(os.Environ(), holderEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || strings.TrimSpace(line) != "open" {
		t.Fatalf("the holder process said %q, %v; want \"open\"", line, err)
	}

	for _, create := range []bool{false, true} {
		_, err := Open(path, &Options{Create: create, Board: board4x4})
		var inUse *InUseError
		if !errors.As(err, &inUse) || !errors.Is(err, ErrInUse) || !IsLocked(err) {
			t.Fatalf("Open (Create %v) of a book held by another process = %v; want an InUseError", create, err)
		}
		msg := err.Error()
		for _, want := range []string{
			"the book " + path + " is in use by another process",
			"pid " + strconv.Itoa(cmd.Process.Pid),
			filepath.Base(os.Args[0]) + " -test.run=^TestOpen_inUse$ -- --nats=nats://host:4222",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q does not say %q", msg, want)
			}
		}
		for _, not := range []string{"resource temporarily unavailable", "secret"} {
			if strings.Contains(msg, not) {
				t.Errorf("message %q says %q", msg, not)
			}
		}
	}

	stdin.Close() // the holder closes the book and exits
	go io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the holder process: %v", err)
	}
	if _, err := os.Stat(filepath.Join(path, holderFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the holder file outlives the holder: %v", err)
	}
	bk := openBook(t, path, testOptions(board4x4))
	if got, want := readHolder(path), fmt.Sprintf("pid %d (", os.Getpid()); !strings.HasPrefix(got, want) {
		t.Errorf("holder of the book open here = %q, want it to start with %q", got, want)
	}
	// A second writer in this process.
	_, err = Open(path, testOptions(board4x4))
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "already open for writing in this process") {
		t.Errorf("second Open in the holding process = %v", err)
	}
	bk.Close()
}

// holderProcess is the holder of TestOpen_inUse: it opens the book at
// path for writing, says so, and closes it when its standard input ends.
func holderProcess(t *testing.T, path string) {
	bk, err := Open(path, testOptions(board4x4))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("open")
	io.Copy(io.Discard, os.Stdin)
	if err := bk.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"/usr/local/bin/c4book", "generate", "--depth", "20"}, "c4book generate --depth 20"},
		{[]string{"c4book", "coordinator", "--nats", "tls://me:pw@nats.lan:4222", "--nats=nats://tok@h"}, "c4book coordinator --nats tls://nats.lan:4222 --nats=nats://h"},
	} {
		if got := commandLine(c.args); got != c.want {
			t.Errorf("commandLine(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
