package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c4book/c4book/solver"
)

// TestReadFile_Solve: the readable lines of a set are its cases, up to
// the limit; a wrong score is a mismatch, reported with its line.
func TestReadFile_Solve(t *testing.T) {
	t.Parallel()
	set := "# Test_L3_R1, its first lines\n" +
		"2252576253462244111563365343671351441 -1\n" +
		"7422341735647741166133573473242566 2\n" + // 1 is right
		"4453\n" + // no score
		"23163416124767223154467471272416755633 0\n"
	file := filepath.Join(t.TempDir(), "set")
	if err := os.WriteFile(file, []byte(set), 0o644); err != nil {
		t.Fatal(err)
	}
	var errs strings.Builder
	cases, unreadable, err := ReadFile(solver.Standard, file, 0, &errs)
	if err != nil || len(cases) != 3 || unreadable != 1 || !strings.Contains(errs.String(), file+`:4: want "moves score", got "4453"`) {
		t.Fatalf("ReadFile: %d cases, %d unreadable, %v; messages:\n%s", len(cases), unreadable, err, errs.String())
	}
	if limited, _, _ := ReadFile(solver.Standard, file, 2, &errs); len(limited) != 2 {
		t.Errorf("limit 2: %d cases", len(limited))
	}
	s, err := solver.New(solver.Standard, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	errs.Reset()
	res := Solve(context.Background(), s, file, cases, Options{}, &errs)
	if res.Set != "set" || res.Positions != 3 || res.Mismatches != 1 || res.MeanNodes <= 0 || res.Interrupted {
		t.Errorf("result %+v", res)
	}
	if want := file + ":3: moves 7422341735647741166133573473242566: got 1, want 2\n"; errs.String() != want {
		t.Errorf("messages %q, want %q", errs.String(), want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := Solve(ctx, s, file, cases, Options{}, &errs); !res.Interrupted || res.Positions != 0 {
		t.Errorf("cancelled: %+v", res)
	}
}
