// Command tetris-hil is the one CLI of the tetris-hil harness: it schedules demand matrices onto a
// Beneš photonic fabric, emulates and verifies the schedules, and (with GPUs) measures and replays
// them. It is thin: every subcommand parses flags, calls a package, and prints.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tetris-hil/tetris-hil/schedules"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal cancels the context so hardware is put safe and partial results are not
	// written; restoring the default handlers then lets a second signal end the process at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes the CLI, prints a failure's message, and returns the exit status (see exitCode).
func run(ctx context.Context, args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := asUsage(root.ExecuteContext(ctx))
	code := exitCode(err)
	var ee *exitError
	if err != nil && (!errors.As(err, &ee) || ee.msg != "") {
		fmt.Fprintln(os.Stderr, "tetris-hil:", err)
	}
	return code
}

// exitCode maps a command's error to the exit status: 0 for none, whatever an exitError says
// (verify's 1 for an invalid schedule), 2 for bad usage or input (usageError, or a value above
// one of the model's limits: schedules.ErrLimit), 1 for the rest.
func exitCode(err error) int {
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue), errors.Is(err, schedules.ErrLimit):
		// An input above a size or magnitude limit is bad input, wherever it is found.
		return 2
	}
	return 1
}

// usageError marks bad flags or input: the message names the flag or file and the value; exit 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }

// exitError carries a specific exit code (e.g. verify's 1 for an invalid schedule).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }
