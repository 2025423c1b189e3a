package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// WriteHeader writes the header of the table of results.
func WriteHeader(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%-16s %9s %10s %10s %12s %10s %10s\n",
		"set", "positions", "mismatches", "mean time", "mean nodes", "kpos/s", "Mnodes/s")
	return err
}

// WriteResult writes res as a row of the table, or as a line of JSON.
func WriteResult(w io.Writer, res Result, asJSON bool) error {
	if asJSON {
		line, err := json.Marshal(res)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", line)
		return err
	}
	note := ""
	if res.Interrupted {
		note = "  (interrupted)"
	}
	_, err := fmt.Fprintf(w, "%-16s %9d %10d %10s %12.1f %10.2f %10.2f%s\n",
		res.Set, res.Positions, res.Mismatches, formatDuration(time.Duration(res.MeanNS)),
		res.MeanNodes, res.KPosPerSec, res.NodesPerSec/1e6, note)
	return err
}

// formatDuration writes d with three or four significant digits.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3fs", d.Seconds())
}
