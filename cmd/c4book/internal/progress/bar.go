package progress

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/c4book/c4book/cmd/c4book/internal/human"
	"github.com/c4book/c4book/coordinator"
)

// barWidth is the number of cells of the bar drawn on a terminal.
const barWidth = 24

// stalledAfter is how long a phase may go without a position done before
// its progress says so instead of showing a rate and an ETA that nothing
// backs any more. It says so sooner, after stillShown, when the ETA it
// would show has already passed with nothing done (the last tasks of a
// job waiting for a lost worker's AckWait: "ETA 53ms" for half a minute).
const (
	stalledAfter = time.Minute
	stillShown   = 10 * time.Second
)

// withExtra returns s followed by sep and extra, or s if extra is empty.
func withExtra(s, sep, extra string) string {
	if extra == "" {
		return s
	}
	return s + sep + extra
}

// FitBar returns the bar of Bar followed by extra, fitted into a terminal
// of width columns (0: not known, not fitted). A line as wide as the
// terminal or wider wraps, and the "\r\x1b[K" that clears the bar before
// a log line or the next draw then clears only its last row: the rows
// above stay on the screen, and log lines land amid the bar's remains.
// So the bar graph is left out when the line does not fit, and what still
// does not fit is cut, one column short of the width (a line filling the
// last column wraps on some terminals).
func FitBar(base, cur coordinator.Progress, still time.Duration, extra string, width int) string {
	line := withExtra(Bar(base, cur, still), "  ", extra)
	if width <= 0 || utf8.RuneCountInString(line) < width {
		return line
	}
	line = withExtra(fmt.Sprintf("%-8s %s", cur.Phase, figures(base, cur, still, "  ")), "  ", extra)
	if utf8.RuneCountInString(line) < width {
		return line
	}
	return string([]rune(line)[:max(width-1, 0)])
}

// Bar returns the one-line bar of a job at cur, whose phase began to be
// reported at base and whose count last moved still ago:
//
//	solving  [=========>              ]  41.3%  11,234/27,193  842/s  ETA 19s
//
// A phase whose total is not known yet shows the count and the rate.
func Bar(base, cur coordinator.Progress, still time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s ", cur.Phase)
	if cur.Total > 0 {
		filled := int(float64(barWidth) * float64(cur.Done) / float64(cur.Total))
		filled = min(max(filled, 0), barWidth)
		b.WriteByte('[')
		b.WriteString(strings.Repeat("=", filled))
		if filled < barWidth {
			b.WriteByte('>')
			b.WriteString(strings.Repeat(" ", barWidth-filled-1))
		}
		b.WriteString("] ")
	}
	b.WriteString(figures(base, cur, still, "  "))
	return b.String()
}

// Line returns the plain line of a job at cur, for logs:
//
//	solving 11,234/27,193 positions (41.3%), 842/s, ETA 19s
func Line(base, cur coordinator.Progress, still time.Duration) string {
	return fmt.Sprintf("%s %s", cur.Phase, figures(base, cur, still, ", "))
}

// figures returns the count, percentage, rate and ETA of a job at cur,
// separated by sep. The rate is that of the positions done since base, the
// phase's first report, so that the positions a resumed job found done do
// not count. When the count has not moved for stalledAfter (still), or for
// stillShown and longer than the ETA, the rate and ETA give way to how
// long nothing was done.
func figures(base, cur coordinator.Progress, still time.Duration, sep string) string {
	var parts []string
	count := human.Count(cur.Done) + " positions"
	if cur.Total > 0 {
		count = fmt.Sprintf("%s/%s positions (%.1f%%)", human.Count(cur.Done), human.Count(cur.Total), 100*float64(cur.Done)/float64(cur.Total))
	}
	parts = append(parts, count)
	rate := Rate(cur.Done-base.Done, cur.Elapsed-base.Elapsed)
	left := cur.Total == 0 || cur.Done < cur.Total
	overtaken := rate > 0 && cur.Total > 0 && still >= stillShown &&
		still > TimeLeft(cur.Total-cur.Done, rate) // the ETA has passed with nothing done
	if left && (still >= stalledAfter || overtaken) {
		return strings.Join(append(parts, "nothing done for "+human.Span(still)), sep)
	}
	if rate > 0 {
		parts = append(parts, human.Rate(rate)+"/s")
	}
	if cur.Total > 0 && cur.Done < cur.Total {
		eta := "ETA --"
		if rate > 0 {
			eta = "ETA " + human.Span(TimeLeft(cur.Total-cur.Done, rate))
		}
		parts = append(parts, eta)
	}
	return strings.Join(parts, sep)
}
