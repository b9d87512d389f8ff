// Package cudaprog runs compiled replay programs (package gpu/program) on one GPU as stream
// programs, with no host on a circuit's critical path: one CUDA stream per endpoint holds, for
// each of its steps, a cuStreamWaitValue32 per dependency (the end flags of its predecessors
// and of its signals, in pinned host memory mapped into the GPU), a delay kernel that spins on
// %globaltimer until the latest of their end stamps, the copy (a copy-engine
// cuMemcpyDtoDAsync, or the SM copy kernel of gpu/cuda), and a stamp kernel that writes the
// copy's end time and then its flag. A host thread plays the station: it watches the end flags,
// times each reconfiguration command with the model (program.Tracker) and writes the command's
// end (a %globaltimer instant) and then its flag, which releases the circuits waiting on it at
// exactly that instant. Every stamp is the GPU's %globaltimer, so the timeline is on one clock.
//
// Every endpoint runs on the one GPU the Device was opened on (a one-GPU machine's replay with
// --allow-shared-gpu). The driver is bound at run time through purego, as gpu/cuda does; without
// a GPU, Open fails with cuda.ErrUnavailable and a message suggesting the fake device.
package cudaprog

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tetris-hil/tetris-hil/gpu/cuda"
	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// Config says which GPU runs the programs and how copies are made.
type Config struct {
	Device transfer.Device
	// Kind is transfer.CE (copy engines) or transfer.SM (the SM copy kernel).
	Kind transfer.Kind
	// Timeout bounds one program's run (default one minute): a delay kernel whose target lies
	// further ahead gives up, and the host stops waiting.
	Timeout time.Duration
}

// Device is one GPU running compiled programs.
type Device struct {
	cfg                   Config
	d                     *cuda.Driver
	ops                   *memOps
	th                    *cuda.Thread
	cuDev                 cuda.Device
	ctx                   cuda.Context
	mod, copyMod          cuda.Module
	delayK, stampK, copyK cuda.Function
	sdelayK, sstampK      cuda.Function // the kernels of the replay across worker processes
	sms                   int32
}

