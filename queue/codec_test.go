package queue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/c4book/c4book/solver"
)

// emptyKey returns the key of the empty 7x6 board.
func emptyKey() uint64 {
	p := solver.Standard.NewPosition()
	return p.Key()
}

func TestTask_MarshalBinary(t *testing.T) {
	cases := []struct {
		name string
		task Task
		size int
	}{
		{"one key", Task{JobID: "j", TaskID: 0, Width: 7, Height: 6, Keys: []uint64{emptyKey()}}, 15 + 1 + 8},
		{"many keys", testTask(t, "depth-8_2024", 1<<40+7, 300), 15 + 12 + 8*300},
		{"most keys", testTask(t, strings.Repeat("x", MaxJobIDLen), ^uint64(0), MaxKeys), 15 + MaxJobIDLen + 8*MaxKeys},
		{"small board", Task{JobID: "a-b", TaskID: 9, Width: 4, Height: 4, Keys: positionKeys(t, solver.MustBoard(4, 4), 20)}, 15 + 3 + 8*20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := c.task.MarshalBinary()
			if err != nil {
				t.Fatalf("MarshalBinary: %v", err)
			}
			if len(data) != c.size {
				t.Errorf("encoded in %d bytes, want %d", len(data), c.size)
			}
			var got Task
			if err := got.UnmarshalBinary(data); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			if !reflect.DeepEqual(got, c.task) {
				t.Errorf("round trip: got %v, want %v", &got, &c.task)
			}
		})
	}
}

// TestTask_MarshalBinary_layout pins the byte layout drawn in codec.go.
func TestTask_MarshalBinary_layout(t *testing.T) {
	task := Task{JobID: "jb", TaskID: 0x0102030405060708, Width: 7, Height: 6, Keys: []uint64{emptyKey()}}
	data, err := task.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{'T', 1, 7, 6, 1, 2, 3, 4, 5, 6, 7, 8, 2, 'j', 'b', 0, 1}
	want = binary.BigEndian.AppendUint64(want, task.Keys[0])
	if !bytes.Equal(data, want) {
		t.Errorf("encoded\n%x, want\n%x", data, want)
	}
}

func TestTask_UnmarshalBinary(t *testing.T) {
	good, err := (&Task{JobID: "job", TaskID: 5, Width: 7, Height: 6, Keys: positionKeys(t, solver.Standard, 3)}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	// The queue checks bytes: a key that is no position is the worker's to
	// refuse (worker.decodeTask).
	var notPosition Task
	if err := notPosition.UnmarshalBinary(edit(func(b []byte) []byte { binary.BigEndian.PutUint64(b[26:], 1<<60); return b })); err != nil || notPosition.Keys[1] != 1<<60 {
		t.Errorf("UnmarshalBinary of a key that is no position: %v, %v", notPosition.Keys, err)
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "task: 0 bytes, shorter than the 13-byte header"},
		{"short header", good[:12], "shorter than the 13-byte header"},
		{"result kind", edit(func(b []byte) []byte { b[0] = 'R'; return b }), "kind byte 0x52"},
		{"version 2", edit(func(b []byte) []byte { b[1] = 2; return b }), "task: version 2, this program reads version 1"},
		{"version 0", edit(func(b []byte) []byte { b[1] = 0; return b }), "version 0"},
		{"job longer than message", edit(func(b []byte) []byte { b[12] = 200; return b }), "task: job id: 200 bytes announced"},
		{"job id with dot", edit(func(b []byte) []byte { b[14] = '.'; return b }), `job id "j.b"`},
		{"empty job id", edit(func(b []byte) []byte { return append(b[:12:12], append([]byte{0}, b[16:]...)...) }), "empty job id"},
		{"no count", good[:16], "ends before the key count"},
		{"3 keys, 2 present", good[:len(good)-8], "task: 3 keys announced, 2 present"},
		{"trailing bytes", append(bytes.Clone(good), 0), "task: 1 trailing bytes after 3 keys"},
		{"zero keys", edit(func(b []byte) []byte { b[16], b[17] = 0, 0; return b[:18] }), "task: 0 keys, want 1..4096"},
		{"4097 keys", edit(func(b []byte) []byte { binary.BigEndian.PutUint16(b[16:], MaxKeys+1); return b }), "task: 4097 keys"},
		{"empty board", edit(func(b []byte) []byte { b[2] = 0; return b }), "board 0x6"},
		{"board too big", edit(func(b []byte) []byte { b[2], b[3] = 8, 8; return b }), "board 8x8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Task{JobID: "untouched"}
			err := got.UnmarshalBinary(c.data)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("UnmarshalBinary(%x) = %v, want an error wrapping ErrMalformed", c.data, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if got.JobID != "untouched" {
				t.Errorf("task changed on error: %v", &got)
			}
		})
	}
}

