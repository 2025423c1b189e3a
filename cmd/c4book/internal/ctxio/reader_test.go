package ctxio

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// doneWatch is a context that closes asked when its Done channel is first
// asked for: a Reader's Read asks for it when it waits.
type doneWatch struct {
	context.Context
	asked chan struct{}
	once  sync.Once
}

func (c *doneWatch) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

func TestReader_Read(t *testing.T) {
	t.Parallel()
	t.Run("reads everything", func(t *testing.T) {
		text := strings.Repeat("0123456789abcdef\n", 20_000) // several chunks
		for _, c := range []struct {
			name, want string
			r          io.Reader
		}{
			{"whole", text, strings.NewReader(text)},
			{"one byte", text[:3000], iotest.OneByteReader(strings.NewReader(text[:3000]))},
			{"half", text, iotest.HalfReader(strings.NewReader(text))},
		} {
			t.Run(c.name, func(t *testing.T) {
				cr := NewReader(context.Background(), c.r)
				defer cr.Close()
				got, err := io.ReadAll(cr)
				if err != nil {
					t.Fatal(err)
				}
				if want := c.want; string(got) != want {
					t.Errorf("read %d bytes, want %d", len(got), len(want))
				}
			})
		}
	})
	t.Run("read error", func(t *testing.T) {
		boom := errors.New("boom")
		cr := NewReader(context.Background(), io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)))
		defer cr.Close()
		got, err := io.ReadAll(cr)
		if string(got) != "abc" || !errors.Is(err, boom) {
			t.Errorf("ReadAll = %q, %v; want \"abc\", boom", got, err)
		}
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		// The context ends once Read waits on it (asks for its Done
		// channel), not before: a Read called with an ended context
		// returns before it waits.
		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithCancel(context.Background())
		watched := &doneWatch{Context: ctx, asked: make(chan struct{})}
		cr := NewReader(watched, pr)
		defer cr.Close()
		go func() {
			<-watched.asked
			cancel()
		}()
		if _, err := cr.Read(make([]byte, 10)); !errors.Is(err, ErrStopped) {
			t.Errorf("Read = %v, want ErrStopped", err)
		}
	})
	t.Run("cancelled before a ready chunk", func(t *testing.T) {
		// Data is waiting in the channel when Read is called with an ended
		// context: Read must say interrupted every time, not pick at random.
		for i := range 200 {
			ctx, cancel := context.WithCancel(context.Background())
			cr := NewReader(ctx, strings.NewReader("12 0\n"))
			for len(cr.chunks) == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
			_, err := cr.Read(make([]byte, 10))
			cr.Close()
			if !errors.Is(err, ErrStopped) {
				t.Fatalf("try %d: Read = %v, want ErrStopped", i, err)
			}
		}
	})
}
