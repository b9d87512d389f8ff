package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// Spec says how to start a worker.
type Spec struct {
	Config Config
	// Command is the program and its leading arguments (e.g. the tetris-hil binary and "worker");
	// Config.Args() is appended.
	Command []string
	Env     []string // added to this process's environment
	// Pin binds the calling OS thread to the GPU's CPUs (nvml.Lib.Pin); nil starts unpinned.
	Pin func() error
	// Timeout bounds the hello and is the default for each call; 0 means 30 s.
	Timeout time.Duration
	Log     io.Writer // receives the worker's stderr; nil discards it (the tail is kept for errors)
}

// Worker is a running worker process.
type Worker struct {
	spec    Spec
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan []byte
	dead    chan struct{} // closed once stdout is drained and the process reaped
	exitErr error         // valid after dead is closed
	readErr error         // why reading stopped before the output ended (a line over MaxMessage); valid after dead
	stderr  *tailWriter
	hello   Hello
	cpus    affinity.Set

	stopKill func() bool
	ctx      context.Context // Start's: once it ends, the kill it causes is not a failure

	closing atomic.Bool // set by Close: the exit that follows was asked for

	mu     sync.Mutex // one call at a time
	nextID uint64
	broken error // set once the worker is gone; every later call returns it
}

const defaultTimeout = 30 * time.Second

// Start starts a worker, pinned if spec.Pin is set, and waits for its hello, which carries the
// result of its affinity check. The worker is killed when ctx ends.
func Start(ctx context.Context, spec Spec) (*Worker, error) {
	if len(spec.Command) == 0 {
		return nil, errors.New("worker spec: empty command")
	}
	if spec.Timeout <= 0 {
		spec.Timeout = defaultTimeout
	}
	args := append(append([]string{}, spec.Command[1:]...), spec.Config.Args()...)
	cmd := exec.Command(spec.Command[0], args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	// If the coordinator dies (even by SIGKILL), its workers go too. The signal follows the thread
	// that forked; StartPinned keeps that thread alive in the pool unless restoring it failed, and
	// then starting fails and the worker is meant to die anyway.
	//
	// A worker runs in a session of its own (Setsid). Its coordinator already decides how it stops
	// (it ignores the terminal's signals), and with Linux's scheduler autogroups (on by default: one
	// CPU share per session) this keeps the workers' frequent sleeps and wake-ups out of the group
	// of the session that started them. Measured on two cores, with two busy loops started from the
	// same shell as a replay on a serial board: while the workers shared the loops' autogroup, the
	// kernel worker that delivers a tty's input (flush_to_ldisc, which a USB-serial board's replies
	// go through as a pseudo-terminal's do) was runnable but not run for 0.8 to 6 s, and the
	// board's replies missed their timeouts; in sessions of their own, it waited at most 32 ms.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	w := &Worker{spec: spec, cmd: cmd, lines: make(chan []byte, 16), dead: make(chan struct{}), stderr: newTail(spec.Log), ctx: ctx}
	cmd.Stderr = w.stderr
	var err error
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	gpu := spec.Config.Device.GPU
	if spec.Pin != nil {
		w.cpus, err = affinity.StartPinned(spec.Pin, func(applied affinity.Set) error {
			cmd.Env = append(cmd.Env, EnvExpectCPUs+"="+applied.String())
			return cmd.Start()
		})
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("starting worker for GPU %d (%s): %w", gpu, spec.Command[0], err)
	}
	go w.read(stdout)
	// As with exec.CommandContext, the context given to Start bounds the worker's life: cancelling
	// it (SIGINT through signal.NotifyContext) kills the worker even between calls.
	w.stopKill = context.AfterFunc(ctx, func() { _ = w.cmd.Process.Kill() })

	resp, err := w.await(ctx, 0, "start", spec.Timeout)
	if err != nil {
		w.abort()
		return nil, err
	}
	if resp.Hello == nil {
		w.abort()
		return nil, &Error{GPU: gpu, PID: w.pid(), Op: "start", Failure: Refused, Detail: "first message is not a hello"}
	}
	w.hello = *resp.Hello
	if spec.Pin != nil && w.hello.CPUs != w.cpus.String() {
		w.abort()
		return nil, &Error{GPU: gpu, PID: w.pid(), Op: "start", Failure: Refused,
			Detail: fmt.Sprintf("worker reports cpus %s, started on %s", w.hello.CPUs, w.cpus)}
	}
	return w, nil
}

func (w *Worker) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), MaxMessage)
	for sc.Scan() {
		w.lines <- append([]byte(nil), sc.Bytes()...)
	}
	if err := sc.Err(); err != nil {
		// A line over the limit cannot be answered to; the protocol is lost, so the worker goes
		// (and the call waiting on it learns why at once, not at its timeout).
		if errors.Is(err, bufio.ErrTooLong) {
			err = ErrTooLong
		}
		w.readErr = err
		_ = w.cmd.Process.Kill()
	}
	// Drain what is left so the process can exit, then reap it.
	_, _ = io.Copy(io.Discard, stdout)
	w.exitErr = w.cmd.Wait()
	close(w.dead)
}

