package book

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The holder of a book. Pebble's lock says only that some process holds
// the book ("resource temporarily unavailable"); the process that opens a
// book for writing also writes who it is into a small file beside the
// lock, so that a second one can say which process is in the way:
//
//	<book>/LOCK.holder
//	pid 4242
//	since 2026-01-05T09:45:55Z
//	command c4book generate --depth 20 --book q.db
//
// It is written once the lock is taken and removed before the lock is let
// go, so while the lock is held it names the holder. A crash leaves it
// behind, naming a process that holds nothing: the next writer replaces
// it, and a reader only looks at it when the lock is held. A book held by
// an older c4book, which writes none, is "in use by another process" with
// no name.
const holderFileName = "LOCK.holder"

// ErrInUse: the book is open for writing in another process (a job), or
// already in this one; see InUseError.
var ErrInUse = errors.New("the book is in use by another process")

// InUseError is a book that could not be opened because another process
// holds it open for writing. It wraps ErrInUse, and IsLocked holds for it.
type InUseError struct {
	Path string
	// Holder describes the process that holds the book, from the file it
	// wrote beside the lock: "pid 4242 (c4book generate --depth 20 ...,
	// since 2026-01-05 09:45:55)"; empty if it cannot be known.
	Holder string
	Self   bool // this very process holds the book for writing
	err    error
}

func (e *InUseError) Error() string {
	switch {
	case e.Self:
		return fmt.Sprintf("the book %s is already open for writing in this process", e.Path)
	case e.Holder != "":
		return fmt.Sprintf("the book %s is in use by another process, %s: one process at a time may write a book; stop it or wait for it to end", e.Path, e.Holder)
	}
	return fmt.Sprintf("the book %s is in use by another process: one process at a time may write a book; stop it or wait for it to end", e.Path)
}

// Is reports whether target is ErrInUse.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// Unwrap returns the error of the lock.
func (e *InUseError) Unwrap() error { return e.err }

// inUse returns the InUseError of err, a lock of the book at path that
// another holds: self if this process does.
func inUse(path string, err error, self bool) error {
	e := &InUseError{Path: path, Self: self, err: err}
	if !self {
		e.Holder = readHolder(path)
	}
	return e
}

// writeHolder writes the holder file of the book at path for this
// process. The file only serves messages: a failure to write it is no
// reason to refuse the book, and is ignored.
func writeHolder(path string) {
	name := filepath.Join(path, holderFileName)
	text := fmt.Sprintf("pid %d\nsince %s\ncommand %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339), commandLine(os.Args))
	if os.WriteFile(name+".tmp", []byte(text), 0o644) == nil {
		if os.Rename(name+".tmp", name) != nil {
			os.Remove(name + ".tmp")
		}
	}
}

// removeHolder removes the holder file of the book at path.
func removeHolder(path string) { os.Remove(filepath.Join(path, holderFileName)) }

// readHolderFile returns what the holder file of the book at path says:
// the pid (0 if there is no file, or it cannot be read), since when and
// the command.
func readHolderFile(path string) (pid int, since time.Time, command string) {
	f, err := os.Open(filepath.Join(path, holderFileName))
	if err != nil {
		return 0, time.Time{}, ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		field, value, _ := strings.Cut(sc.Text(), " ")
		switch field {
		case "pid":
			pid, _ = strconv.Atoi(value)
		case "since":
			since, _ = time.Parse(time.RFC3339, value)
		case "command":
			command = value
		}
	}
	return pid, since, command
}

// holderPID returns the pid the holder file of the book at path names, or
// 0.
func holderPID(path string) int {
	pid, _, _ := readHolderFile(path)
	return pid
}

// readHolder describes the holder named by the holder file of the book at
// path, or returns "" if there is none, or it cannot be read.
func readHolder(path string) string {
	pid, since, command := readHolderFile(path)
	if pid <= 0 {
		return ""
	}
	var about []string
	if command != "" {
		about = append(about, command)
	}
	if !since.IsZero() {
		about = append(about, "since "+since.Local().Format(time.DateTime))
	}
	if len(about) == 0 {
		return fmt.Sprintf("pid %d", pid)
	}
	return fmt.Sprintf("pid %d (%s)", pid, strings.Join(about, ", "))
}

// urlUserinfo matches the user and password of a URL.
var urlUserinfo = regexp.MustCompile(`://[^/@\s]*@`)

// commandLine returns args as one line for the holder file: the program's
// base name, then the arguments, without the user and password of any URL
// (--nats nats://user:secret@host: the file may be read by anyone who can
// list the book).
func commandLine(args []string) string {
	if len(args) == 0 {
		return ""
	}
	parts := []string{filepath.Base(args[0])}
	for _, a := range args[1:] {
		parts = append(parts, urlUserinfo.ReplaceAllString(a, "://"))
	}
	return strings.Join(parts, " ")
}
