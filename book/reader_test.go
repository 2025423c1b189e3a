package book

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestReader_GetEntry(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "book")
	bk, entries := derivedBook(t, dir)
	r, err := bk.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("agrees with Book.GetEntry", func(t *testing.T) {
		// Backwards, so that the iterator also seeks to smaller keys.
		for i := len(entries) - 1; i >= 0; i-- {
			e := entries[i]
			v, ok, err := r.GetEntry(e.Depth, e.Key)
			if err != nil || !ok || v != e.Value {
				t.Fatalf("%v: Reader.GetEntry = %v, %v, %v", e, v, ok, err)
			}
		}
	})
	t.Run("missing positions", func(t *testing.T) {
		for _, c := range []struct {
			depth int
			key   uint64
		}{{7, entries[0].Key}, {5, entries[len(entries)-1].Key + 1}, {20, 0}, {0, 1}} {
			want, wantOK, _ := bk.GetEntry(c.depth, c.key)
			if v, ok, err := r.GetEntry(c.depth, c.key); err != nil || ok || wantOK {
				t.Errorf("GetEntry(%d, %#x) = %v, %v, %v; Book.GetEntry says %v, %v", c.depth, c.key, v, ok, err, want, wantOK)
			}
		}
	})
	t.Run("closed", func(t *testing.T) {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.GetEntry(0, entries[0].Key); !errors.Is(err, ErrClosed) {
			t.Errorf("GetEntry after Close = %v, want ErrClosed", err)
		}
		if err := r.Close(); !errors.Is(err, ErrClosed) {
			t.Errorf("second Close = %v, want ErrClosed", err)
		}
	})
	t.Run("corrupt value", func(t *testing.T) {
		bk.Close()
		p := mustParse(t, board5x4, "1234")
		writeRaw(t, dir, AppendKey(nil, 4, p.CanonicalKey()), []byte{0x11})
		bk := openBook(t, dir, &Options{ReadOnly: true})
		r, err := bk.NewReader()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var ce *CorruptError
		if _, _, err := r.GetEntry(4, p.CanonicalKey()); !errors.As(err, &ce) {
			t.Errorf("GetEntry of a corrupt value = %v, want a *CorruptError", err)
		}
	})
}
