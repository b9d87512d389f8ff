package worker_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/gpu/worker"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"
	"golang.org/x/sys/unix"
)

// Roles this test binary plays besides the worker (workertest.Main dispatches them).
const (
	noisyRole       = "noisy-worker"
	coordinatorRole = "coordinator"
	hugeReplyRole   = "huge-reply-worker"
)

func TestMain(m *testing.M) {
	workertest.Main(m, map[string]workertest.Role{
		// A worker that says hello, then answers its first request with a line one byte over
		// the protocol's limit and keeps running (a coordinator must not wait for the rest).
		hugeReplyRole: func([]string) int {
			json.NewEncoder(os.Stdout).Encode(worker.Response{Hello: &worker.Hello{PID: os.Getpid()}})
			sc := bufio.NewScanner(os.Stdin)
			if sc.Scan() {
				os.Stdout.Write(bytes.Repeat([]byte("1"), worker.MaxMessage+1))
				time.Sleep(time.Minute)
			}
			return 0
		},
		noisyRole: func(args []string) int {
			return workertest.Serve(args, func() {
				fmt.Println("a library printing to stdout") // must not reach the coordinator as protocol
			})
		},
		// A coordinator that starts one pinned worker, sends it a request it hangs in (so it does
		// not notice its input closing), reports its pid and waits to be killed.
		coordinatorRole: func([]string) int {
			s := spec(0, "hang-on=export")
			s.Pin = func() error {
				avail, err := affinity.Available()
				if err != nil {
					return err
				}
				return affinity.SetThread(avail[:1])
			}
			w, err := worker.Start(context.Background(), s)
			if err != nil {
				fmt.Println("error:", err)
				return 1
			}
			go w.Export(context.Background(), 1)
			time.Sleep(50 * time.Millisecond)
			fmt.Println(w.Hello().PID)
			time.Sleep(time.Minute)
			return 0
		},
	})
}

func spec(gpu int, options string) worker.Spec { return workertest.Spec(gpu, options) }

