// Package bench is the coordinator side of a transfer measurement: it starts pinned worker
// processes, one per GPU (StartWorkers; Run starts a sender on the source GPU and a receiver on
// the destination GPU, which may be the same GPU), shares the receiver's buffer with the sender by
// IPC handle (or, where IPC is unavailable, has the sender allocate on the destination itself),
// and runs a size sweep of timed copies, recording the sender GPU's temperature, clocks and
// throttle reasons around each size. Fitting a cost model to the result is calibration's
// business, not this package's.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/worker"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// NVML is what bench needs of the GPUs' management library: identities, pinning and telemetry.
// *nvml.Lib provides it, on real NVML or on the fake server (nvml.Options.Fake).
type NVML interface {
	// Inventory lists the GPUs with their CUDA ordinals under CUDA_VISIBLE_DEVICES = *visible.
	Inventory(visible *string) (*nvml.Inventory, error)
	// CPUs is the set of CPUs local to a GPU, as NVML reports it.
	CPUs(gpu int) (affinity.Set, error)
	// Pin binds the calling OS thread to a GPU's CPUs.
	Pin(gpu int) error
	// Sample reads a GPU's temperature, clocks and throttle reasons.
	Sample(gpu int) (nvml.Telemetry, error)
}

// Config is one sweep. The fields from Lib on say how workers start, also for StartWorkers and
// CheckPinning.
type Config struct {
	Lib      NVML // GPU identities, pinning and telemetry
	Src, Dst int  // NVML indices
	Sizes    []int64
	Reps     int
	Warmup   int
	Kind     transfer.Kind
	// Engine and EngineOptions select the workers' transfer driver ("cuda" or "fake").
	Engine        string
	EngineOptions string
	// Command starts a worker: program and leading arguments (the tetris-hil binary and "worker").
	Command []string
	Env     []string
	// Visible is CUDA_VISIBLE_DEVICES (nil: unset), which decides the GPUs' CUDA ordinals.
	Visible *string
	// Unpinned starts the workers without CPU pinning.
	Unpinned bool
	// Timeout bounds each worker call; 0 means 60 s.
	Timeout time.Duration
	Log     io.Writer // the workers' logs
	// Started, when set, hears of each worker once it has answered: its hello (pid, device,
	// engine, the CPUs every thread may run on) and how long the start took. The CLI logs it at
	// debug level, for a lab setup whose workers start slowly or on the wrong CPUs.
	Started func(h worker.Hello, took time.Duration)
}

// Row is one message size.
type Row struct {
	Bytes  int64         `json:"bytes"`
	Median time.Duration `json:"median_ns"`
	Min    time.Duration `json:"min_ns"`
	Max    time.Duration `json:"max_ns"`
	GBps   float64       `json:"gb_per_s"` // bytes / median, in 10^9 bytes per second
	Times  []int64       `json:"times_ns"`
	// HostStartNS and HostEndNS are the host-clock span of the timed copies (CLOCK_MONOTONIC ns,
	// one clock for every worker; see transfer.Timing).
	HostStartNS int64          `json:"host_start_ns"`
	HostEndNS   int64          `json:"host_end_ns"`
	Before      nvml.Telemetry `json:"before"` // source GPU
	After       nvml.Telemetry `json:"after"`
}

// Result is a sweep.
type Result struct {
	Src     transfer.Device `json:"src"`
	Dst     transfer.Device `json:"dst"`
	Engine  string          `json:"engine"`
	Kind    transfer.Kind   `json:"kind"`
	Via     string          `json:"via"` // "ipc" (two processes) or "peer" (one process, the fallback)
	Reps    int             `json:"reps"`
	Warmup  int             `json:"warmup"`
	SrcCPUs string          `json:"src_cpus"` // CPUs each worker was pinned to and checked on
	DstCPUs string          `json:"dst_cpus"`
	Rows    []Row           `json:"rows"`
}

// Sizes returns min, 2·min, 4·min, ... up to max (max included even off the doubling ladder).
func Sizes(min, max int64) ([]int64, error) {
	if min <= 0 || max < min {
		return nil, fmt.Errorf("sizes %d..%d: want 0 < min <= max", min, max)
	}
	var out []int64
	for s := min; s < max; s *= 2 {
		out = append(out, s)
	}
	return append(out, max), nil
}

