package book

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

func TestBook_Get(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	entries := solvedEntries(t, board5x4, 6)
	putAll(t, bk, entries)
	t.Run("round trip", func(t *testing.T) {
		for _, e := range entries {
			v, ok, err := bk.GetEntry(e.Depth, e.Key)
			if err != nil || !ok || v != e.Value {
				t.Fatalf("GetEntry(%v) = %v, %v, %v", e, v, ok, err)
			}
		}
	})
	t.Run("mirror shares the entry", func(t *testing.T) {
		p := mustParse(t, board5x4, "1122")
		m := mustParse(t, board5x4, "5544")
		if p.CanonicalKey() != m.CanonicalKey() || p.Key() == m.Key() {
			t.Fatalf("%v and %v are not mirror images", p, m)
		}
		vp, okp, errp := bk.Get(p)
		vm, okm, errm := bk.Get(m)
		if !okp || !okm || errp != nil || errm != nil || vp != vm {
			t.Errorf("Get = %v %v %v and %v %v %v", vp, okp, errp, vm, okm, errm)
		}
		if err := bk.Put(m, Value{Score: vp.Score, Origin: OriginImported}); err != nil {
			t.Fatal(err)
		}
		if v, _, _ := bk.Get(p); v.Origin != OriginImported {
			t.Errorf("Put of the mirror did not replace the entry: %v", v)
		}
	})
	t.Run("move string", func(t *testing.T) {
		v, ok, err := bk.GetMoves("33")
		want, _, _ := bk.Get(mustParse(t, board5x4, "33"))
		if err != nil || !ok || v != want {
			t.Errorf("GetMoves(33) = %v, %v, %v", v, ok, err)
		}
		if _, _, err := bk.GetMoves("36"); err == nil {
			t.Error("GetMoves(36) on 5 columns succeeded")
		}
	})
	t.Run("absent", func(t *testing.T) {
		v, ok, err := bk.Get(mustParse(t, board5x4, "1234512"))
		if ok || err != nil {
			t.Errorf("Get(depth 7) = %v, %v, %v; want absent", v, ok, err)
		}
	})
	t.Run("other board", func(t *testing.T) {
		if _, _, err := bk.Get(board4x4.NewPosition()); !errors.Is(err, ErrBoardMismatch) {
			t.Errorf("Get(4x4 position) = %v, want ErrBoardMismatch", err)
		}
	})
}

func TestBatch_Put(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board4x4)
	p := mustParse(t, board4x4, "12")
	q := mustParse(t, board4x4, "43")
	cases := map[string]Entry{
		"depth above cells":   {Depth: 17, Key: p.CanonicalKey(), Value: Value{Score: 0, Origin: OriginSolved}},
		"depth not the key's": {Depth: 3, Key: p.CanonicalKey(), Value: Value{Score: 0, Origin: OriginSolved}},
		"not canonical":       {Depth: 2, Key: q.Key(), Value: Value{Score: 0, Origin: OriginSolved}},
		"key too wide":        {Depth: 2, Key: 1 << 40, Value: Value{Score: 0, Origin: OriginSolved}},
		"score above range":   {Depth: 2, Key: p.CanonicalKey(), Value: Value{Score: 8, Origin: OriginSolved}},
		"score below range":   {Depth: 2, Key: p.CanonicalKey(), Value: Value{Score: -8, Origin: OriginSolved}},
		"no origin":           {Depth: 2, Key: p.CanonicalKey(), Value: Value{Score: 0, Origin: 0}},
		"worker of a derived": {Depth: 2, Key: p.CanonicalKey(), Value: Value{Score: 0, Origin: OriginDerived, Worker: 3}},
	}
	for name, e := range cases {
		t.Run(name, func(t *testing.T) {
			w := bk.NewBatch()
			defer w.Close()
			err := w.Put(e)
			if err == nil {
				t.Fatalf("Put(%v) succeeded", e)
			}
			if w.Len() != 0 {
				t.Errorf("Len = %d after a failed Put", w.Len())
			}
			t.Logf("%v", err)
		})
	}
	t.Run("valid", func(t *testing.T) {
		w := bk.NewBatch()
		defer w.Close()
		if err := w.PutPosition(p, Value{Score: -2, Origin: OriginSolved}); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		if v, ok, _ := bk.Get(p); !ok || v.Score != -2 {
			t.Errorf("Get = %v, %v", v, ok)
		}
	})
}

