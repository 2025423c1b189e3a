package book

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/c4book/c4book/solver"
)

func TestAppendKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		depth int
		key   uint64
		want  []byte
	}{
		{0, 0, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{4, 0x0102030405060708, []byte{4, 1, 2, 3, 4, 5, 6, 7, 8}},
		{maxDepth, 1<<64 - 1, []byte{64, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	}
	for _, c := range cases {
		t.Run(FormatKey(c.want), func(t *testing.T) {
			k := AppendKey(nil, c.depth, c.key)
			if !bytes.Equal(k, c.want) {
				t.Fatalf("AppendKey(%d, %#x) = %x, want %x", c.depth, c.key, k, c.want)
			}
			depth, key, err := DecodeKey(k)
			if err != nil || depth != c.depth || key != c.key {
				t.Errorf("DecodeKey(%x) = %d, %#x, %v", k, depth, key, err)
			}
		})
	}
}

func TestAppendKey_order(t *testing.T) {
	t.Parallel()
	// Byte order is (depth, key) order: a depth is one contiguous range.
	a := AppendKey(nil, 3, 1<<40)
	b := AppendKey(nil, 4, 1)
	c := AppendKey(nil, 4, 2)
	if bytes.Compare(a, b) >= 0 || bytes.Compare(b, c) >= 0 {
		t.Errorf("keys out of order: %x %x %x", a, b, c)
	}
}

func TestDecodeKey_errors(t *testing.T) {
	t.Parallel()
	cases := map[string][]byte{
		"empty":     nil,
		"truncated": {3, 0, 0, 1},
		"too long":  {3, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"depth":     {65, 0, 0, 0, 0, 0, 0, 0, 0},
		"meta":      bookKey,
	}
	for name, k := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := DecodeKey(k)
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeKey(%x) = %v, want a CorruptError", k, err)
			}
		})
	}
}

func TestAppendValue(t *testing.T) {
	t.Parallel()
	for _, o := range Origins {
		for score := solver.MinScore; score <= solver.MaxScore; score++ {
			v := Value{Score: score, Origin: o}
			enc, err := AppendValue(nil, v)
			if err != nil {
				t.Fatalf("AppendValue(%v): %v", v, err)
			}
			if len(enc) != valueLen1 {
				t.Fatalf("AppendValue(%v) = %x: %d bytes", v, enc, len(enc))
			}
			got, err := DecodeValue(nil, enc)
			if err != nil || got != v {
				t.Fatalf("DecodeValue(%x) = %v, %v; want %v", enc, got, err, v)
			}
		}
	}
	t.Run("layout", func(t *testing.T) {
		enc, _ := AppendValue(nil, Value{Score: -2, Origin: OriginDerived})
		if want := []byte{0x12, 0xfe}; !bytes.Equal(enc, want) {
			t.Errorf("AppendValue(-2, derived) = %x, want %x", enc, want)
		}
	})
	t.Run("errors", func(t *testing.T) {
		for _, v := range []Value{{Score: 33, Origin: OriginSolved}, {Score: -33, Origin: OriginSolved}, {Score: 0}, {Score: 0, Origin: 4},
			{Score: 1, Origin: OriginDerived, Worker: 1}, {Score: 1, Origin: OriginImported, Worker: 7}} {
			if _, err := AppendValue(nil, v); err == nil {
				t.Errorf("AppendValue(%v) succeeded", v)
			}
		}
	})
}

// TestAppendValue_worker: a solved value with a worker number is written
// in version 2, the number as a uvarint in its shortest form; without one,
// in version 1, as before version 2 existed. Both read back.
func TestAppendValue_worker(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    Value
		want []byte
	}{
		{Value{Score: 5, Origin: OriginSolved}, []byte{0x11, 0x05}},
		{Value{Score: 5, Origin: OriginSolved, Worker: 1}, []byte{0x21, 0x05, 0x01}},
		{Value{Score: -3, Origin: OriginSolved, Worker: 127}, []byte{0x21, 0xfd, 0x7f}},
		{Value{Score: 0, Origin: OriginSolved, Worker: 128}, []byte{0x21, 0x00, 0x80, 0x01}},
		{Value{Score: 18, Origin: OriginSolved, Worker: 300}, []byte{0x21, 0x12, 0xac, 0x02}},
		{Value{Score: -18, Origin: OriginSolved, Worker: math.MaxUint32}, []byte{0x21, 0xee, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{Value{Score: -2, Origin: OriginDerived}, []byte{0x12, 0xfe}},
		{Value{Score: 7, Origin: OriginImported}, []byte{0x13, 0x07}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v", c.v), func(t *testing.T) {
			enc, err := AppendValue(nil, c.v)
			if err != nil || !bytes.Equal(enc, c.want) {
				t.Fatalf("AppendValue(%+v) = %x, %v; want %x", c.v, enc, err, c.want)
			}
			got, err := DecodeValue(nil, enc)
			if err != nil || got != c.v {
				t.Fatalf("DecodeValue(%x) = %+v, %v; want %+v", enc, got, err, c.v)
			}
		})
	}
}