func TestTask_Validate(t *testing.T) {
	cases := []struct {
		name string
		task Task
		want string
	}{
		{"no job", Task{Width: 7, Height: 6, Keys: []uint64{1}}, "empty job id"},
		{"long job", Task{JobID: strings.Repeat("j", MaxJobIDLen+1), Width: 7, Height: 6, Keys: []uint64{1}}, "at most 64"},
		{"subject wildcard", Task{JobID: "a*", Width: 7, Height: 6, Keys: []uint64{1}}, `byte 1 ('*')`},
		{"no keys", Task{JobID: "j", Width: 7, Height: 6}, "0 keys"},
		{"too many keys", Task{JobID: "j", Width: 7, Height: 6, Keys: make([]uint64, MaxKeys+1)}, "4097 keys"},
		{"no board", Task{JobID: "j", Keys: []uint64{1}}, "board 0x0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.task.Validate()
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want ErrMalformed saying %q", err, c.want)
			}
			if _, err := c.task.MarshalBinary(); !errors.Is(err, ErrMalformed) {
				t.Errorf("MarshalBinary = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestResult_MarshalBinary(t *testing.T) {
	task := testTask(t, "job-1", 77, 50)
	full := resultFor(testTask(t, strings.Repeat("J", MaxJobIDLen), ^uint64(0), MaxKeys), strings.Repeat("~", MaxWorkerIDLen))
	for i := range full.Scores {
		full.Scores[i] = int8(i%(2*solver.MaxScore+1) - solver.MaxScore)
	}
	full.Nodes, full.Elapsed = ^uint64(0), time.Duration(1<<63-1)
	cases := []struct {
		name   string
		result Result
		size   int
	}{
		{"typical", resultFor(task, "host-3/1234"), 30 + 5 + 11 + 9*50},
		{"extremes", full, 30 + MaxJobIDLen + MaxWorkerIDLen + 9*MaxKeys},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := c.result.MarshalBinary()
			if err != nil {
				t.Fatalf("MarshalBinary: %v", err)
			}
			if len(data) != c.size {
				t.Errorf("encoded in %d bytes, want %d", len(data), c.size)
			}
			var got Result
			if err := got.UnmarshalBinary(data); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			if !reflect.DeepEqual(got, c.result) {
				t.Errorf("round trip: got %v, want %v", &got, &c.result)
			}
		})
	}
}

// TestResult_MarshalBinary_layout pins the byte layout drawn in codec.go.
func TestResult_MarshalBinary_layout(t *testing.T) {
	r := Result{JobID: "j", TaskID: 3, WorkerID: "w", Scores: []int8{-2}, Keys: []uint64{0x10}, Nodes: 0x0a, Elapsed: 0x0b}
	data, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{'R', 1, 0, 0, 0, 0, 0, 0, 0, 3, 1, 'j', 1, 'w',
		0, 0, 0, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0x0b,
		0, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 0xfe}
	if !bytes.Equal(data, want) {
		t.Errorf("encoded\n%x, want\n%x", data, want)
	}
}

func TestResult_UnmarshalBinary(t *testing.T) {
	r := resultFor(testTask(t, "job", 5, 3), "w1")
	good, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Offsets in good: job at 11..14, worker length at 14, worker 15..17,
	// nodes 17, elapsed 25, count 33, keys 35, scores 59.
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "result: 0 bytes, shorter than the 11-byte header"},
		{"task kind", edit(func(b []byte) []byte { b[0] = 'T'; return b }), "kind byte 0x54"},
		{"version 9", edit(func(b []byte) []byte { b[1] = 9; return b }), "result: version 9"},
		{"job longer than message", edit(func(b []byte) []byte { b[10] = 100; return b }), "result: job id: 100 bytes announced"},
		{"ends after job", good[:14], "ends before the worker id"},
		{"worker longer than message", edit(func(b []byte) []byte { b[14] = 250; return b }), "result: worker id: 250 bytes announced"},
		{"empty worker", edit(func(b []byte) []byte { b[14] = 0; return append(b[:15:15], b[17:]...) }), "empty worker id"},
		{"worker with space", edit(func(b []byte) []byte { b[15] = ' '; return b }), "not printable ASCII"},
		{"worker with control byte", edit(func(b []byte) []byte { b[16] = 0x7f; return b }), "not printable ASCII"},
		{"no nodes", good[:20], "want 16 for nodes and elapsed"},
		{"negative elapsed", edit(func(b []byte) []byte { b[25] = 0x80; return b }), "elapsed time"},
		{"3 keys, 2 present", good[:len(good)-9], "result: 3 keys announced, 2 present"},
		{"trailing bytes", append(bytes.Clone(good), 1, 2), "result: 2 trailing bytes after 3 keys"},
		{"zero keys", edit(func(b []byte) []byte { b[33], b[34] = 0, 0; return b[:35] }), "result: 0 keys"},
		{"score too high", edit(func(b []byte) []byte { b[len(b)-1] = solver.MaxScore + 1; return b }), "is 33, outside [-32, 32]"},
		{"score too low", edit(func(b []byte) []byte { b[len(b)-2] = 0x80; return b }), "is -128"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Result{JobID: "untouched"}
			err := got.UnmarshalBinary(c.data)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("UnmarshalBinary(%x) = %v, want an error wrapping ErrMalformed", c.data, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if got.JobID != "untouched" {
				t.Errorf("result changed on error: %v", &got)
			}
		})
	}
}

