package worker

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Busy is the Gate closed while the machine's other programs (all but
// this process) keep more than Above of its CPUs busy, a share from 0 to
// 1, for Hold at least; it opens again once they have kept below it for
// Hold. It reads Linux's /proc/stat (the machine's CPU time, busy and
// idle) and /proc/self/stat (this process's) each time it is asked: what
// it says is of the time between two questions. Where they cannot be
// read (another system), it stays open.
type Busy struct {
	Above float64
	Hold  time.Duration

	read func() (cpuTimes, error) // readCPUTimes; a seam for tests

	last      cpuTimes
	started   bool      // last holds a reading
	closed    bool      // the gate's state
	above     bool      // the others were above Above at the last question
	since     time.Time // since when they have been (or not)
	share     float64   // the others' share at the last question
	readError error     // the last reading's failure, if any
}

// cpuTimes are CPU times in clock ticks since boot: the machine's, all
// its CPUs together, of which idle, and this process's.
type cpuTimes struct{ total, idle, own uint64 }

// Closed asks the machine, and answers as the comment of Busy says.
func (b *Busy) Closed(now time.Time) (bool, string) {
	read := b.read
	if read == nil {
		read = readCPUTimes
	}
	t, err := read()
	if err != nil {
		b.readError = err
		return false, "" // what cannot be read does not stop the worker
	}
	if !b.started || t.total <= b.last.total {
		b.last, b.started, b.since = t, true, now
		return b.closed, b.reason()
	}
	total := float64(t.total - b.last.total)
	busy := float64((t.total - t.idle) - (b.last.total - b.last.idle))
	own := float64(t.own - b.last.own)
	b.share = max(0, busy-own) / total
	b.last = t
	if above := b.share > b.Above; above != b.above {
		b.above, b.since = above, now
	}
	if b.above != b.closed && now.Sub(b.since) >= b.Hold {
		b.closed = b.above
	}
	return b.closed, b.reason()
}

// reason says why the gate is closed.
func (b *Busy) reason() string {
	if !b.closed {
		return ""
	}
	return fmt.Sprintf("the machine's other programs use %.0f%% of its CPUs (the limit is %.0f%%, for %v)", 100*b.share, 100*b.Above, b.Hold)
}

// readCPUTimes reads the machine's and this process's CPU times from
// /proc (Linux).
func readCPUTimes() (cpuTimes, error) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	return parseCPUTimes(string(stat), string(self))
}

// parseCPUTimes reads the first line of /proc/stat ("cpu user nice system
// idle iowait irq softirq steal ...": idle and iowait are idle) and
// /proc/self/stat (utime and stime, its 14th and 15th fields, after the
// command name in parentheses, which may hold spaces).
func parseCPUTimes(stat, self string) (cpuTimes, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return cpuTimes{}, errors.New("/proc/stat: no cpu line")
	}
	var t cpuTimes
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("/proc/stat: %v", err)
		}
		if i >= 8 {
			break // guest times are counted in user and nice already
		}
		t.total += v
		if i == 3 || i == 4 { // idle, iowait
			t.idle += v
		}
	}
	end := strings.LastIndexByte(self, ')')
	g := strings.Fields(self[end+1:])
	if end < 0 || len(g) < 13 {
		return cpuTimes{}, errors.New("/proc/self/stat: too few fields")
	}
	for _, s := range g[11:13] { // utime, stime: fields 14 and 15
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("/proc/self/stat: %v", err)
		}
		t.own += v
	}
	return t, nil
}
