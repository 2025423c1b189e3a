package testpar

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

// TestDefault: without -parallel on the command line, Default sets it;
// once set (flag.Set counts as given, as the command line does), a second
// call leaves it.
func TestDefault(t *testing.T) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		t.Skip("-parallel was given on the command line")
	}
	f := flag.Lookup("test.parallel")
	want := strconv.Itoa(max(7, runtime.GOMAXPROCS(0)))
	Default(7)
	if got := f.Value.String(); got != want {
		t.Fatalf("after Default(7): -test.parallel %s, want %s", got, want)
	}
	Default(9)
	if got := f.Value.String(); got != want {
		t.Fatalf("after a second Default(9): -test.parallel %s, want %s (already given)", got, want)
	}
}