func TestResult_Validate(t *testing.T) {
	base := resultFor(testTask(t, "j", 1, 2), "w")
	cases := []struct {
		name string
		edit func(r *Result)
		want string
	}{
		{"scores missing", func(r *Result) { r.Scores = r.Scores[:1] }, "1 scores for 2 keys"},
		{"bad worker", func(r *Result) { r.WorkerID = "" }, "empty worker id"},
		{"long worker", func(r *Result) { r.WorkerID = strings.Repeat("w", MaxWorkerIDLen+1) }, "at most 128"},
		{"bad job", func(r *Result) { r.JobID = "a b" }, `job id "a b"`},
		{"negative elapsed", func(r *Result) { r.Elapsed = -1 }, "negative"},
		{"no keys", func(r *Result) { r.Keys, r.Scores = nil, nil }, "0 keys"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := base
			r.Keys = append([]uint64(nil), base.Keys...)
			r.Scores = append([]int8(nil), base.Scores...)
			c.edit(&r)
			err := r.Validate()
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want ErrMalformed saying %q", err, c.want)
			}
			if _, err := r.MarshalBinary(); !errors.Is(err, ErrMalformed) {
				t.Errorf("MarshalBinary = %v, want ErrMalformed", err)
			}
		})
	}
}

// FuzzTaskUnmarshalBinary checks that the task decoder never panics, that
// its errors wrap ErrMalformed, and that what it accepts encodes back to
// the same bytes (so the format has one encoding per task).
func FuzzTaskUnmarshalBinary(f *testing.F) {
	for _, task := range []Task{testTask(f, "job", 1, 3), {JobID: "j", Width: 4, Height: 4, Keys: []uint64{1}}} {
		data, err := task.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var task Task
		if err := task.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("UnmarshalBinary(%x): error %v does not wrap ErrMalformed", data, err)
			}
			return
		}
		enc, err := task.MarshalBinary()
		if err != nil || !bytes.Equal(enc, data) {
			t.Fatalf("UnmarshalBinary(%x) = %v, which encodes as %x, %v", data, &task, enc, err)
		}
	})
}

// FuzzResultUnmarshalBinary is FuzzTaskUnmarshalBinary for results.
func FuzzResultUnmarshalBinary(f *testing.F) {
	r := resultFor(testTask(f, "job", 1, 3), "w-1")
	r.Scores[1] = -solver.MaxScore
	data, err := r.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Result
		if err := r.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("UnmarshalBinary(%x): error %v does not wrap ErrMalformed", data, err)
			}
			return
		}
		enc, err := r.MarshalBinary()
		if err != nil || !bytes.Equal(enc, data) {
			t.Fatalf("UnmarshalBinary(%x) = %v, which encodes as %x, %v", data, &r, enc, err)
		}
	})
}