// TestBook_Get_corrupt writes bad values with Pebble directly: reads
// report them with their key, never panic.
func TestBook_Get_corrupt(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "book")
	bk := openBook(t, dir, testOptions(board4x4))
	putAll(t, bk, solvedEntries(t, board4x4, 3))
	bk.Close()
	p := mustParse(t, board4x4, "12")
	key := AppendKey(nil, p.Moves(), p.CanonicalKey())
	for name, value := range map[string][]byte{
		"truncated": {0x11},
		"empty":     {},
		"garbage":   {0xde, 0xad, 0xbe, 0xef},
	} {
		t.Run(name, func(t *testing.T) {
			writeRaw(t, dir, key, value)
			bk := openBook(t, dir, nil)
			defer bk.Close()
			_, _, err := bk.Get(p)
			var ce *CorruptError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "depth 2 key") {
				t.Fatalf("Get = %v, want a CorruptError at depth 2", err)
			}
			t.Logf("Get: %v", err)
			var iterErr error
			n := 0
			for _, err := range bk.Entries(0, 16) {
				if err != nil {
					iterErr = err
					break
				}
				n++
			}
			if !errors.As(iterErr, &ce) {
				t.Errorf("Entries ended with %v after %d entries, want a CorruptError", iterErr, n)
			}
			if _, err := bk.Stats(); !errors.As(err, &ce) {
				t.Errorf("Stats = %v, want a CorruptError", err)
			}
		})
	}
	t.Run("bad key", func(t *testing.T) {
		writeRaw(t, dir, key, []byte{0x11, 0})
		writeRaw(t, dir, AppendKey(nil, 2, 1<<40), []byte{0x11, 0})
		bk := openBook(t, dir, nil)
		defer bk.Close()
		var iterErr error
		for _, err := range bk.Entries(2, 2) {
			if err != nil {
				iterErr = err
				break
			}
		}
		var ce *CorruptError
		if !errors.As(iterErr, &ce) {
			t.Errorf("Entries = %v, want a CorruptError", iterErr)
		}
		t.Logf("Entries: %v", iterErr)
	})
}

func TestBook_Entries(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board4x4)
	entries := solvedEntries(t, board4x4, 5)
	putAll(t, bk, entries)
	want := map[int]int{}
	for _, e := range entries {
		if e.Depth >= 2 && e.Depth <= 4 {
			want[e.Depth]++
		}
	}
	got := map[int]int{}
	last := -1
	for e, err := range bk.Entries(2, 4) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Depth < last {
			t.Fatalf("entry %v after depth %d", e, last)
		}
		last = e.Depth
		got[e.Depth]++
	}
	for d := 2; d <= 4; d++ {
		if got[d] != want[d] {
			t.Errorf("depth %d: %d entries, want %d", d, got[d], want[d])
		}
	}
	// Breaking out of the loop closes the iterator.
	for range bk.Entries(0, 16) {
		break
	}
}

func TestBook_Jobs(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	j, err := bk.PutJob(Job{ID: "d8", Root: "", Depth: 8, State: JobPlanning, Planned: 100})
	if err != nil {
		t.Fatal(err)
	}
	if j.Created.IsZero() || j.Updated.IsZero() {
		t.Errorf("PutJob did not stamp the job: %+v", j)
	}
	j.State, j.Solved = JobSolving, 40
	if _, err := bk.PutJob(j); err != nil {
		t.Fatal(err)
	}
	if _, err := bk.PutJob(Job{ID: "a", Root: "33", Depth: 10, State: JobDone}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := bk.Job("d8")
	if err != nil || !ok || got.State != JobSolving || got.Solved != 40 || !got.Created.Equal(j.Created) {
		t.Errorf("Job(d8) = %+v, %v, %v", got, ok, err)
	}
	jobs, err := bk.Jobs()
	if err != nil || len(jobs) != 2 || jobs[0].ID != "a" || jobs[1].ID != "d8" {
		t.Errorf("Jobs = %+v, %v", jobs, err)
	}
	if _, ok, _ := bk.Job("nope"); ok {
		t.Error("Job(nope) found")
	}
	// A record of the first format's states reads as the state it is now.
	old := append([]byte{jobVersion}, `{"id":"old","depth":8,"state":"running"}`...)
	if err := bk.db.Set(jobKey("old"), old, nil); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := bk.Job("old"); err != nil || !ok || got.State != JobSolving {
		t.Errorf(`Job(old) of state "running" = %+v, %v, %v: want state solving`, got, ok, err)
	}
	if err := bk.DeleteJob("old"); err != nil {
		t.Fatal(err)
	}
	if err := bk.DeleteJob("a"); err != nil {
		t.Fatal(err)
	}
	if jobs, _ := bk.Jobs(); len(jobs) != 1 {
		t.Errorf("Jobs after delete = %+v", jobs)
	}
	for name, bad := range map[string]Job{
		"no id":     {Depth: 4, State: JobPlanning},
		"bad root":  {ID: "x", Root: "9", Depth: 4, State: JobPlanning},
		"bad depth": {ID: "x", Root: "11", Depth: 1, State: JobPlanning},
		"bad state": {ID: "x", Depth: 4, State: "sleeping"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := bk.PutJob(bad); err == nil {
				t.Errorf("PutJob(%+v) succeeded", bad)
			}
		})
	}
	t.Run("corrupt record", func(t *testing.T) {
		if err := bk.db.Set(jobKey("bad"), []byte{jobVersion, '{'}, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		_, _, err := bk.Job("bad")
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Errorf("Job(bad) = %v, want a CorruptError", err)
		}
		if _, err := bk.Jobs(); !errors.As(err, &ce) {
			t.Errorf("Jobs = %v, want a CorruptError", err)
		}
	})
}
