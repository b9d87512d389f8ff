// Package workertest lets a test binary double as the worker processes its tests start, the way
// `tetris-hil worker` is the binary's own hidden subcommand: a test package's TestMain calls Main,
// and a worker.Spec from Spec (or the command and environment from Command) starts the test binary
// again in the worker role. Tests that need another kind of child process (a coordinator that
// holds a worker, a whole CLI) add roles of their own.
package workertest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/worker"

	// The engine the tests' workers run.
	_ "github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
)

// Env names the role a test binary was started to play; unset, it runs the tests.
const Env = "TETRIS_HIL_TEST_ROLE"

// WorkerRole is the name of the built-in role: worker.Main with the engines linked into the test
// binary (the fake one at least).
const WorkerRole = "worker"

// Role is a child process's body: it gets the command-line arguments after the program name and
// returns the exit status.
type Role func(args []string) int

// Main is a test package's TestMain: started with Env naming a role, the binary plays it and exits
// with its status; otherwise it runs the tests. roles adds roles to (or replaces) WorkerRole.
func Main(m *testing.M, roles map[string]Role) {
	if name, ok := os.LookupEnv(Env); ok {
		r := roles[name]
		if r == nil && name == WorkerRole {
			r = RunWorker
		}
		if r == nil {
			fmt.Fprintf(os.Stderr, "workertest: no role %q in this test binary\n", name)
			os.Exit(2)
		}
		os.Exit(r(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// RunWorker is the worker role: it parses the worker's flags, reserves stdout for the protocol and
// serves until told to quit.
func RunWorker(args []string) int { return Serve(args, nil) }

// Serve is RunWorker calling before (if not nil) once stdout is reserved and before the worker
// starts: for a role that misbehaves first, e.g. prints to stdout as a chatty library would.
func Serve(args []string, before func()) int {
	var cfg worker.Config
	fs := pflag.NewFlagSet("worker", pflag.ContinueOnError)
	cfg.Flags(fs)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out, err := worker.ProtocolOutput()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if before != nil {
		before()
	}
	if err := worker.Main(context.Background(), cfg, os.Stdin, out); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

// Command is the program and the environment that start this test binary in role: what
// worker.Spec's Command and Env (or bench.Config's) take.
func Command(role string) (command, env []string) {
	return []string{os.Args[0]}, []string{Env + "=" + role}
}

// Spec is a worker.Spec that starts this test binary as a worker on the fake engine for GPU gpu
// (CUDA ordinal gpu) with the given engine options, with a 10 s timeout.
func Spec(gpu int, options string) worker.Spec {
	cmd, env := Command(WorkerRole)
	return worker.Spec{
		Config:  worker.Config{Device: transfer.Device{GPU: gpu, CUDAOrdinal: gpu}, Engine: "fake", EngineOptions: options},
		Command: cmd,
		Env:     env,
		Timeout: 10 * time.Second,
	}
}