func (w *Worker) pid() int { return w.cmd.Process.Pid }

// abort kills a worker that failed to start.
func (w *Worker) abort() {
	w.kill()
	w.stopKill()
}

func (w *Worker) kill() {
	_ = w.cmd.Process.Kill()
	<-w.dead
}

// Hello is the worker's report from its start.
func (w *Worker) Hello() Hello { return w.hello }

// CPUs is the set the worker was started on (empty if unpinned).
func (w *Worker) CPUs() affinity.Set { return w.cpus }

// GPU is the NVML index of the worker's GPU.
func (w *Worker) GPU() int { return w.spec.Config.Device.GPU }

// Call sends one request and waits for its response, at most timeout (0: the spec's Timeout). A
// worker that exits or does not answer is gone afterwards: the error (an *Error) names its GPU, and
// every later call returns it. An error the worker answers with is an *Error with Failure Refused;
// the worker keeps serving.
func (w *Worker) Call(ctx context.Context, req Request, timeout time.Duration) (Response, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return Response{}, w.broken
	}
	if timeout <= 0 {
		timeout = w.spec.Timeout
	}
	w.nextID++
	req.ID = w.nextID
	line, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	if _, err := w.stdin.Write(append(line, '\n')); err != nil {
		// The pipe is closed: the process is gone or going; await reports how it ended.
		select {
		case <-w.dead:
		case <-time.After(time.Second):
			w.kill()
		}
	}
	return w.await(ctx, req.ID, req.Op, timeout)
}

func (w *Worker) await(ctx context.Context, id uint64, op string, timeout time.Duration) (Response, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	base := Error{GPU: w.GPU(), PID: w.pid(), Op: op}
	for {
		select {
		case b := <-w.lines:
			if r, ok, err := w.parse(b, id, base); ok || err != nil {
				return r, err
			}
		case <-w.dead:
			// Lines written before the exit were all queued before dead closed.
			for len(w.lines) > 0 {
				if r, ok, err := w.parse(<-w.lines, id, base); ok || err != nil {
					return r, err
				}
			}
			e := base
			e.Failure, e.Detail, e.Stderr = Crashed, exitDetail(w.exitErr), w.stderr.Tail()
			if cerr := w.ctx.Err(); cerr != nil {
				// Start's context ended and killed the worker between calls (Died and Close treat
				// that kill as asked for): the error wraps the context's, so that a teardown after
				// a cancelled run can tell it from a crash.
				e.Detail, e.Err = "killed when its run was cancelled", cerr
			}
			if w.readErr != nil {
				e.Detail, e.Err = fmt.Sprintf("reading its answer: %v; killed it", w.readErr), w.readErr
			}
			w.broken = &e
			return Response{}, w.broken
		case <-timer.C:
			w.kill()
			e := base
			e.Failure, e.Detail, e.Stderr = Hung, fmt.Sprintf("no answer within %v; killed it", timeout), w.stderr.Tail()
			w.broken = &e
			return Response{}, w.broken
		case <-ctx.Done():
			w.kill()
			w.broken = fmt.Errorf("worker for GPU %d (pid %d) stopped during %s: %w", base.GPU, base.PID, op, ctx.Err())
			return Response{}, w.broken
		}
	}
}

// parse decodes a line; ok is false for a stale response to an earlier, abandoned request.
func (w *Worker) parse(b []byte, id uint64, base Error) (Response, bool, error) {
	var r Response
	if err := json.Unmarshal(b, &r); err != nil {
		w.kill()
		e := base
		e.Failure, e.Detail = Crashed, fmt.Sprintf("garbled output %q: %v", b, err)
		w.broken = &e
		return r, false, w.broken
	}
	if r.ID < id {
		return r, false, nil
	}
	if r.ID != id {
		w.kill()
		e := base
		e.Failure, e.Detail = Crashed, fmt.Sprintf("answered request %d, expected %d", r.ID, id)
		w.broken = &e
		return r, false, w.broken
	}
	if r.Error != "" {
		e := base
		e.Failure, e.Detail = Refused, r.Error
		switch r.Code {
		case CodeIPCUnsupported:
			e.Err = transfer.ErrIPCUnsupported
		case CodeCorrupt:
			e.Err = transfer.ErrCorrupt
		}
		return r, true, &e
	}
	return r, true, nil
}

func exitDetail(err error) string {
	if err == nil {
		return "exit status 0 with a request outstanding"
	}
	return err.Error()
}

// Close asks the worker to quit and reaps it, killing it if it does not go within a few seconds.
// It is an error (an *Error naming the GPU, the pid and the exit status or signal) when the worker
// had already exited on its own before Close, did not quit when asked, or quit with a failure
// status; a failure some call has already returned, or the end of Start's context, is not
// reported again.
func (w *Worker) Close() error {
	w.closing.Store(true)
	w.mu.Lock()
	broken := w.broken
	w.mu.Unlock()
	base := Error{GPU: w.GPU(), PID: w.pid(), Op: "close", Failure: Crashed}
	var err error
	if broken == nil {
		select {
		case <-w.dead:
			if w.ctx.Err() == nil {
				e := base
				e.Detail, e.Stderr = "exited before it was closed: "+exitDetail(w.exitErr), w.stderr.Tail()
				err = &e
			}
			broken = err
		default:
		}
	}
	if broken == nil {
		if _, qerr := w.Call(context.Background(), Request{Op: OpQuit}, 5*time.Second); qerr != nil && w.ctx.Err() == nil {
			err = qerr
		}
	}
	_ = w.stdin.Close()
	select {
	case <-w.dead:
		if err == nil && broken == nil && w.exitErr != nil && w.ctx.Err() == nil {
			e := base
			e.Detail, e.Stderr = "quit with "+w.exitErr.Error(), w.stderr.Tail()
			err = &e
		}
	case <-time.After(5 * time.Second):
		w.kill()
		if err == nil && broken == nil {
			e := base
			e.Failure, e.Detail = Hung, "did not exit within 5s of quit; killed it"
			err = &e
		}
	}
	w.stopKill()
	return err
}

// Exited is closed once the worker process has exited, asked to or not: a coordinator that waits
// on another worker (a sender's copies into this receiver's buffer) selects on it to notice at
// once that this one is gone.
func (w *Worker) Exited() <-chan struct{} { return w.dead }

// Died is, once Exited is closed, the error for an exit nobody asked for: an *Error (Failure
// Crashed) naming the GPU, the pid and the exit status or signal. It is nil while the worker
// runs, after Close, after a failure a call has already returned, and once Start's context has
// ended (that kill was asked for). Reported here, the exit is not reported again by Close.
func (w *Worker) Died() error {
	select {
	case <-w.dead:
	default:
		return nil
	}
	if w.closing.Load() || w.ctx.Err() != nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return nil
	}
	e := &Error{GPU: w.GPU(), PID: w.pid(), Failure: Crashed, Detail: "exited unasked: " + exitDetail(w.exitErr), Stderr: w.stderr.Tail()}
	w.broken = e
	return e
}

// Export allocates a destination buffer of n bytes on the worker's GPU and returns its id and IPC
// handle.
func (w *Worker) Export(ctx context.Context, n int64) (int, []byte, error) {
	r, err := w.Call(ctx, Request{Op: OpExport, Bytes: n}, 0)
	return r.Buffer, r.Handle, err
}

// Import maps a buffer another worker exported.
func (w *Worker) Import(ctx context.Context, handle []byte) (int, error) {
	r, err := w.Call(ctx, Request{Op: OpImport, Handle: handle}, 0)
	return r.Buffer, err
}

// Peer allocates a destination of n bytes on peer inside this worker (the same-process fallback).
func (w *Worker) Peer(ctx context.Context, peer transfer.Device, n int64) (int, error) {
	r, err := w.Call(ctx, Request{Op: OpPeer, Peer: &peer, Bytes: n}, 0)
	return r.Buffer, err
}

// Copy runs timed copies into buffer dst and returns each copy's time and their host-clock span.
// A copy whose bytes fail c.Verify is an error that wraps transfer.ErrCorrupt.
func (w *Worker) Copy(ctx context.Context, dst int, c transfer.Copy, timeout time.Duration) (transfer.Timing, error) {
	r, err := w.Call(ctx, Request{Op: OpCopy, Buffer: dst, Copy: &c}, timeout)
	if err != nil {
		return transfer.Timing{}, err
	}
	return r.Timing(), nil
}

// Free releases a buffer.
func (w *Worker) Free(ctx context.Context, id int) error {
	_, err := w.Call(ctx, Request{Op: OpFree, Buffer: id}, 0)
	return err
}

// Check re-runs the worker's affinity check (threads created since the start included).
func (w *Worker) Check(ctx context.Context) (Hello, error) {
	r, err := w.Call(ctx, Request{Op: OpCheck}, 0)
	if err != nil {
		return Hello{}, err
	}
	return *r.Hello, nil
}

// tailWriter passes the worker's log on and keeps its last lines for error messages.
type tailWriter struct {
	mu   sync.Mutex
	next io.Writer
	buf  []byte
}

const tailBytes = 2048

func newTail(next io.Writer) *tailWriter { return &tailWriter{next: next} }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-tailBytes:]...)
	}
	t.mu.Unlock()
	if t.next != nil {
		_, _ = t.next.Write(p)
	}
	return len(p), nil
}

// Tail returns the last few log lines joined with " | ".
func (t *tailWriter) Tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	if len(lines) > 4 {
		lines = lines[len(lines)-4:]
	}
	return strings.TrimSpace(strings.Join(lines, " | "))
}
