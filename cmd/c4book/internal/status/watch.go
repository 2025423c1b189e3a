package status

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/c4book/c4book/queue"
)

// Conn is a Source that says which server it is connected to.
// *queue.Conn is a Conn.
type Conn interface {
	Source
	// ConnectedURL returns the URL of the server, "" when not connected.
	ConnectedURL() string
}

var _ Conn = (*queue.Conn)(nil)

// clearScreen moves the cursor home and clears a terminal.
const clearScreen = "\x1b[H\x1b[2J"

// Watch writes the status of the jobs named (all jobs if none is) and of
// the workers to out every interval until ctx is done, and then returns
// nil. On a terminal (term) each report replaces the one before;
// otherwise the reports follow one another, a blank line between two.
// Each starts with a line saying when and where it was read, and shows
// each job's rate and ETA (History). A server that does not answer, or a
// queue not set up yet, is said in place of the report, and the watch
// goes on; other errors end it.
func Watch(ctx context.Context, out io.Writer, term bool, conn Conn, jobs []string, interval time.Duration) error {
	hist := NewHistory()
	url := conn.ConnectedURL()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 0; ; n++ {
		// A refresh that does not answer is given up on, to try again.
		rctx, cancel := context.WithTimeout(ctx, max(interval, 5*time.Second))
		rep, err := Read(rctx, conn, jobs)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if u := conn.ConnectedURL(); u != "" {
			url = u
		}
		now := time.Now()
		var b bytes.Buffer
		fmt.Fprintf(&b, "Status of %s at %s, every %v\n", url, now.Format(time.TimeOnly), interval)
		switch {
		case err == nil:
			hist.Add(rep.Jobs)
			Print(&b, rep, now, hist)
		case errors.Is(err, queue.ErrNotReady):
			fmt.Fprintln(&b, "No coordinator has set up the queue on this server yet.")
		case queue.Transient(err):
			fmt.Fprintf(&b, "The NATS server does not answer (%v): trying again.\n", err)
		default:
			return err
		}
		switch {
		case term:
			io.WriteString(out, clearScreen)
		case n > 0:
			io.WriteString(out, "\n")
		}
		out.Write(b.Bytes())
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