// TestDecodeValue_version1 reads values as the version before workers were
// recorded wrote them (the bytes of its tests): a book written then reads
// as it was, its solved entries of worker 0.
func TestDecodeValue_version1(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		enc  []byte
		want Value
	}{
		{[]byte{0x11, 0x00}, Value{Score: 0, Origin: OriginSolved}},
		{[]byte{0x11, 0x12}, Value{Score: 18, Origin: OriginSolved}},
		{[]byte{0x12, 0xfe}, Value{Score: -2, Origin: OriginDerived}},
		{[]byte{0x13, 0xee}, Value{Score: -18, Origin: OriginImported}},
	} {
		got, err := DecodeValue(nil, c.enc)
		if err != nil || got != c.want {
			t.Errorf("DecodeValue(%x) = %+v, %v; want %+v", c.enc, got, err, c.want)
		}
	}
}

func TestDecodeValue_errors(t *testing.T) {
	t.Parallel()
	key := AppendKey(nil, 5, 0xabc)
	cases := map[string]struct {
		value []byte
		msg   string
	}{
		"empty":              {nil, "empty value"},
		"truncated":          {[]byte{0x11}, "1 bytes"},
		"too long":           {[]byte{0x11, 0, 0}, "3 bytes"},
		"version 0":          {[]byte{0x01, 0}, "version 0"},
		"version 3":          {[]byte{0x31, 0, 1}, "version 3"},
		"v2 no worker":       {[]byte{0x21, 0}, "version 2 value is 2 bytes"},
		"v2 worker 0":        {[]byte{0x21, 0, 0}, "worker number 0"},
		"v2 derived":         {[]byte{0x22, 0, 1}, "derived score"},
		"v2 imported":        {[]byte{0x23, 0, 1}, "imported score"},
		"v2 truncated":       {[]byte{0x21, 0, 0x80}, "truncated"},
		"v2 long form":       {[]byte{0x21, 0, 0x81, 0x00}, "not its shortest form"},
		"v2 trailing":        {[]byte{0x21, 0, 0x01, 0x01}, "1 bytes after"},
		"v2 above uint32":    {[]byte{0x21, 0, 0x80, 0x80, 0x80, 0x80, 0x10}, "above 4294967295"},
		"v2 varint overflow": {[]byte{0x21, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "above 4294967295"},
		"v2 score 40":        {[]byte{0x21, 40, 1}, "score 40"},
		"origin 0":           {[]byte{0x10, 0}, "origin(0)"},
		"origin 9":           {[]byte{0x19, 0}, "origin(9)"},
		"score 33":           {[]byte{0x11, 33}, "score 33"},
		"score -128":         {[]byte{0x11, 0x80}, "score -128"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeValue(key, c.value)
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("DecodeValue(%x) = %v, want a CorruptError", c.value, err)
			}
			if !bytes.Equal(ce.Key, key) || !strings.Contains(err.Error(), "depth 5 key 0xabc") || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q: want key depth 5 key 0xabc and %q", err, c.msg)
			}
		})
	}
}

func FuzzDecodeValue(f *testing.F) {
	f.Add([]byte{0x11, 0x00})
	f.Add([]byte{0x13, 0xfe})
	f.Add([]byte{0x11})
	f.Add([]byte{0x21, 0x05, 0x01})
	f.Add([]byte{0x21, 0x00, 0x80, 0x01})
	f.Add([]byte{0x21, 0xee, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{0x21, 0x00, 0x81, 0x00})
	f.Fuzz(func(t *testing.T, v []byte) {
		val, err := DecodeValue([]byte{1, 2, 3}, v)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeValue(%x): error %v does not wrap ErrCorrupt", v, err)
			}
			return
		}
		enc, err := AppendValue(nil, val)
		if err != nil || !bytes.Equal(enc, v) {
			t.Fatalf("DecodeValue(%x) = %v, which encodes as %x, %v", v, val, enc, err)
		}
	})
}

func FuzzDecodeKey(f *testing.F) {
	f.Add(AppendKey(nil, 4, 0x1234))
	f.Add([]byte{0xff, 'B'})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, k []byte) {
		depth, key, err := DecodeKey(k)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeKey(%x): error %v does not wrap ErrCorrupt", k, err)
			}
			_ = FormatKey(k)
			return
		}
		if enc := AppendKey(nil, depth, key); !bytes.Equal(enc, k) {
			t.Fatalf("DecodeKey(%x) = %d, %#x, which encodes as %x", k, depth, key, enc)
		}
	})
}

func FuzzDecodeBookRecord(f *testing.F) {
	f.Add([]byte{1, 7, 6})
	f.Add([]byte{2, 7, 6, 0})
	f.Add([]byte{1, 0, 200})
	f.Fuzz(func(t *testing.T, v []byte) {
		_, b, err := decodeBookRecord(v)
		if err == nil && b == nil {
			t.Fatalf("decodeBookRecord(%x): no board and no error", v)
		}
	})
}