func start(t *testing.T, s worker.Spec) *worker.Worker {
	t.Helper()
	w, err := worker.Start(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestFakeTransfersThroughWorkers runs the whole IPC path of a transfer (receiver exports, sender
// imports and copies) across two real processes, and checks the medians against T(m) = α + m/B of
// the pair worked out from the model.
func TestFakeTransfersThroughWorkers(t *testing.T) {
	ctx := context.Background()
	m := fake.Defaults
	m.Alpha, m.Bandwidth, m.Seed = 8e-6, 150e9, 42
	src, dst := start(t, spec(2, m.String())), start(t, spec(6, m.String()))
	_, h, err := dst.Export(ctx, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := src.Import(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	alpha, bw := m.Pair(2, 6)
	for _, n := range []int64{4 << 10, 64 << 10, 1 << 20, 16 << 20, 1 << 30} {
		tm, err := src.Copy(ctx, buf, transfer.Copy{Bytes: n, Reps: 41, Warmup: 2, Kind: transfer.CE}, 0)
		times := tm.Times
		if err != nil {
			t.Fatal(err)
		}
		if len(times) != 41 {
			t.Fatalf("%d times, want 41", len(times))
		}
		want := alpha + float64(n)/bw
		if got := transfer.Median(times).Seconds(); math.Abs(got/want-1) > 0.03 {
			t.Errorf("%d bytes: median %.4g s, model %.4g s", n, got, want)
		}
	}
	if err := src.Free(ctx, buf); err != nil {
		t.Error(err)
	}
}

// TestPinnedWorkerAffinity starts real worker processes pinned through the fake NVML: each must
// report (after checking all its threads) exactly its GPU's CPUs that this machine has.
func TestPinnedWorkerAffinity(t *testing.T) {
	lib, err := nvml.Open(nvml.Options{Fake: true})
	if err != nil {
		t.Fatal(err)
	}
	avail, err := affinity.Available()
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, gpu := range []int{0, 4} {
		s := spec(gpu, "")
		s.Pin = func() error { return lib.Pin(gpu) }
		w := start(t, s)
		want := nvml.FakeCPUs(gpu, 8).Intersect(avail)
		if len(want) == 0 {
			want = avail
		}
		h := w.Hello()
		if h.CPUs != want.String() || h.Threads < 2 || h.PID == os.Getpid() {
			t.Errorf("GPU %d: hello %+v; want cpus %s over several threads of another process", gpu, h, want)
		}
		// Threads the worker's runtime started since must be pinned as well.
		if h2, err := w.Check(context.Background()); err != nil || h2.CPUs != want.String() {
			t.Errorf("GPU %d: re-check %+v, %v", gpu, h2, err)
		}
		got[gpu] = h.CPUs
	}
	if len(avail) >= 2 && got[0] == got[4] {
		t.Errorf("workers of GPUs 0 and 4 (NUMA nodes 0 and 1) both on %s", got[0])
	}
}

// TestAffinityCheckCatchesMismatch tells a worker to expect CPUs it does not run on: it must
// refuse to start, naming its GPU and the offending threads.
func TestAffinityCheckCatchesMismatch(t *testing.T) {
	s := spec(5, "")
	s.Env = append(s.Env, worker.EnvExpectCPUs+"=1000-1001")
	_, err := worker.Start(context.Background(), s)
	if err == nil {
		t.Fatal("worker started although its threads are not on the expected CPUs")
	}
	for _, want := range []string{"GPU 5", "affinity check", "not on cpus 1000-1001", "thread"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestCrashDetected(t *testing.T) {
	ctx := context.Background()
	w := start(t, spec(3, "crash-on=copy"))
	buf, _, err := w.Export(ctx, 1<<20) // a worker may copy into its own buffer: loopback
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Copy(ctx, buf, transfer.Copy{Bytes: 1 << 20, Reps: 3, Kind: transfer.CE}, 0)
	var we *worker.Error
	if !errors.As(err, &we) || we.Failure != worker.Crashed || we.GPU != 3 || we.Op != worker.OpCopy {
		t.Fatalf("err = %v, want a crash of GPU 3's worker in copy", err)
	}
	for _, want := range []string{"GPU 3", "exited during copy", "exit status 3", "crashing in copy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if _, _, err := w.Export(ctx, 1); !worker.IsDead(err) {
		t.Errorf("call after the crash: %v, want the crash again", err)
	}
}

func TestHangDetected(t *testing.T) {
	ctx := context.Background()
	w := start(t, spec(7, "hang-on=copy"))
	buf, _, err := w.Export(ctx, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err = w.Copy(ctx, buf, transfer.Copy{Bytes: 1 << 20, Reps: 3, Kind: transfer.SM}, 200*time.Millisecond)
	var we *worker.Error
	if !errors.As(err, &we) || we.Failure != worker.Hung || we.GPU != 7 {
		t.Fatalf("err = %v, want GPU 7's worker hung", err)
	}
	if !strings.Contains(err.Error(), "GPU 7") || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("error %q does not name the GPU and the timeout", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("hang detected after %v", d)
	}
	select {
	case <-w.Dead():
		if ws, ok := w.ProcessState().Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Errorf("hung worker ended with %v, want killed", w.ProcessState())
		}
	default:
		t.Error("hung worker not reaped")
	}
}

func TestCancelKillsWorker(t *testing.T) {
	w := start(t, spec(1, "hang-on=export"))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, _, err := w.Export(ctx, 1)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "GPU 1") {
		t.Fatalf("err = %v, want the context's error naming GPU 1", err)
	}
	select {
	case <-w.Dead():
	default:
		t.Error("worker not reaped after cancellation")
	}
}

func TestWorkerErrorsKeepItServing(t *testing.T) {
	ctx := context.Background()
	w := start(t, spec(0, ""))
	_, err := w.Copy(ctx, 99, transfer.Copy{Bytes: 1, Reps: 1, Kind: transfer.CE}, 0)
	var we *worker.Error
	if !errors.As(err, &we) || we.Failure != worker.Refused || !strings.Contains(err.Error(), "no such buffer") {
		t.Fatalf("err = %v, want a refused copy", err)
	}
	if _, _, err := w.Export(ctx, 4096); err != nil {
		t.Errorf("worker stopped serving after a refused request: %v", err)
	}
	if _, err := w.Call(ctx, worker.Request{Op: "dance"}, 0); err == nil || !strings.Contains(err.Error(), `unknown operation "dance"`) {
		t.Errorf("unknown op: %v", err)
	}
}

func TestStartFailureNamesGPU(t *testing.T) {
	s := spec(2, "")
	s.Config.Engine = "warp-drive"
	_, err := worker.Start(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "GPU 2") || !strings.Contains(err.Error(), `"warp-drive"`) {
		t.Fatalf("err = %v, want an error naming GPU 2 and the engine", err)
	}
}

func TestCancelKillsIdleWorker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w, err := worker.Start(ctx, spec(4, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cancel()
	select {
	case <-w.Dead():
	case <-time.After(5 * time.Second):
		t.Fatal("idle worker still running 5 s after its context ended")
	}
	if _, _, err := w.Export(context.Background(), 1); !worker.IsDead(err) || !strings.Contains(err.Error(), "GPU 4") {
		t.Errorf("call to a killed worker: %v", err)
	} else if !errors.Is(err, context.Canceled) {
		// A teardown after a cancelled run skips such errors: the worker took its buffers with it.
		t.Errorf("call to a worker killed by its context: %v, want it to wrap context.Canceled", err)
	}
}

// TestStdoutNoiseStaysOutOfProtocol has the worker print to stdout before serving: the line must
// end up in its log, and the protocol must work.
func TestStdoutNoiseStaysOutOfProtocol(t *testing.T) {
	s := spec(0, "")
	_, s.Env = workertest.Command(noisyRole)
	var log strings.Builder
	s.Log = &log
	w := start(t, s)
	if _, _, err := w.Export(context.Background(), 4096); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if !strings.Contains(log.String(), "a library printing to stdout") {
		t.Errorf("worker log %q lacks the stray line", log.String())
	}
}

// TestWorkerDiesWithCoordinator kills a coordinator process with SIGKILL (no chance to clean up)
// while its worker is busy and not reading its input: the worker, started from a pinned thread,
// must go too (the parent-death signal).
func TestWorkerDiesWithCoordinator(t *testing.T) {
	coord := exec.Command(os.Args[0])
	_, env := workertest.Command(coordinatorRole)
	coord.Env = append(os.Environ(), env...)
	stdout, err := coord.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := coord.Start(); err != nil {
		t.Fatal(err)
	}
	defer coord.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("coordinator said %q: %v", line, err)
	}
	if !alive(pid) {
		t.Fatalf("worker %d not running while its coordinator is", pid)
	}
	if err := coord.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = coord.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("worker %d outlived its SIGKILLed coordinator", pid)
	}
}

// alive reports whether pid runs (a zombie waiting for a reaper counts as dead).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(after, "Z") && !strings.HasPrefix(after, "X")
}

// TestCloseReportsUnaskedExit kills an idle worker from outside: Close must say so, naming the
// GPU, the pid and the signal; a worker that quits when asked closes without error.
func TestCloseReportsUnaskedExit(t *testing.T) {
	w, err := worker.Start(context.Background(), spec(6, ""))
	if err != nil {
		t.Fatal(err)
	}
	pid := w.Hello().PID
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Dead():
	case <-time.After(5 * time.Second):
		t.Fatal("worker still running 5 s after SIGTERM")
	}
	err = w.Close()
	for _, want := range []string{"GPU 6", fmt.Sprintf("pid %d", pid), "before it was closed", "signal: terminated"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Close after SIGTERM = %v, want it to contain %q", err, want)
		}
	}
	ok, err := worker.Start(context.Background(), spec(2, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := ok.Close(); err != nil {
		t.Errorf("Close of a healthy worker: %v", err)
	}
}

// TestCopyReportsHostClockAndCorruption: a copy's host-clock span lies on this process's
// CLOCK_MONOTONIC (one clock for all processes) and starts at the StartAt asked for, and a
// corrupting copy is an error wrapping transfer.ErrCorrupt that keeps the worker serving.
func TestCopyReportsHostClockAndCorruption(t *testing.T) {
	ctx := context.Background()
	w := start(t, spec(1, "corrupt=true"))
	buf, _, err := w.Export(ctx, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	before := transfer.Monotonic()
	at := before + 20*time.Millisecond
	tm, err := w.Copy(ctx, buf, transfer.Copy{Bytes: 1 << 20, Reps: 4, Kind: transfer.CE, StartAt: at}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after := transfer.Monotonic(); tm.HostStart < at || tm.HostStart > after || tm.HostEnd < tm.HostStart || len(tm.Times) != 4 {
		t.Errorf("host span [%v, %v] with StartAt %v, call ended %v; %d times", tm.HostStart, tm.HostEnd, at, after, len(tm.Times))
	}
	_, err = w.Copy(ctx, buf, transfer.Copy{Bytes: 1 << 20, Reps: 1, Kind: transfer.CE, Verify: true}, 0)
	if !errors.Is(err, transfer.ErrCorrupt) || !strings.Contains(err.Error(), "GPU 1") {
		t.Errorf("verifying copy on a corrupting engine: %v", err)
	}
	if _, _, err := w.Export(ctx, 4096); err != nil {
		t.Errorf("worker stopped serving after a corrupt copy: %v", err)
	}
}

// A reply over the protocol's limit is an error naming the limit, at once, not a hang reported
// at the call's timeout; the worker is killed.
func TestReplyOverLimit(t *testing.T) {
	s := spec(4, "")
	_, s.Env = workertest.Command(hugeReplyRole)
	w, err := worker.Start(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, _, err = w.Export(context.Background(), 1)
	if !errors.Is(err, worker.ErrTooLong) || !worker.IsDead(err) {
		t.Fatalf("err = %v, want a dead worker and ErrTooLong", err)
	}
	for _, want := range []string{"GPU 4", "16 MiB", fmt.Sprint(worker.MaxMessage)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("noticed after %v", d)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close after the reported failure: %v (reported twice)", err)
	}
}

// The repetition limit keeps every reply inside the protocol's limit, and more repetitions are
// refused by the worker with the limit named.
func TestRepsLimit(t *testing.T) {
	times := make([]int64, transfer.MaxReps)
	for i := range times {
		times[i] = math.MaxInt64
	}
	b, err := json.Marshal(worker.Response{ID: math.MaxUint64, TimesNS: times, HostStartNS: math.MaxInt64, HostEndNS: math.MaxInt64})
	if err != nil || len(b) >= worker.MaxMessage {
		t.Fatalf("a reply of MaxReps times is %d bytes (%v), the limit %d", len(b), err, worker.MaxMessage)
	}
	ctx := context.Background()
	w := start(t, spec(2, ""))
	buf, _, err := w.Export(ctx, 4096)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []transfer.Copy{
		{Bytes: 4096, Reps: transfer.MaxReps + 1, Kind: transfer.CE},
		{Bytes: 4096, Reps: 1, Warmup: transfer.MaxReps + 1, Kind: transfer.CE},
	} {
		_, err = w.Copy(ctx, buf, c, 0)
		if err == nil || worker.IsDead(err) || !strings.Contains(err.Error(), fmt.Sprintf("at most %d", transfer.MaxReps)) {
			t.Errorf("copy of %d reps, %d warmup: %v, want a refusal naming the limit", c.Reps, c.Warmup, err)
		}
	}
	if _, err := w.Copy(ctx, buf, transfer.Copy{Bytes: 4096, Reps: 2, Kind: transfer.CE}, 0); err != nil {
		t.Errorf("the worker stopped serving after the refusals: %v", err)
	}
}

// Died names an exit nobody asked for (GPU, pid, signal) once, and Close does not report it
// again; a worker closed as asked has not died.
func TestDiedReportsUnaskedExitOnce(t *testing.T) {
	w, err := worker.Start(context.Background(), spec(5, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Died(); err != nil {
		t.Errorf("Died of a running worker: %v", err)
	}
	pid := w.Hello().PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("Exited not closed 5 s after SIGKILL")
	}
	err = w.Died()
	for _, want := range []string{"GPU 5", fmt.Sprintf("pid %d", pid), "exited unasked", "signal: killed"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Died = %v, want it to contain %q", err, want)
		}
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close after Died reported the exit: %v", err)
	}
	ok, err := worker.Start(context.Background(), spec(1, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := ok.Close(); err != nil {
		t.Fatal(err)
	}
	<-ok.Exited()
	if err := ok.Died(); err != nil {
		t.Errorf("Died after Close: %v", err)
	}
}

// TestWorkerHasItsOwnSession checks that a worker runs in a session of its own, and so (where
// the kernel has scheduler autogroups, one per session) in a CPU group of its own: sharing the
// starting session's group with that session's busy processes is what starved the kernel worker
// that delivers a serial port's input during a replay.
func TestWorkerHasItsOwnSession(t *testing.T) {
	w := start(t, spec(0, "seed=1"))
	pid := w.Hello().PID
	sid, err := unix.Getsid(pid)
	if err != nil {
		t.Fatal(err)
	}
	if sid != pid {
		t.Errorf("worker %d is in session %d, want a session of its own", pid, sid)
	}
	mine, err := os.ReadFile("/proc/self/autogroup")
	if err != nil {
		t.Skipf("no scheduler autogroups here: %v", err)
	}
	its, err := os.ReadFile(fmt.Sprintf("/proc/%d/autogroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(mine, its) {
		t.Errorf("worker %d shares this process's autogroup %q", pid, strings.TrimSpace(string(mine)))
	}
}
