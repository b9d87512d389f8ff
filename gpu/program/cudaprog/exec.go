package cudaprog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tetris-hil/tetris-hil/gpu/cuda"
	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

func init() {
	shared.RegisterExecutor("cuda", RunShared)
	shared.RegisterRelease("cuda", ReleaseShared)
}

// RunShared is the executor of the cuda engine's workers in a replay across worker processes
// (package gpu/program/shared): it runs the job's endpoints on the worker's GPU dev as stream
// programs over the shared file, which it registers with the driver (MapShared). Per step of
// an endpoint, its stream holds a cuStreamWaitValue32 on the flag of every predecessor and
// signal in the file, the sdelay kernel (the target: the latest of the start instant and their
// end stamps; a spin on %globaltimer until then, converted to CLOCK_MONOTONIC with the GPU's
// offset, measured before arming with the stamp kernel), the copy into the destination's buffer
// (a buffer of this GPU, or one the receiving worker exported, imported by IPC) and the sstamp
// kernel (end stamp, flag, the endpoint's next step). The streams wait first on a go flag of
// this worker, which it sets once the host has released the run; then it only watches for the
// end, the host's abort, the deadline and a delay kernel that gave up. The GPU stays open for
// the worker's next job (the replay's next algorithm: no second JIT compilation), and so does
// the offset, measured again only once older than ClockMaxAge.
func RunShared(ctx context.Context, dev transfer.Device, job shared.Job) (err error) {
	if job.Program == nil {
		return errors.New("cudaprog: a job without a program")
	}
	m, err := shared.Open(job.Path, job.Dims)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := m.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("unmapping %s: %w", job.Path, cerr))
		}
	}()
	w := job.Work
	if err := w.Check(m, job.Program); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			m.SetStatus(w.Worker, shared.Failed)
			return
		}
		m.SetStatus(w.Worker, shared.Finished)
	}()
	for _, e := range w.Endpoints {
		st := shared.Waiting
		if len(job.Program.Endpoints[e]) == 0 {
			st = shared.Done
		}
		m.SetEndpoint(e, 0, st)
	}
	timeout := w.ArmTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	g, err := opened.device(dev)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// A failed run may leave the context faulted (a sticky error): the next job opens
			// the GPU afresh.
			err = errors.Join(err, ReleaseShared())
		}
	}()
	run := *g // the opened GPU, with this job's copy kind and timeout
	run.cfg.Kind, run.cfg.Timeout = w.Kind, timeout
	if run.cfg.Kind == "" {
		run.cfg.Kind = transfer.CE
	}
	x := &sharedRun{g: &run, m: m, p: job.Program, w: w, timeout: timeout, dst: map[[2]int]cuda.DevicePtr{}}
	return x.execute(ctx)
}

// ClockMaxAge is how long a worker reuses its GPU's measured clock offset for later jobs
// (Work.ClockMaxAge overrides it). The host's CLOCK_MONOTONIC may be slewed by NTP by up to
// 500 ppm (the kernel's limit on a frequency adjustment) and the GPU timer's oscillator runs
// off the host's by tens of ppm, so an offset drifts by up to about 0.5 µs a millisecond: a
// millisecond keeps that under the 1 µs the delays are checked to. Jobs that follow each other
// faster than that share one measurement; the kept-open GPU (no second JIT compilation) is
// the larger saving either way.
const ClockMaxAge = time.Millisecond

// opened is the GPU a worker process keeps open from one job to the next (the jobs of a
// replay: one per algorithm), so that a job neither JIT-compiles the kernels nor measures the
// clock again: one GPU per worker process.
var opened openGPU

type openGPU struct {
	mu    sync.Mutex
	dev   transfer.Device
	g     *Device
	off   shared.Offset
	when  time.Time // of off's measurement (zero: none)
	nSamp int
}

// device is the worker's opened GPU for dev, opening it (or, for another GPU, re-opening).
func (o *openGPU) device(dev transfer.Device) (*Device, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.g != nil && o.dev == dev {
		return o.g, nil
	}
	if err := o.releaseLocked(); err != nil {
		return nil, err
	}
	g, err := Open(Config{Device: dev})
	if err != nil {
		return nil, err
	}
	o.g, o.dev = g, dev
	return g, nil
}

