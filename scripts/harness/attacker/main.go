// Command attacker runs, with one worker's key, the attacks of issue #21
// against a running c4book job, for scripts/harness/hostile.sh: it is a
// test tool, never part of a deployment. Each attack runs until the process
// is interrupted, and what it did is printed at the end, one line each.
//
//	attacker --nats URL --nkey FILE --job JOB --victim NAME [--attacks LIST]
//
// The attacks (--attacks, comma-separated; default all):
//
//	flood   results of 900 KB on a job nobody runs, and small junk on its
//	        own subject of the job, as fast as the server takes them
//	inject  requests the worker may make (stream info, the next task)
//	        whose reply subject is the victim's result subject, the job's
//	        status key or the job's task subject
//	hoard   takes 50 tasks, reports progress on them for ever, answers none
//	lie     takes 40 tasks at once, answers truly those it holds two copies
//	        of (cross-checked, it hopes), and lies on every other
//	acks    acks and terminates deliveries it guesses the subjects of
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

func main() {
	url := flag.String("nats", "", "URL of the job's NATS server")
	nkey := flag.String("nkey", "", "the attacker's worker key file")
	job := flag.String("job", "", "the job to attack")
	victim := flag.String("victim", "", "an honest worker's name")
	attacks := flag.String("attacks", "flood,inject,hoard,lie,acks", "the attacks to run")
	flag.Parse()
	if *url == "" || *nkey == "" || *job == "" || *victim == "" {
		fmt.Fprintln(os.Stderr, "attacker: --nats, --nkey, --job and --victim are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *url, *nkey, *job, *victim, strings.Split(*attacks, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "attacker:", err)
		os.Exit(1)
	}
}

// attacker is one worker key's connections.
type attacker struct {
	name, job, victim string
	conn              *queue.Conn // as a worker: tasks, signed results
	raw               *nats.Conn  // plain nats.go, for what a worker does not send
	counts            sync.Map    // what each attack did: string -> *atomic.Int64
}

func (a *attacker) count(what string) {
	v, _ := a.counts.LoadOrStore(what, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func run(ctx context.Context, url, nkey, job, victim string, attacks []string) error {
	k, err := queue.ReadKey(nkey)
	if err != nil {
		return err
	}
	a := &attacker{name: k.Name, job: job, victim: victim}
	if a.conn, err = queue.Connect(ctx, queue.Options{URL: url, Name: k.Name, NKey: nkey}); err != nil {
		return err
	}
	defer a.conn.Close()
	opt, err := nats.NkeyOptionFromSeed(nkey)
	if err != nil {
		return err
	}
	if a.raw, err = nats.Connect(url, opt, nats.CustomInboxPrefix(queue.WorkerInbox(k.Name)),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) { a.count("server errors (permission violations)") })); err != nil {
		return err
	}
	defer a.raw.Close()
	all := map[string]func(context.Context){"flood": a.flood, "inject": a.inject, "hoard": a.hoard, "lie": a.lie, "acks": a.acks}
	var wg sync.WaitGroup
	for _, name := range attacks {
		f, ok := all[name]
		if !ok {
			return fmt.Errorf("unknown attack %q", name)
		}
		wg.Go(func() { f(ctx) })
	}
	wg.Wait()
	var lines []string
	a.counts.Range(func(k, v any) bool {
		lines = append(lines, fmt.Sprintf("ATTACK %s: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	return nil
}

// flood publishes big results on a job nobody runs and junk on its own
// subject, through JetStream, counting what the server stored.
func (a *attacker) flood(ctx context.Context) {
	big := make([]byte, 900<<10)
	js, err := a.raw.JetStream()
	if err != nil {
		return
	}
	for i := 0; ctx.Err() == nil; i++ {
		subject := queue.WorkerResultSubject(fmt.Sprintf("junkjob%d", i%10), a.name)
		data := big
		if i%2 == 1 {
			subject, data = queue.WorkerResultSubject(a.job, a.name), []byte("junk")
		}
		if _, err := js.Publish(subject, data, nats.AckWait(time.Second)); err == nil {
			a.count("flood: junk stored")
		} else {
			a.count("flood: junk refused")
		}
	}
}

// inject sends requests a worker may send, with reply subjects it may not
// publish on.
func (a *attacker) inject(ctx context.Context) {
	replies := []string{
		queue.WorkerResultSubject(a.job, a.victim),
		"$KV.c4book-status.job." + a.job,
		queue.TaskLaneSubject(a.job, 0),
	}
	requests := []string{
		"$JS.API.STREAM.INFO." + queue.ResultStream,
		"$JS.API.CONSUMER.MSG.NEXT." + queue.TaskStream + "." + queue.LaneConsumer(0),
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		req := requests[i%len(requests)]
		var body []byte
		if strings.Contains(req, "MSG.NEXT") {
			body = []byte(`{"batch":1}`)
		}
		if err := a.raw.PublishRequest(req, replies[i%len(replies)], body); err == nil {
			a.count("inject: requests sent with another's reply subject")
		}
	}
}

// hoard takes tasks and holds them, reporting progress, never answering.
func (a *attacker) hoard(ctx context.Context) {
	src, err := a.conn.Tasks(ctx)
	if err != nil {
		return
	}
	var held []*queue.TaskMsg
	for len(held) < 50 && ctx.Err() == nil {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := src.Next(tctx)
		cancel()
		if err != nil {
			continue
		}
		held = append(held, m)
		a.count("hoard: tasks held")
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			for _, m := range held {
				_ = m.InProgress()
			}
		}
	}
}

// lie takes 40 tasks at once, again and again, answers truly those it
// holds two copies of and lies on the others.
func (a *attacker) lie(ctx context.Context) {
	src, err := a.conn.Tasks(ctx)
	if err != nil {
		return
	}
	var s *solver.Solver
	for ctx.Err() == nil {
		var held []*queue.TaskMsg
		for len(held) < 40 {
			tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			m, err := src.Next(tctx)
			cancel()
			if err != nil {
				break
			}
			held = append(held, m)
		}
		seen := map[string]int{}
		for _, m := range held {
			seen[fmt.Sprint(m.Task.Keys)]++
		}
		for _, m := range held {
			b, err := solver.NewBoard(int(m.Task.Width), int(m.Task.Height))
			if err != nil {
				continue
			}
			if s == nil || !s.Board().Equal(b) {
				if s, err = solver.New(b, 16<<20); err != nil {
					return
				}
			}
			pair := seen[fmt.Sprint(m.Task.Keys)] > 1
			scores := make([]int8, len(m.Task.Keys))
			for i, k := range m.Task.Keys {
				p, err := b.PositionFromKey(k)
				if err != nil {
					continue
				}
				v := s.Solve(p)
				if !pair {
					if v == 0 {
						v = -1
					} else {
						v = 0
					}
				}
				scores[i] = int8(v)
			}
			r := queue.Result{JobID: m.Task.JobID, TaskID: m.Task.TaskID, WorkerID: a.name, Keys: m.Task.Keys, Scores: scores}
			if err := a.conn.PublishResult(ctx, r); err != nil {
				return
			}
			_ = m.Ack(ctx)
			if pair {
				a.count("lie: tasks answered truly (a pair seen)")
			} else {
				a.count("lie: tasks lied about")
			}
		}
	}
}

// acks publishes acks and terminations on ack subjects it guesses: the
// stream's and the consumer's sequence numbers count up from 1.
func (a *attacker) acks(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for seq := 1; ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// The stream's sequence counts up from 1 over every lane; each
		// lane's consumer counts its own deliveries: guess both.
		lane := seq % queue.Lanes
		subject := fmt.Sprintf("$JS.ACK.%s.%s.1.%d.%d.%d.0", queue.TaskStream, queue.LaneConsumer(lane), seq, 1+seq/queue.Lanes, time.Now().UnixNano())
		body := "+ACK"
		if seq%2 == 0 {
			body = "+TERM"
		}
		if err := a.raw.Publish(subject, []byte(body)); err == nil {
			a.count("acks: guessed acks and terminations sent")
		}
	}
}
