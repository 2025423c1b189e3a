package testaddr

import (
	"net"
	"testing"
)

// TestFree: the address is free (a listener takes it) and on 127.0.0.1.
func TestFree(t *testing.T) {
	addr := Free(t)
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("Free = %q (%v), want an address of 127.0.0.1", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on %s: %v", addr, err)
	}
	l.Close()
}
