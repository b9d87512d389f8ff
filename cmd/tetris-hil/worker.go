package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/gpu/worker"

	// The transfer engines a worker can run.
	_ "github.com/tetris-hil/tetris-hil/gpu/transfer/cudaengine"
	_ "github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
)

func init() { subcommands = append(subcommands, newWorkerCmd) }

// newWorkerCmd is the process the harness starts per GPU (hidden: people do not run it). It speaks
// JSON lines on stdin/stdout; its log goes to stderr.
func newWorkerCmd() *cobra.Command {
	var cfg worker.Config
	cmd := &cobra.Command{
		Use:    "worker",
		Short:  "Serve transfer requests for one GPU (started by the harness, one per GPU)",
		Hidden: true,
		Args:   exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A worker's coordinator decides how it stops (quit, or a kill when its context
			// ends). worker.Start runs it in a session of its own, out of reach of the
			// terminal's signals; one started some other way, in the foreground process group,
			// still ignores SIGINT (and the SIGHUP and SIGQUIT of a closed terminal) instead of
			// exiting with a message of its own.
			signal.Ignore(os.Interrupt, syscall.SIGHUP, syscall.SIGQUIT)
			out, err := worker.ProtocolOutput()
			if err != nil {
				return err
			}
			return worker.Main(cmd.Context(), cfg, os.Stdin, out)
		},
	}
	cfg.Flags(cmd.Flags())
	return cmd
}
