// Package status reads the status of a cluster from the queue's status
// bucket, where each job's coordinator and each worker report (see
// queue.JobStatus and queue.WorkerStatus), and writes it for people: the
// tables of c4book status (Read, Print), and, for status --watch, the
// reports again every interval with each job's rate and ETA between its
// two latest reports (Watch, History); and which credentials may read it
// (CheckKey, ExplainError).
package status
