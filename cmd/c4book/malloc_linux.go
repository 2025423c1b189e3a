//go:build cgo && linux

package main

// #include <malloc.h>
import "C"

import "os"

// Pebble, under the book, allocates its block cache, memtables and the
// buffers of its compactions with C's malloc. glibc gives a thread that
// allocates while another does an arena of its own, up to eight per CPU,
// and keeps freed memory in each, so a coordinator's resident memory grew
// well beyond what it holds with two arenas
// (scripts/tools/coordinator-memory.sh, docs/benchmarks.md). Two are enough
// for Pebble's few threads. A MALLOC_ARENA_MAX in the environment is left to
// glibc.
func init() {
	if _, set := os.LookupEnv("MALLOC_ARENA_MAX"); !set {
		C.mallopt(C.M_ARENA_MAX, 2)
	}
}
