package book

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/c4book/c4book/solver"
)

// TestBook_Collectors: the book's collectors gather from an open book,
// one metric each, its memtable and files not empty.
func TestBook_Collectors(t *testing.T) {
	t.Parallel()
	bk := newBook(t, solver.MustBoard(4, 4))
	cs := bk.Collectors()
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != len(cs) {
		t.Errorf("%d metric families, want %d", len(mfs), len(cs))
	}
	for _, mf := range mfs {
		m := mf.GetMetric()[0]
		v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
		switch mf.GetName() {
		case "c4book_book_memtable_bytes", "c4book_book_disk_bytes":
			if v <= 0 {
				t.Errorf("%s = %v, want more than 0", mf.GetName(), v)
			}
		}
	}
}