// Run starts the workers, runs the sweep and stops the workers.
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	if cfg.Lib == nil || len(cfg.Command) == 0 {
		return nil, errors.New("bench config: Lib and Command are required")
	}
	if len(cfg.Sizes) == 0 || cfg.Reps <= 0 {
		return nil, fmt.Errorf("sweep of %d sizes × %d reps: want at least one of each", len(cfg.Sizes), cfg.Reps)
	}
	if _, err := transfer.ParseKind(string(cfg.Kind)); err != nil {
		return nil, err
	}
	// Receiver first: if it cannot start there is no point pinning a sender. Close stops the
	// last started first, so the sender closes its IPC mapping of the receiver's buffer before
	// the receiver frees it (cuda.h leaves the other order undefined).
	ws, err := StartWorkers(ctx, cfg, []int{cfg.Dst, cfg.Src})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, ws.Close()) }()
	// The receiver only holds the buffer while the sender copies into it: without a watch, its
	// death would go unnoticed until Close, after the whole sweep.
	wctx, stop := ws.Watch(ctx)
	defer stop()
	defer func() {
		if err != nil && ctx.Err() == nil && wctx.Err() != nil {
			err = context.Cause(wctx)
		}
	}()
	src, dst := ws.Device(cfg.Src), ws.Device(cfg.Dst)
	sw, rw := ws.Worker(cfg.Src), ws.Worker(cfg.Dst)
	res = &Result{Src: src, Dst: dst, Engine: cfg.Engine, Kind: cfg.Kind, Reps: cfg.Reps, Warmup: cfg.Warmup}
	res.SrcCPUs, res.DstCPUs = sw.Hello().CPUs, rw.Hello().CPUs

	buf, via, err := Connect(wctx, sw, rw, dst, slices.Max(cfg.Sizes))
	if err != nil {
		return nil, err
	}
	res.Via = via
	copyTmpl := transfer.Copy{Reps: cfg.Reps, Warmup: cfg.Warmup, Kind: cfg.Kind}
	if res.Rows, err = Sweep(wctx, cfg.Lib, sw, buf, cfg.Sizes, copyTmpl, ws.timeout); err != nil {
		return nil, fmt.Errorf("copies from GPU %d to GPU %d: %w", src.GPU, dst.GPU, err)
	}
	return res, nil
}

// Workers is one running worker per GPU, started by StartWorkers and stopped together by Close.
type Workers struct {
	gpus    []int // in start order
	workers map[int]*worker.Worker
	devices map[int]transfer.Device
	timeout time.Duration
}

