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
	"sync"
	"syscall"

	"github.com/tetris-hil/tetris-hil/internal/readlimit"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func main() {
	ctx, stop := signalContext(context.Background())
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// interrupted is the cancellation cause when a signal stops the run; exitCode maps it to
// 128 + the signal's number (130 SIGINT, 143 SIGTERM, 129 SIGHUP, 131 SIGQUIT), as a shell
// reports a process that the signal killed.
type interrupted struct{ sig syscall.Signal }

func (e *interrupted) Error() string {
	switch e.sig {
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	case syscall.SIGHUP:
		return "hung up (SIGHUP)"
	case syscall.SIGQUIT:
		return "quit (SIGQUIT)"
	}
	return "stopped by " + e.sig.String()
}

// onSignalsReady is called once signalContext's handlers are in place: a test that signals a
// child process waits for it, since a signal before then would kill the child outright.
var onSignalsReady = func() {}

// stopSignals are the signals that stop a run as Ctrl-C does: SIGINT, SIGTERM, and SIGHUP and
// SIGQUIT too, since a closed terminal or a dropped ssh session (SIGHUP) is how a lab session most
// often ends, and Go's default for either would exit at once with the switches as they were.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// signalContext returns a context that the first of stopSignals cancels, with an *interrupted
// as its cause. The first signal lets every phase stop at its next check and hardware be put
// safe; the default handlers are then restored, so a second signal ends the process at once.
// stop releases the handlers.
func signalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Reset(stopSignals...)
			sig, _ := s.(syscall.Signal)
			cancel(&interrupted{sig})
		case <-done:
		}
	}()
	onSignalsReady()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel(nil)
		})
	}
}

// run executes the CLI, prints a failure's message, and returns the exit status (see exitCode).
func run(ctx context.Context, args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := checkFirstWord(root, args)
	if err == nil {
		err = asUsage(root.ExecuteContext(ctx))
	}
	var sig *interrupted
	if errors.As(context.Cause(ctx), &sig) {
		// Whatever the command made of the cancellation (an error, or none once its work was
		// done), a signalled run reports the signal.
		if err == nil {
			err = sig
		} else if !errors.As(err, new(*interrupted)) {
			err = fmt.Errorf("%w: %w", sig, err)
		}
	}
	code := exitCode(err)
	var ee *exitError
	if err != nil && (!errors.As(err, &ee) || ee.msg != "") {
		fmt.Fprintln(os.Stderr, "tetris-hil:", err)
	}
	return code
}

// exitCode maps a command's error to the exit status: 0 for none, 128 + the signal for a run a
// signal stopped (130 SIGINT, 143 SIGTERM, 129 SIGHUP, 131 SIGQUIT), whatever an exitError
// says (verify's 1 for an invalid schedule), 2 for bad usage or input (usageError, a value or
// file above one of the limits: schedules.ErrLimit, or a FIFO or device given as an input file),
// 1 for the rest.
func exitCode(err error) int {
	var ue *usageError
	var ee *exitError
	var sig *interrupted
	switch {
	case err == nil:
		return 0
	case errors.As(err, &sig):
		return 128 + int(sig.sig)
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue), errors.Is(err, schedules.ErrLimit), errors.Is(err, readlimit.ErrNotRegular):
		// An input above a size or magnitude limit, or a FIFO or device where a file is read
		// whole, is bad input, wherever it is found.
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
