// Package durable holds what makes a change to a directory survive a
// crash: the one home of the directory sync that the key files of a plan
// (internal/keyfile) and the book's snapshots use.
package durable

import "os"

// SyncDir makes the entries of dir durable: a file created, renamed or
// removed in dir is there, or gone, after a crash of the machine.
func SyncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