// StartWorkers starts one worker per distinct GPU in gpus, in that order, each pinned to its GPU's
// CPUs unless cfg.Unpinned, with cfg's engine, command, environment, timeout and log (cfg's sweep
// fields are not used). If one fails to start, those already started are stopped and the error
// names the GPU.
func StartWorkers(ctx context.Context, cfg Config, gpus []int) (*Workers, error) {
	if cfg.Lib == nil || len(cfg.Command) == 0 {
		return nil, errors.New("worker config: Lib and Command are required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	inv, err := cfg.Lib.Inventory(cfg.Visible)
	if err != nil {
		return nil, err
	}
	ws := &Workers{workers: map[int]*worker.Worker{}, devices: map[int]transfer.Device{}, timeout: cfg.Timeout}
	for _, gpu := range gpus {
		if _, ok := ws.workers[gpu]; ok {
			continue
		}
		dev, err := device(inv, gpu)
		if err != nil {
			return nil, errors.Join(err, ws.Close())
		}
		t0 := time.Now()
		w, err := start(ctx, cfg, dev)
		if err != nil {
			return nil, errors.Join(err, ws.Close())
		}
		if cfg.Started != nil {
			cfg.Started(w.Hello(), time.Since(t0))
		}
		ws.gpus = append(ws.gpus, gpu)
		ws.workers[gpu], ws.devices[gpu] = w, dev
	}
	return ws, nil
}

// GPUs lists the GPUs with a worker, in start order.
func (ws *Workers) GPUs() []int { return slices.Clone(ws.gpus) }

// Worker is GPU gpu's worker, nil if none was started for it.
func (ws *Workers) Worker(gpu int) *worker.Worker { return ws.workers[gpu] }

// Device is how GPU gpu's worker names its GPU (NVML index, CUDA ordinal, bus id).
func (ws *Workers) Device(gpu int) transfer.Device { return ws.devices[gpu] }

// Watch returns a context derived from ctx that is cancelled as soon as one of the workers exits
// unasked, with that worker's error (worker.Worker.Died: GPU, pid, signal) as its cause, so that a
// sweep driving one worker stops when another one it depends on is gone. stop releases it.
func (ws *Workers) Watch(ctx context.Context) (wctx context.Context, stop func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	for _, gpu := range ws.gpus {
		w := ws.workers[gpu]
		go func() {
			select {
			case <-w.Exited():
				if err := w.Died(); err != nil {
					cancel(err)
				}
			case <-wctx.Done():
			}
		}()
	}
	return wctx, func() { cancel(context.Canceled) }
}

// Close stops every worker, last started first, and joins their errors (a worker that died
// unasked is one, naming its GPU, pid and signal).
func (ws *Workers) Close() error {
	var errs []error
	for i := len(ws.gpus) - 1; i >= 0; i-- {
		errs = append(errs, ws.workers[ws.gpus[i]].Close())
	}
	ws.gpus = nil
	return errors.Join(errs...)
}

// Sweep runs c (its Bytes set to each size in turn) from worker sw into its destination buffer
// buf, and records sw's GPU's telemetry before and after each size. Workers already started can
// be swept again and again, pair after pair, which is what a calibration over all pairs does.
func Sweep(ctx context.Context, lib NVML, sw *worker.Worker, buf int, sizes []int64, c transfer.Copy, timeout time.Duration) ([]Row, error) {
	var rows []Row
	for _, n := range sizes {
		row := Row{Bytes: n}
		row.Before, _ = lib.Sample(sw.GPU())
		c.Bytes = n
		tm, err := sw.Copy(ctx, buf, c, timeout)
		if err != nil {
			return nil, fmt.Errorf("%d bytes: %w", n, err)
		}
		row.After, _ = lib.Sample(sw.GPU())
		times := tm.Times
		row.Median = transfer.Median(times)
		row.Min, row.Max = slices.Min(times), slices.Max(times)
		if row.Median > 0 {
			row.GBps = float64(n) / row.Median.Seconds() / 1e9
		}
		for _, d := range times {
			row.Times = append(row.Times, d.Nanoseconds())
		}
		row.HostStartNS, row.HostEndNS = tm.HostStart.Nanoseconds(), tm.HostEnd.Nanoseconds()
		rows = append(rows, row)
	}
	return rows, nil
}

func device(inv *nvml.Inventory, gpu int) (transfer.Device, error) {
	if gpu < 0 || gpu >= len(inv.GPUs) {
		return transfer.Device{}, fmt.Errorf("GPU %d: this machine has GPUs 0..%d", gpu, len(inv.GPUs)-1)
	}
	g := inv.GPUs[gpu]
	if g.CUDAOrdinal < 0 {
		return transfer.Device{}, fmt.Errorf("GPU %d (%s) is hidden from CUDA by CUDA_VISIBLE_DEVICES", gpu, g.PCIBusID)
	}
	return transfer.Device{GPU: gpu, CUDAOrdinal: g.CUDAOrdinal, BusID: g.PCIBusID}, nil
}

func start(ctx context.Context, cfg Config, dev transfer.Device) (*worker.Worker, error) {
	env := cfg.Env
	if _, ok := os.LookupEnv("CUDA_DEVICE_ORDER"); !ok {
		// CUDA's default order (fastest first) need not be bus order; the ordinals were mapped in
		// bus order, and the worker checks the bus id it gets.
		env = append(slices.Clone(env), "CUDA_DEVICE_ORDER=PCI_BUS_ID")
	}
	spec := worker.Spec{
		Config:  worker.Config{Device: dev, Engine: cfg.Engine, EngineOptions: cfg.EngineOptions},
		Command: cfg.Command,
		Env:     env,
		Timeout: cfg.Timeout,
		Log:     cfg.Log,
	}
	if !cfg.Unpinned {
		spec.Pin = func() error { return cfg.Lib.Pin(dev.GPU) }
	}
	return worker.Start(ctx, spec)
}

// Connect gives sender sw a destination buffer of n bytes on rw's GPU dst: rw's own, shared by
// IPC handle, or, where IPC is unavailable, one sw allocates on dst itself. via says which ("ipc"
// or "peer"). sw and rw may be the same worker (a loopback pair on one GPU).
func Connect(ctx context.Context, sw, rw *worker.Worker, dst transfer.Device, n int64) (buf int, via string, err error) {
	id, handle, err := rw.Export(ctx, n)
	if err == nil {
		if sw == rw {
			return id, "ipc", nil // the exporter's own buffer: no handle to open
		}
		if buf, err = sw.Import(ctx, handle); err == nil {
			return buf, "ipc", nil
		}
	}
	if !errors.Is(err, transfer.ErrIPCUnsupported) {
		return 0, "", err
	}
	buf, err = sw.Peer(ctx, dst, n)
	return buf, "peer", err
}

// WriteTable prints the sweep as an aligned table.
func WriteTable(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "GPU %d -> GPU %d: %s copies via %s, engine %s, %d timed (+%d warmup) per size; workers on CPUs %s (src), %s (dst)\n",
		r.Src.GPU, r.Dst.GPU, strings.ToUpper(string(r.Kind)), r.Via, r.Engine, r.Reps, r.Warmup, r.SrcCPUs, r.DstCPUs)
	fmt.Fprintln(tw, "SIZE\tMEDIAN\tMIN\tMAX\tGB/S\tTEMP C\tSM MHZ\tTHROTTLE\t")
	for _, row := range r.Rows {
		reasons := strings.Join(row.After.ThrottleReasons, ",")
		if reasons == "" {
			reasons = "none"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f\t%d→%d\t%d→%d\t%s\t\n", units.FormatBinary(row.Bytes),
			us(row.Median), us(row.Min), us(row.Max), row.GBps,
			row.Before.TemperatureC, row.After.TemperatureC, row.Before.SMClockMHz, row.After.SMClockMHz, reasons)
	}
	return tw.Flush()
}

func us(d time.Duration) string { return fmt.Sprintf("%.2f us", float64(d.Nanoseconds())/1e3) }
