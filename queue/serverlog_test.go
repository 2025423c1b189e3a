package queue

import (
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestServer_hostileLogLines: a worker's key guessing ack subjects of the
// task consumer past the stream's last sequence, and publishing where it
// may not, makes the server log a line per message: the embedded server's
// log gets the first line of each kind whole, then one line per interval
// with the count of the others, and every line is counted.
func TestServer_hostileLogLines(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	k := &keyed{keys: map[string]string{}}
	k.keys["mallory"] = t.TempDir() + "/mallory.nkey"
	pub, err := WriteWorkerKey(k.keys["mallory"], "mallory")
	if err != nil {
		t.Fatal(err)
	}
	const every = 100 * time.Millisecond
	k.srv = startServer(t, ServerOptions{Listen: "127.0.0.1:0", Workers: []WorkerKey{{Name: "mallory", PublicKey: pub}},
		Logger: logs.logger(), logEvery: every})
	k.coord = connectTo(t, k.srv, "coordinator")
	if err := k.coord.EnsureStreams(testCtx(t, 30*time.Second), testStreams); err != nil {
		t.Fatal(err)
	}
	nk, err := nats.NkeyOptionFromSeed(k.keys["mallory"])
	if err != nil {
		t.Fatal(err)
	}
	// The server answers each refused publication with an error; they
	// are dropped here, not waited for.
	nc, err := nats.Connect(k.srv.ClientURL(), nk, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	const n = 2000
	start := time.Now()
	for i := range n {
		ack := fmt.Sprintf("$JS.ACK.%s.%s.1.%d.%d.0.0", TaskStream, LaneConsumer(0), 100000+i, 100000+i)
		if err := nc.Publish(ack, []byte("+ACK")); err != nil {
			t.Fatal(err)
		}
		if err := nc.Publish(TaskLaneSubject("job1", 0), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{"ack": "past last stream sequence", "violation": "Publish Violation"}
	count := func(what string) (lines, total int) {
		for line := range strings.Lines(logs.String()) {
			if !strings.Contains(line, kinds[what]) {
				continue
			}
			lines++
			if m := repeatedAttr.FindStringSubmatch(line); m != nil {
				r, _ := strconv.Atoi(m[1])
				total += r // the line stands for r lines, itself the last
			} else {
				total++
			}
		}
		return lines, total
	}
	eventually(t, 20*time.Second, "every line counted", func() bool {
		_, acks := count("ack")
		_, violations := count("violation")
		return acks == n && violations == n
	})
	elapsed := time.Since(start)
	for what := range kinds {
		lines, _ := count(what)
		// The first at once, then at most one an interval.
		if most := 2 + int(elapsed/every); lines > most {
			t.Errorf("%d lines of %s for %d messages in %v: want at most %d, one every %v", lines, what, n, elapsed, most, every)
		}
	}
	first, _, _ := strings.Cut(logs.String()[strings.Index(logs.String(), "ACK sequence"):], "\n")
	if !strings.Contains(first, "ACK sequence 100000 past last stream sequence") || strings.Contains(first, "repeated=") {
		t.Errorf("first ack warning: %q, want it whole, without a count", first)
	}
	if t.Failed() {
		t.Logf("log:\n%s", logs.String())
	}
}

// repeatedAttr finds the count of a line that stands for others: the
// lines of its kind held back, itself the last of them.
var repeatedAttr = regexp.MustCompile(` repeated=(\d+)`)

// TestLogLimiter, on a clock of its own: the first line of a kind at
// once, the others of the interval counted and logged as one when it is
// up, kinds told apart by their words and not their numbers, and past
// maxLogKinds new kinds counted together.
func TestLogLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type line struct {
		msg      string
		repeated int
		over     time.Duration
	}
	var got []line
	var pending []func()
	l := newLogLimiter(10*time.Second, func(_ slog.Level, msg string, repeated int, over time.Duration) {
		got = append(got, line{msg, repeated, over})
	})
	l.now = func() time.Time { return now }
	l.after = func(d time.Duration, f func()) { pending = append(pending, f) }
	fire := func() {
		fs := pending
		pending = nil
		for _, f := range fs {
			f()
		}
	}
	want := func(lines ...line) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(lines) {
			t.Fatalf("logged %v, want %v", got, lines)
		}
		got = nil
	}

	for i := range 1000 {
		l.log(slog.LevelWarn, fmt.Sprintf("ACK sequence %d past last stream sequence of 12", 100+i))
	}
	l.log(slog.LevelWarn, "Publish Violation - Subject \"c4book.tasks.x\"")
	want(line{"ACK sequence 100 past last stream sequence of 12", 0, 0}, line{"Publish Violation - Subject \"c4book.tasks.x\"", 0, 0})
	if len(pending) != 1 {
		t.Fatalf("%d flushes pending, want 1", len(pending))
	}
	now = now.Add(10 * time.Second)
	fire()
	want(line{"ACK sequence 1099 past last stream sequence of 12", 999, 10 * time.Second})

	// A kind quiet for an interval is logged at once again.
	now = now.Add(10 * time.Second)
	l.log(slog.LevelWarn, "ACK sequence 5 past last stream sequence of 12")
	want(line{"ACK sequence 5 past last stream sequence of 12", 0, 0})
	fire()
	want()

	// Past maxLogKinds kinds, new ones are counted together.
	now = now.Add(time.Second)
	for i := range maxLogKinds + 10 {
		l.log(slog.LevelError, fmt.Sprintf("Publish Violation - Subject \"s%s\"", strings.Repeat("x", i)))
	}
	if len(got) > maxLogKinds+1 || len(l.kinds) > maxLogKinds+1 {
		t.Errorf("%d lines logged and %d kinds kept for %d kinds, want at most %d", len(got), len(l.kinds), maxLogKinds+10, maxLogKinds+1)
	}
	got = nil
	now = now.Add(10 * time.Second)
	fire()
	if len(got) != 1 || got[0].repeated == 0 {
		t.Errorf("after the interval: %v, want one line counting the other kinds", got)
	}
}
