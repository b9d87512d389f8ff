// Package worker runs one transfer engine per GPU in its own process and talks to it. The
// coordinator starts a worker (the same binary, a hidden subcommand) from a thread pinned to the
// GPU's CPUs, so the worker is pinned from birth; the worker checks that every one of its threads
// is on those CPUs and says hello. Then they speak JSON lines over the worker's stdin and stdout:
// one request, one response, in order. The worker's stderr is its log.
//
// A worker that exits while a request is outstanding (a driver crash) or does not answer within
// the call's timeout (a hung kernel, a deadlock) is detected, killed if need be, and reported as an
// *Error naming its GPU, its pid and the operation.
package worker

import (
	"errors"
	"fmt"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// MaxMessage is the longest line, request or response, either side reads: a longer one is an
// error naming this limit (the reader stops and the worker is gone), never a wait for the rest.
const MaxMessage = 16 << 20

// ErrTooLong is wrapped by the error for a line over MaxMessage.
var ErrTooLong = fmt.Errorf("message over the worker protocol's limit of %d bytes (16 MiB)", MaxMessage)

// Operations a worker understands.
const (
	OpExport = "export" // Bytes -> Buffer, Handle
	OpImport = "import" // Handle -> Buffer
	OpPeer   = "peer"   // Peer, Bytes -> Buffer
	OpCopy   = "copy"   // Buffer (destination), Copy -> TimesNS, HostStartNS, HostEndNS
	OpFree   = "free"   // Buffer
	OpCheck  = "check"  // -> Hello (re-runs the affinity check)
	OpRun    = "run"    // Job: this worker's share of a compiled replay (package gpu/program/shared)
	OpQuit   = "quit"
)

// Request is one line from coordinator to worker.
type Request struct {
	ID     uint64           `json:"id"`
	Op     string           `json:"op"`
	Bytes  int64            `json:"bytes,omitempty"`
	Handle []byte           `json:"handle,omitempty"`
	Buffer int              `json:"buffer,omitempty"`
	Peer   *transfer.Device `json:"peer,omitempty"`
	Copy   *transfer.Copy   `json:"copy,omitempty"`
	Job    *shared.Job      `json:"job,omitempty"`
}

// Response is one line from worker to coordinator; ID 0 is the hello the worker sends unasked.
type Response struct {
	ID      uint64  `json:"id"`
	Error   string  `json:"error,omitempty"`
	Code    string  `json:"code,omitempty"` // CodeIPCUnsupported, or empty
	Buffer  int     `json:"buffer,omitempty"`
	Handle  []byte  `json:"handle,omitempty"`
	TimesNS []int64 `json:"times_ns,omitempty"`
	// HostStartNS and HostEndNS are a copy's host-clock span (transfer.Timing), CLOCK_MONOTONIC ns.
	HostStartNS int64  `json:"host_start_ns,omitempty"`
	HostEndNS   int64  `json:"host_end_ns,omitempty"`
	Hello       *Hello `json:"hello,omitempty"`
}

// Codes in a Response stand for errors a coordinator tells apart: transfer.ErrIPCUnsupported and
// transfer.ErrCorrupt.
const (
	CodeIPCUnsupported = "ipc_unsupported"
	CodeCorrupt        = "corrupt"
)

// Hello is the worker's report on itself.
type Hello struct {
	PID     int             `json:"pid"`
	Device  transfer.Device `json:"device"`
	Engine  string          `json:"engine"`
	CPUs    string          `json:"cpus"`    // every thread's allowed CPUs (they agree, or the check failed)
	Threads int             `json:"threads"` // threads checked
}

// Timing converts the response's times and host-clock span.
func (r Response) Timing() transfer.Timing {
	out := transfer.Timing{Times: make([]time.Duration, len(r.TimesNS)),
		HostStart: time.Duration(r.HostStartNS), HostEnd: time.Duration(r.HostEndNS)}
	for i, ns := range r.TimesNS {
		out.Times[i] = time.Duration(ns)
	}
	return out
}

// Failure is how a worker stopped serving.
type Failure string

const (
	// Crashed: the process exited (or closed its output) with a request outstanding.
	Crashed Failure = "exited"
	// Hung: no answer within the call's timeout; the process was killed.
	Hung Failure = "hung"
	// Refused: the worker answered with an error; it keeps serving.
	Refused Failure = "failed"
)

// Error is a failed call; it names the worker's GPU.
type Error struct {
	GPU     int
	PID     int
	Op      string
	Failure Failure
	Detail  string // exit status, timeout, or the worker's message
	Stderr  string // the last lines the worker logged, for a crash or hang
	Err     error  // wrapped cause, e.g. transfer.ErrIPCUnsupported
}

func (e *Error) Error() string {
	var msg string
	switch e.Failure {
	case Crashed:
		if e.Op == "close" || e.Op == "" {
			msg = fmt.Sprintf("worker for GPU %d (pid %d) %s", e.GPU, e.PID, e.Detail)
			break
		}
		msg = fmt.Sprintf("worker for GPU %d (pid %d) exited during %s: %s", e.GPU, e.PID, e.Op, e.Detail)
	case Hung:
		if e.Op == "close" {
			msg = fmt.Sprintf("worker for GPU %d (pid %d) %s", e.GPU, e.PID, e.Detail)
			break
		}
		msg = fmt.Sprintf("worker for GPU %d (pid %d) hung in %s: %s", e.GPU, e.PID, e.Op, e.Detail)
	default:
		msg = fmt.Sprintf("worker for GPU %d: %s: %s", e.GPU, e.Op, e.Detail)
	}
	if e.Stderr != "" {
		msg += "; its last log lines: " + e.Stderr
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// IsDead reports whether err means the worker process is gone (crashed or hung and killed).
func IsDead(err error) bool {
	var we *Error
	return errors.As(err, &we) && (we.Failure == Crashed || we.Failure == Hung)
}
