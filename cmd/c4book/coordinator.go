package main

import (
	"errors"

	"github.com/spf13/cobra"
)

const coordinatorLong = `Run the coordinator of a job alone: plan the positions, publish the tasks,
store the results workers send back, and derive the shallower scores. The
workers run elsewhere: "c4book worker --nats URL" on each machine.

With --nats URL (nats.url) the coordinator uses that NATS server. With
--listen HOST:PORT (nats.listen) it starts its embedded server with
JetStream (data in nats.store-dir, default the directory "nats" inside the
book) and exposes it on that address. An exposed server requires
authentication: workers registered in the book with keys of their own
("c4book worker add", each then allowed only what a worker does), or
nats.token, or nats.user and nats.password, or client certificates
(nats.tls.cert, nats.tls.key and nats.tls.ca, the authority client
certificates must be signed by); nats.tls.cert and nats.tls.key
alone make the server speak TLS. The command prints the URL workers use
and the command line to run on each worker machine (secrets shown as
placeholders).

Progress, Ctrl-C (status 130, resumed by running the command again),
failed tasks and the summary work as for "c4book generate".`

const coordinatorExample = `  C4BOOK_NATS_TOKEN=s3cret c4book coordinator --depth 12 --listen 0.0.0.0:4222
  c4book coordinator --depth 12 --root 4444 --nats nats://nats.lan:4222`

// newCoordinatorCommand builds "c4book coordinator".
func newCoordinatorCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "coordinator --depth D [--root MOVES] [--book PATH] (--nats URL | --listen HOST:PORT)",
		Short:   "Run only the coordinator of a job, for workers on other machines",
		Long:    coordinatorLong,
		Example: coordinatorExample,
		Args:    checkArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if cfg.NATS.URL == "" && cfg.NATS.Listen == "" {
				return newUsageError(cmd, errors.New("give --nats URL (nats.url) to use a NATS server, or --listen HOST:PORT (nats.listen) to expose the embedded one: workers on other machines must reach the coordinator"))
			}
			return runJob(cmd.Context(), a, cfg, jobOptions{command: "coordinator"})
		},
	}
	addJobFlags(cmd.Flags())
	return cmd
}