// Open binds the driver and prepares the GPU of cfg.
func Open(cfg Config) (*Device, error) {
	if cfg.Kind == "" {
		cfg.Kind = transfer.CE
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	d, err := cuda.Load()
	if err != nil {
		return nil, fmt.Errorf("compiled replay on a GPU: %w", err)
	}
	ops, err := loadMemOps()
	if err != nil {
		return nil, err
	}
	g := &Device{cfg: cfg, d: d, ops: ops, th: cuda.NewThread()}
	if err := g.th.Do(g.init); err != nil {
		if g.ctx != 0 {
			_ = g.th.Do(func() error { return d.Check("cuDevicePrimaryCtxRelease", d.DevicePrimaryCtxRelease(g.cuDev)) })
		}
		g.th.Close()
		return nil, fmt.Errorf("compiled replay on GPU %d (CUDA ordinal %d): %w", cfg.Device.GPU, cfg.Device.CUDAOrdinal, err)
	}
	return g, nil
}

func (g *Device) init() error {
	d := g.d
	if r := d.Init(0); r != cuda.Success {
		err := d.Check("cuInit", r)
		if r == cuda.ErrorNoDevice {
			return fmt.Errorf("%w: %v: no GPU visible; run with --fake to replay on the fake device", cuda.ErrUnavailable, err)
		}
		return err
	}
	if err := d.Check("cuDeviceGet", d.DeviceGet(&g.cuDev, int32(g.cfg.Device.CUDAOrdinal))); err != nil {
		return err
	}
	if err := d.Check("cuDevicePrimaryCtxRetain", d.DevicePrimaryCtxRetain(&g.ctx, g.cuDev)); err != nil {
		return err
	}
	if err := d.Check("cuCtxSetCurrent", d.CtxSetCurrent(g.ctx)); err != nil {
		return err
	}
	if err := d.Check("cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", d.DeviceGetAttribute(&g.sms, cuda.AttrMultiprocessorCount, g.cuDev)); err != nil {
		return err
	}
	load := func(image []byte, m *cuda.Module, what string, fns map[string]*cuda.Function) error {
		if err := d.Check("cuModuleLoadData("+what+")", d.ModuleLoadData(m, &image[0])); err != nil {
			return err
		}
		runtime.KeepAlive(image)
		for name, f := range fns {
			if err := d.Check("cuModuleGetFunction("+name+")", d.ModuleGetFunction(f, *m, name)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := load(ptxImage(), &g.mod, "program.ptx", map[string]*cuda.Function{"delay": &g.delayK, "stamp": &g.stampK,
		"sdelay": &g.sdelayK, "sstamp": &g.sstampK}); err != nil {
		return err
	}
	return load(cuda.KernelsPTX(), &g.copyMod, "kernels.ptx", map[string]*cuda.Function{cuda.CopyKernel: &g.copyK})
}

// Close releases the GPU.
func (g *Device) Close() error {
	err := g.th.Do(func() error {
		return errors.Join(g.d.Check("cuModuleUnload", g.d.ModuleUnload(g.mod)), g.d.Check("cuModuleUnload", g.d.ModuleUnload(g.copyMod)),
			g.d.Check("cuDevicePrimaryCtxRelease", g.d.DevicePrimaryCtxRelease(g.cuDev)))
	})
	g.th.Close()
	return err
}

// run is one program's GPU state: the mapped host block (stamps, flags, delay outputs, the
// steps' dependency lists), buffers and streams.
type run struct {
	g       *Device
	p       *program.Program
	n, ns   int
	host    unsafe.Pointer
	hostD   cuda.DevicePtr
	size    uintptr
	offFlag uintptr // flags: [go, circuits..., signals..., scratch]
	// offAbort is the run's abort word (32 bits): the delay kernels give up their spin once it
	// is set, so that a cancelled run stops without waiting for targets far ahead.
	offAbort uintptr
	offOut   uintptr // delay outputs: two per circuit (target, release)
	offIdx   uintptr // dependency slots of every step, one after another
	bufs     []cuda.DevicePtr
	src      []cuda.DevicePtr          // per endpoint
	dst      map[[2]int]cuda.DevicePtr // per pair
	streams  []cuda.Stream
}

// Slots: stamp 0 is the program's start, 1+c circuit c's end, 1+n+g signal g's command end;
// flags likewise (flag 0 releases every stream).
func (r *run) stamp(i int) *uint64 { return (*uint64)(unsafe.Add(r.host, 8*i)) }
func (r *run) flag(i int) *uint32  { return (*uint32)(unsafe.Add(r.host, r.offFlag+uintptr(4*i))) }
func (r *run) out(c int) *[2]uint64 {
	return (*[2]uint64)(unsafe.Add(r.host, r.offOut+uintptr(16*c)))
}

// Execute runs p on the GPU, its commands timed by st, and returns its stamps.
func (g *Device) Execute(ctx context.Context, p *program.Program, st program.Station) (*program.Stamps, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	r := &run{g: g, p: p, n: p.Circuits, ns: len(p.Signals), dst: map[[2]int]cuda.DevicePtr{}}
	if err := g.th.Do(r.setup); err != nil {
		// What was enqueued waits on flags: release them all, so the streams can be destroyed.
		r.abort()
		return nil, errors.Join(fmt.Errorf("compiled replay on GPU %d: %w", g.cfg.Device.GPU, err), g.th.Do(r.sync), g.th.Do(r.free))
	}
	stamps, err := r.execute(ctx, st)
	return stamps, errors.Join(err, g.th.Do(r.free))
}

// execute releases the enqueued programs at a start instant just ahead, plays the station
// until every circuit has ended, and reads the stamps back.
func (r *run) execute(ctx context.Context, st program.Station) (*program.Stamps, error) {
	g := r.g
	t0, err := r.gpuNow()
	if err != nil {
		return nil, err
	}
	t0 += uint64(200 * time.Microsecond) // every stream is parked on the go flag by then
	atomic.StoreUint64(r.stamp(0), t0)
	atomic.StoreUint32(r.flag(0), 1)
	tr := program.NewTracker(r.p, st)
	if err := r.station(ctx, tr, t0); err != nil {
		r.abort()
		return nil, errors.Join(err, g.th.Do(r.sync))
	}
	if err := g.th.Do(r.sync); err != nil {
		return nil, err
	}
	return r.stamps(tr, t0)
}

// station watches the circuits' end flags and issues the commands due, writing each command's
// end stamp before its flag.
func (r *run) station(ctx context.Context, tr *program.Tracker, t0 uint64) error {
	ended := make([]bool, r.n)
	left := r.n
	deadline := time.Now().Add(r.g.cfg.Timeout)
	sec := func(ns uint64) float64 { return float64(int64(ns-t0)) * 1e-9 }
	for iter := 0; left > 0; iter++ {
		for c := range r.n {
			if !ended[c] && atomic.LoadUint32(r.flag(1+c)) != 0 {
				ended[c], left = true, left-1
				tr.Ended(int32(c), sec(atomic.LoadUint64(r.stamp(1+c))))
			}
		}
		before := len(tr.Commands())
		if _, err := tr.IssueDue(); err != nil {
			return err
		}
		for _, cmd := range tr.Commands()[before:] {
			end := t0 + uint64(program.NotBeforeNS(cmd.End))
			for _, s := range cmd.Signals {
				atomic.StoreUint64(r.stamp(1+r.n+int(s)), end)
				atomic.StoreUint32(r.flag(1+r.n+int(s)), 1)
			}
		}
		if iter&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the programs did not finish within %s (%d of %d circuits ended)", r.g.cfg.Timeout, r.n-left, r.n)
			}
		}
	}
	return nil
}

// abort stops the delay kernels spinning (the abort word) and releases every wait at once (the
// start too, with no delay), so that the streams run out and can be synchronised.
func (r *run) abort() {
	if r.host == nil {
		return
	}
	atomic.StoreUint32((*uint32)(unsafe.Add(r.host, r.offAbort)), 1)
	atomic.StoreUint64(r.stamp(0), 0)
	for i := 0; i <= r.n+r.ns; i++ {
		atomic.StoreUint32(r.flag(i), 1)
	}
}

// stamps converts the GPU's stamps to seconds from the start.
func (r *run) stamps(tr *program.Tracker, t0 uint64) (*program.Stamps, error) {
	st := &program.Stamps{Start: make([]float64, r.n), End: make([]float64, r.n), Target: make([]float64, r.n),
		Commands: tr.Commands(), CommandOf: tr.CommandOf()}
	sec := func(ns uint64) float64 { return float64(int64(ns-t0)) * 1e-9 }
	for c := range r.n {
		o := r.out(c)
		if o[1] == 0 {
			return nil, fmt.Errorf("circuit %d: its delay kernel gave up: its waits ended %.3g s ahead", c, sec(o[0]))
		}
		st.Target[c], st.Start[c], st.End[c] = sec(o[0]), sec(o[1]), sec(*r.stamp(1 + c))
	}
	return st, nil
}
