// Package testaddr gives tests addresses to listen on: a helper of the
// project's tests, never of its commands.
package testaddr

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Free returns an address of 127.0.0.1 nobody listens on, for a server
// that a test starts (or stops and starts again) on a known port. Its port
// is below the kernel's range of ephemeral ports (Linux: 32768 and up by
// default), from which the listeners on port 0 and the outgoing
// connections of the tests running in parallel take theirs: none of them
// can take it while the test's server is not listening. Where there is no
// room below the range, it is a port of the range, as the kernel gives it.
func Free(tb testing.TB) string {
	tb.Helper()
	const lowest = 10000
	first := 32768 // of the ephemeral range
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				first = n
			}
		}
	}
	for range 100 {
		addr := "127.0.0.1:0"
		if first > lowest {
			addr = fmt.Sprintf("127.0.0.1:%d", lowest+rand.IntN(first-lowest))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue // taken
		}
		l.Close()
		return l.Addr().String()
	}
	tb.Fatalf("no free port of 127.0.0.1 below %d in 100 tries", first)
	return ""
}
