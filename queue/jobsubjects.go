package queue

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// The result stream stores the results of open jobs only. A worker with a
// key may publish on "c4book.results.<any job>.<its name>", and a stream
// of every result subject would store what it sends for jobs nobody runs:
// a gigabyte in seconds, after which every honest result is refused. So
// the stream's subjects are those of the jobs a coordinator runs: Results
// adds a job's, RemoveJob (at the job's end) takes them out. A message on
// another subject is not stored at all; the worker's publish fails as if
// no server answered. Within a job, a worker's subject holds at most
// resultMaxMsgsPerSubject results not yet taken by the coordinator, of
// at most resultMaxMsgBytes each: a worker can fill its own subject, not
// the stream. What the stream holds of jobs no longer open (stored before
// this rule, or left by a job that ended) is purged when a coordinator
// opens its job, and named with its sender in the coordinator's log
// (StrayResults).

// Limits of the result stream.
const (
	// resultMaxMsgBytes bounds one result message: the largest result
	// the codec writes (MaxKeys positions, the longest ids) is 37,086
	// bytes.
	resultMaxMsgBytes = 64 << 10
	// resultMaxMsgsPerSubject bounds the results of one worker of one
	// job waiting for the coordinator: past it, the worker's publishes
	// are refused (and retried) until the coordinator takes some.
	resultMaxMsgsPerSubject = 256
	// noJobSubject is the result stream's subject while no job is open: a
	// stream needs one, and no worker may publish on it.
	noJobSubject = "c4book.results-none"
)

// jobResultSubjects returns the subjects of job's results: its workers'
// and the per-job subject of older workers.
func jobResultSubjects(job string) []string {
	return []string{ResultSubject(job), ResultSubject(job) + ".*"}
}

// StrayResults are results the stream held for a job that is not open,
// purged: the sender their subject names, and how many.
type StrayResults struct {
	Subject  string
	Worker   string // the worker the subject names, "" for a per-job subject
	Messages uint64
}

// openJobSubjects makes the result stream store job's results, and
// purges what it holds of jobs not open. Another coordinator may change
// the stream's subjects at the same moment (its own job's): the change
// is read back and made again until both hold.
func (c *Conn) openJobSubjects(ctx context.Context, job string) ([]StrayResults, error) {
	want := jobResultSubjects(job)
	for attempt := 0; ; attempt++ {
		s, err := c.stream(ctx, ResultStream)
		if err != nil {
			return nil, err
		}
		info, err := s.Info(ctx)
		if err != nil {
			return nil, c.notReady("read stream "+ResultStream, err)
		}
		cfg := info.Config
		if containsAll(cfg.Subjects, want) {
			return c.purgeStrayResults(ctx, s, cfg.Subjects)
		}
		if attempt == 10 {
			return nil, fmt.Errorf("queue: the result stream's subjects keep changing: %s not added", job)
		}
		cfg.Subjects = append(slices.DeleteFunc(cfg.Subjects, func(s string) bool { return s == noJobSubject }), want...)
		if _, err := c.js.UpdateStream(ctx, cfg); err != nil {
			return nil, c.notReady("add the subjects of "+job+" to stream "+ResultStream, err)
		}
	}
}

// closeJobSubjects makes the result stream store job's results no more.
func (c *Conn) closeJobSubjects(ctx context.Context, s jetstream.Stream, job string) error {
	drop := jobResultSubjects(job)
	for attempt := 0; ; attempt++ {
		info, err := s.Info(ctx)
		if err != nil {
			return c.notReady("read stream "+ResultStream, err)
		}
		cfg := info.Config
		if !slices.ContainsFunc(cfg.Subjects, func(s string) bool { return slices.Contains(drop, s) }) {
			return nil
		}
		if attempt == 10 {
			return fmt.Errorf("queue: the result stream's subjects keep changing: %s not removed", job)
		}
		cfg.Subjects = slices.DeleteFunc(cfg.Subjects, func(s string) bool { return slices.Contains(drop, s) })
		if len(cfg.Subjects) == 0 {
			cfg.Subjects = []string{noJobSubject}
		}
		if _, err := c.js.UpdateStream(ctx, cfg); err != nil {
			return c.notReady("remove the subjects of "+job+" from stream "+ResultStream, err)
		}
	}
}

// purgeStrayResults purges the results s holds on a subject none of
// subjects (the open jobs') matches.
func (c *Conn) purgeStrayResults(ctx context.Context, s jetstream.Stream, subjects []string) ([]StrayResults, error) {
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(resultSubjectPrefix+">"))
	if err != nil {
		return nil, c.notReady("read stream "+ResultStream, err)
	}
	var stray []StrayResults
	for subject, n := range info.State.Subjects {
		if slices.ContainsFunc(subjects, func(open string) bool { return subjectMatches(open, subject) }) {
			continue
		}
		if err := s.Purge(ctx, jetstream.WithPurgeSubject(subject)); err != nil {
			return stray, c.notReady("purge stray results "+subject, err)
		}
		r := StrayResults{Subject: subject, Messages: n}
		if tokens := strings.Split(subject, "."); len(tokens) == 4 {
			if w, err := unescapeID(tokens[3]); err == nil {
				r.Worker = w
			}
		}
		stray = append(stray, r)
	}
	slices.SortFunc(stray, func(a, b StrayResults) int { return strings.Compare(a.Subject, b.Subject) })
	return stray, nil
}

// containsAll reports whether have holds every string of want.
func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// subjectMatches reports whether subject matches pattern, a subject whose
// tokens may be "*" (one token) or end with ">" (the rest).
func subjectMatches(pattern, subject string) bool {
	p, s := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, t := range p {
		switch {
		case t == ">":
			return len(s) > i
		case i >= len(s):
			return false
		case t != "*" && t != s[i]:
			return false
		}
	}
	return len(p) == len(s)
}
