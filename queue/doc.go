// Package queue is everything c4book does with NATS: the embedded server,
// connections, the JetStream streams and consumers, the subjects, and the
// byte format of the messages. It is the only package that imports nats.
//
// # Topology
//
//	coordinator --PublishTasks--> C4BOOK_TASKS   "c4book.tasks.<job>.<lane>"   (work queue)
//	                                   |  64 lanes, a durable pull consumer each,
//	                                   v  "c4book-lane-00".."c4book-lane-63"
//	worker      <--TaskSource.Next-----+  from one lane at a time (lanes.go)
//	worker      --PublishResult-->  C4BOOK_RESULTS "c4book.results.<job>.<worker>" (work queue)
//	                                   |  durable pull consumer "c4book-coord-<job>",
//	                                   v  one per job, filtered on the job's subjects
//	coordinator <--ResultSource.Fetch--+
//
//	both        <-> KV bucket "c4book-status": "job.<job>" and "worker.<id>" (JSON)
//
// A coordinator puts each stretch of its job's order in a lane, and a
// worker takes whole lanes, so that its table sees the neighbours of its
// tasks (lanes.go). A worker thread pulls one task at a time, and the next
// while it solves one (AckWait starts when the server delivers, so a
// worker holds no task it will not start soon), sends InProgress while it
// holds a task, publishes the result and then acks the task.
// A task whose worker dies is redelivered after AckWait; a task delivered
// MaxDeliver times without an ack stays in the stream and the server emits
// an advisory, which WatchMaxDeliveries turns into a call, so the
// coordinator can report it (TaskBySeq) and drop it (DeleteTask).
//
// A worker publishes its results on a subject that carries its id
// (escaped to one token, WorkerResultSubject); workers before this scheme
// published on "c4book.results.<job>", which the coordinator still reads.
// On a server with worker keys (ServerOptions.Workers, auth.go) a worker
// may publish on its own subject only, so the subject is who sent the
// result (ResultMsg.Publisher); WorkerPermissions lists every subject a
// worker uses. An observer's key reads the status bucket and nothing
// else (ObserverPermissions): what c4book status shows.
//
// Message ids make publishing idempotent within the streams' duplicate
// window (DuplicateWindow): a task is "<job>/<task>", a result
// "<job>/<task>/<worker>". Every publish can be retried with the same
// message.
//
// Code that takes tasks or results depends on the part it uses through
// an interface of its own; its tests build messages with NewTaskMsg and
// NewResultMsg, whose replies (ack, nak, ...) go to a Replier of the test.
//
// The files: server.go (embedded server), auth.go (the keys of workers and
// observers, and their permissions), conn.go (connecting),
// subjects.go (names and ids), lanes.go (the lanes of the task stream,
// and how a worker chooses its lane), streams.go (stream and consumer setup),
// codec.go (message format), tasks.go (coordinator and worker sides of
// tasks, failed tasks), results.go (results), pull.go (pulling and
// publishing with retries), status.go (the status bucket), errors.go
// (sentinel errors).
package queue