// clock is the offset of g measured with n samples, reused while younger than maxAge.
func (o *openGPU) clock(g *Device, n int, maxAge time.Duration) (shared.Offset, error) {
	if maxAge <= 0 {
		maxAge = ClockMaxAge
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.when.IsZero() && o.nSamp == n && time.Since(o.when) < maxAge {
		return o.off, nil
	}
	off, err := g.MeasureClock(n)
	if err != nil {
		return off, err
	}
	o.off, o.when, o.nSamp = off, time.Now(), n
	return off, nil
}

func (o *openGPU) releaseLocked() error {
	g := o.g
	o.g, o.when = nil, time.Time{}
	if g == nil {
		return nil
	}
	return g.Close()
}

// ReleaseShared closes the GPU that the jobs of this worker process kept open (a worker calls
// it when it stops, and after a failed job).
func ReleaseShared() error {
	opened.mu.Lock()
	defer opened.mu.Unlock()
	return opened.releaseLocked()
}

// sharedRun is one RunShared's GPU state.
type sharedRun struct {
	g       *Device
	m       *shared.Mem
	p       *program.Program
	w       shared.Work
	timeout time.Duration
	base    cuda.DevicePtr // the shared file, as the GPU addresses it
	off     shared.Offset
	// blk is this worker's own mapped block: the go flag (offset 0), then the dependency
	// slots of every step (32-bit indices of 64-bit words of the shared file).
	blk      unsafe.Pointer
	blkD     cuda.DevicePtr
	bufs     []cuda.DevicePtr // allocated here
	imported []cuda.DevicePtr // opened by IPC
	src      map[int]cuda.DevicePtr
	dst      map[[2]int]cuda.DevicePtr
	streams  []cuda.Stream
	waits    []int // offsets of the flags the streams wait on, for release
}

// blkIdx is where the dependency slots start in the block.
const blkIdx = 8

func (x *sharedRun) execute(ctx context.Context) (err error) {
	base, unregister, err := x.g.MapShared(x.m)
	if err != nil {
		return err
	}
	x.base = base
	defer func() { err = errors.Join(err, unregister()) }()
	n := x.w.ClockSamples
	if n <= 0 {
		n = 16
	}
	if x.off, err = opened.clock(x.g, n, x.w.ClockMaxAge); err != nil {
		return fmt.Errorf("worker %d: %w", x.w.Worker, err)
	}
	x.m.SetClock(x.w.Worker, n, x.off.OffsetNS, x.off.MinRTTNS)
	if err := x.g.th.Do(x.setup); err != nil {
		x.release()
		return errors.Join(fmt.Errorf("worker %d on GPU %d: %w", x.w.Worker, x.g.cfg.Device.GPU, err), x.g.th.Do(x.sync), x.g.th.Do(x.free))
	}
	x.m.Arm(x.w.Worker)
	if err := x.run(ctx); err != nil {
		// The streams wait on flags that may never be written: set them, so that the streams
		// run out and can be destroyed. The run is void: say so first, and abort it, which
		// also stops the delay kernels spinning towards a target far ahead.
		x.m.SetStatus(x.w.Worker, shared.Failed)
		x.m.Abort()
		x.release()
		return errors.Join(err, x.g.th.Do(x.sync), x.g.th.Do(x.free))
	}
	return errors.Join(x.g.th.Do(x.sync), x.g.th.Do(x.free))
}

// run waits for the host's release, sets the go flag and watches until this worker's circuits
// have ended.
func (x *sharedRun) run(ctx context.Context) error {
	giveUp := time.Now().Add(x.timeout)
	for x.m.Start() == 0 {
		if err := x.alive(ctx); err != nil {
			return err
		}
		if time.Now().After(giveUp) {
			return fmt.Errorf("worker %d: the host did not start the run within %v of arming", x.w.Worker, x.timeout)
		}
		time.Sleep(50 * time.Microsecond)
	}
	atomic.StoreUint32((*uint32)(x.blk), 1)
	var mine []int
	for _, e := range x.w.Endpoints {
		for _, s := range x.p.Endpoints[e] {
			mine = append(mine, int(s.Circuit))
		}
	}
	for len(mine) > 0 {
		if err := x.alive(ctx); err != nil {
			return err
		}
		if int64(transfer.Monotonic()) > x.m.Deadline() {
			return fmt.Errorf("worker %d: the run's deadline passed with %d of its circuits not ended", x.w.Worker, len(mine))
		}
		var err error
		if mine, err = x.ended(mine); err != nil {
			return err
		}
		if len(mine) > 0 {
			time.Sleep(100 * time.Microsecond) // this thread is on no circuit's path
		}
	}
	return nil
}

// ended drops the circuits whose flags are set from cs, and fails on one whose delay kernel
// gave up (its start stamp 0).
func (x *sharedRun) ended(cs []int) ([]int, error) {
	var err error
	cs = slices.DeleteFunc(cs, func(c int) bool {
		r, ok := x.m.Circuit(c)
		if ok && r.Start == 0 && err == nil {
			err = fmt.Errorf("worker %d: circuit %d: its delay kernel gave up: its waits ended %.3g s after the run's start, beyond the timeout %v",
				x.w.Worker, c, float64(r.Target-x.m.Start())*1e-9, x.timeout)
		}
		return ok
	})
	return cs, err
}

func (x *sharedRun) alive(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("worker %d: %w", x.w.Worker, err)
	}
	if x.m.Aborted() {
		return fmt.Errorf("worker %d: %w", x.w.Worker, shared.ErrAborted)
	}
	return nil
}

// release sets the go flag and every flag a stream of this worker waits on (a void run's
// teardown).
func (x *sharedRun) release() {
	if x.blk != nil {
		atomic.StoreUint32((*uint32)(x.blk), 1)
	}
	b := x.m.Bytes()
	for _, off := range x.waits {
		atomic.StoreUint32((*uint32)(unsafe.Pointer(&b[off])), 1)
	}
}
