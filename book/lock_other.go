//go:build !linux

package book

import "github.com/cockroachdb/pebble/v2/vfs"

// readOnlyFS returns fs: outside Linux, read-only opens use Pebble's own
// lock, which rewrites the (empty) LOCK file of the book.
func readOnlyFS(fs vfs.FS) vfs.FS { return fs }
