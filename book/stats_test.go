package book

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestBook_Stats(t *testing.T) {
	t.Parallel()
	bk, entries := derivedBook(t, filepath.Join(t.TempDir(), "book"))
	// A position whose player to move makes four at once, derived.
	win := mustParse(t, board5x4, "112233")
	atOnceEntry := EntryOf(win, Value{Score: board5x4.WinNowScore(6), Origin: OriginDerived})
	putAll(t, bk, []Entry{atOnceEntry})
	entries = slices.DeleteFunc(slices.Clone(entries), func(e Entry) bool { return e.Depth == 6 && e.Key == atOnceEntry.Key })
	entries = append(entries, atOnceEntry)
	if _, err := bk.PutJob(Job{ID: "j", Depth: 6, State: JobDone}); err != nil {
		t.Fatal(err)
	}
	st, err := bk.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// The paced count is the same count, pauses and all.
	if bg, err := bk.StatsInBackground(); err != nil || !reflect.DeepEqual(bg, st) {
		t.Errorf("StatsInBackground = %+v, %v; want %+v", bg, err, st)
	}
	if bg, err := bk.stats(100); err != nil || !reflect.DeepEqual(bg, st) || st.Entries < 1000 {
		t.Errorf("stats pausing every 100 entries of %d = %+v, %v; want %+v", st.Entries, bg, err, st)
	}
	perDepth := map[int]int64{}
	for _, e := range entries {
		perDepth[e.Depth]++
	}
	if st.Entries != int64(len(entries)) || len(st.Depths) != 7 || st.Jobs != 1 || st.Board != "5x4" {
		t.Errorf("stats %+v", st)
	}
	for _, d := range st.Depths {
		if d.Entries != perDepth[d.Depth] {
			t.Errorf("depth %d: %d entries, want %d", d.Depth, d.Entries, perDepth[d.Depth])
		}
	}
	var byOrigin [numOrigins]int64
	for _, e := range entries {
		byOrigin[e.Origin]++
	}
	if st.ByOrigin != byOrigin {
		t.Errorf("by origin %v, want %v", st.ByOrigin, byOrigin)
	}
	if st.DiskBytes == 0 {
		t.Error("no bytes on disk")
	}
	var atOnce int64
	for _, e := range entries {
		if p, _ := board5x4.PositionFromKey(e.Key); e.Origin == OriginDerived && p.CanWinNext() {
			atOnce++
		}
	}
	if st.AtOnce != atOnce || atOnce == 0 {
		t.Errorf("%d scored at once, want %d (at least 1)", st.AtOnce, atOnce)
	}

	if err := bk.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, err = bk.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after compaction: %d tables bytes, %.2f bytes/entry", st.TableBytes, float64(st.TableBytes)/float64(st.Entries))
	if st.TableBytes == 0 {
		t.Error("no table bytes after compaction")
	}
	levels, err := bk.db.SSTables()
	if err != nil {
		t.Fatal(err)
	}
	for l, tables := range levels[:len(levels)-1] {
		if len(tables) != 0 {
			t.Errorf("level %d holds %d tables after Compact", l, len(tables))
		}
	}
}

func TestBook_DepthRange(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	t.Run("empty book", func(t *testing.T) {
		if lo, hi, ok, err := bk.DepthRange(); err != nil || ok {
			t.Errorf("DepthRange = %d, %d, %v, %v; want not ok", lo, hi, ok, err)
		}
	})
	t.Run("depths 2..5", func(t *testing.T) {
		var entries []Entry
		for _, e := range solvedEntries(t, board5x4, 5) {
			if e.Depth >= 2 {
				entries = append(entries, e)
			}
		}
		putAll(t, bk, entries)
		if _, err := bk.PutJob(Job{ID: "j", Depth: 5, State: JobDone}); err != nil {
			t.Fatal(err)
		}
		if lo, hi, ok, err := bk.DepthRange(); err != nil || !ok || lo != 2 || hi != 5 {
			t.Errorf("DepthRange = %d, %d, %v, %v; want 2, 5, true", lo, hi, ok, err)
		}
	})
}

func TestBook_DiskUsage(t *testing.T) {
	t.Parallel()
	bk := newBook(t, board5x4)
	putAll(t, bk, solvedEntries(t, board5x4, 5))
	disk, _ := bk.DiskUsage()
	st, err := bk.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if disk == 0 || st.DiskBytes != disk {
		t.Errorf("DiskUsage = %d, Stats.DiskBytes = %d", disk, st.DiskBytes)
	}
}
