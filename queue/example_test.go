package queue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/c4book/c4book/queue"
	"github.com/c4book/c4book/solver"
)

// Example runs a coordinator and a worker on an embedded server: the
// coordinator publishes a task, the worker takes it, publishes its result
// and acks it, and the coordinator reads the result.
func Example() {
	dir, err := os.MkdirTemp("", "c4book-queue-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := queue.StartServer(queue.ServerOptions{StoreDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Coordinator: set up the streams, open the job's results (the result
	// stream stores the results of open jobs only) and publish the
	// positions to solve.
	coord, err := srv.Connect("coordinator")
	if err != nil {
		log.Fatal(err)
	}
	defer coord.Close()
	if err := coord.EnsureStreams(ctx, queue.StreamConfig{AckWait: 30 * time.Second, MaxDeliver: 3}); err != nil {
		log.Fatal(err)
	}
	results, err := coord.Results(ctx, "depth-1")
	if err != nil {
		log.Fatal(err)
	}
	p := solver.Standard.NewPosition()
	p.Play(3)
	task := queue.Task{JobID: "depth-1", TaskID: 1, Width: 7, Height: 6, Keys: []uint64{p.Key()}}
	if err := coord.PublishTasks(ctx, []queue.Task{task}); err != nil {
		log.Fatal(err)
	}

	// Worker: take one task, solve it, publish the result, then ack.
	worker, err := srv.Connect("worker")
	if err != nil {
		log.Fatal(err)
	}
	defer worker.Close()
	tasks, err := worker.Tasks(ctx)
	if err != nil {
		log.Fatal(err)
	}
	m, err := tasks.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("worker got", &m.Task, "delivery", m.Delivered)
	res := queue.Result{JobID: m.Task.JobID, TaskID: m.Task.TaskID, WorkerID: "host-1/1", Keys: m.Task.Keys, Scores: []int8{-1}}
	if err := worker.PublishResult(ctx, res); err != nil {
		log.Fatal(err)
	}
	if err := m.Ack(ctx); err != nil {
		log.Fatal(err)
	}

	// Coordinator: read the results of the job, store them, then ack.
	msgs, bad, err := results.Fetch(ctx, 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range msgs {
		fmt.Println("coordinator got", &r.Result, "score", r.Result.Scores[0])
		if err := r.Ack(ctx); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("malformed:", len(bad))
	// Output:
	// worker got task depth-1/1 (7x6, 1 keys) delivery 1
	// coordinator got result depth-1/1 from host-1/1 (1 scores) score -1
	// malformed: 0
}
