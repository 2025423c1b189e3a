//go:build !c4book_testlie

package main

import (
	"io"

	"github.com/c4book/c4book/worker"
)

// The build without the lying worker (lie.go, built with the tag
// c4book_testlie only): no fault injection, and no variable of one.

// faultInjection returns no fault injection.
func faultInjection(io.Writer) (func(worker.Publisher) (worker.Publisher, func()), error) {
	return nil, nil
}

// testEnvVars returns no variable.
func testEnvVars() []string { return nil }
