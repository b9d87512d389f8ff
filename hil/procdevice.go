package hil

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/worker"
)

// ProcessDevice runs compiled programs across worker processes, one per GPU (package gpu/bench's
// pinned workers): the worker of a GPU runs the programs of the endpoints on it, their flags and
// stamps in one shared memory file (package gpu/program/shared), and this process only releases
// them, plays the station from a thread that watches the end flags, and reads the stamps back.
// On the fake engine each worker is a fake device spinning on CLOCK_MONOTONIC, copies lasting
// exactly Duration. On the cuda engine each worker runs its endpoints as CUDA stream programs
// on its GPU (package gpu/program/cudaprog, RunShared), and the copies to another GPU's
// endpoint go into a buffer that GPU's worker exports for the run (CUDA IPC).
type ProcessDevice struct {
	ws      *bench.Workers
	engine  string
	kind    transfer.Kind
	gpuOf   []int
	gpus    []int // worker order
	dur     func(src, dst int, bytes int64) (float64, error)
	sleep   time.Duration
	timeout time.Duration
	dir     string
	clocks  []shared.Offset // the last run's
}

// StartProcessDevice starts one worker per distinct GPU of gpuOf with cfg (engine, command,
// pinning, timeout, copy kind); dur is the copy time of the fake device (the noise-free model
// the prediction uses; nil on a GPU, whose copies take what they take), sleep how far ahead of
// a deadline a fake worker stops sleeping and spins.
func StartProcessDevice(ctx context.Context, cfg bench.Config, gpuOf []int, dur func(src, dst int, bytes int64) (float64, error), sleep time.Duration) (*ProcessDevice, error) {
	if len(gpuOf) == 0 || (dur == nil && cfg.Engine == "fake") {
		return nil, errors.New("hil: a process device needs endpoints and, on the fake engine, a copy time")
	}
	gpus := slices.Clone(gpuOf)
	slices.Sort(gpus)
	gpus = slices.Compact(gpus)
	ws, err := bench.StartWorkers(ctx, cfg, gpus)
	if err != nil {
		return nil, fmt.Errorf("hil: workers for the compiled replay: %w", err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	dir := os.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dir = "/dev/shm" // memory, not a disk file the kernel writes back
	}
	return &ProcessDevice{ws: ws, engine: cfg.Engine, kind: cfg.Kind, gpuOf: slices.Clone(gpuOf), gpus: ws.GPUs(), dur: dur, sleep: sleep, timeout: timeout, dir: dir}, nil
}

// CPUs lists the CPUs each GPU's worker was pinned to, by GPU.
func (d *ProcessDevice) CPUs() map[int]string {
	out := map[int]string{}
	for _, g := range d.gpus {
		out[g] = d.ws.Worker(g).Hello().CPUs
	}
	return out
}

// ClockOffsets are the workers' clock offsets measured at the start of the last run, by GPU.
func (d *ProcessDevice) ClockOffsets() []shared.Offset { return slices.Clone(d.clocks) }

// Close stops the workers.
func (d *ProcessDevice) Close() error { return d.ws.Close() }

// Execute runs p on the workers, its commands timed by st.
func (d *ProcessDevice) Execute(ctx context.Context, p *program.Program, st program.Station) (*program.Stamps, error) {
	return d.ExecuteApplying(ctx, p, st, nil)
}

// ExecuteApplying is Execute with the station thread carrying each command out through apply
// (shared.Host.Apply): for real switches, whose commands end when they have settled.
func (d *ProcessDevice) ExecuteApplying(ctx context.Context, p *program.Program, st program.Station, apply func(context.Context, program.Command) error) (*program.Stamps, error) {
	if len(p.Endpoints) != len(d.gpuOf) {
		return nil, fmt.Errorf("hil: a program of %d endpoints on a device of %d", len(p.Endpoints), len(d.gpuOf))
	}
	durs, err := d.durations(p)
	if err != nil {
		return nil, err
	}
	of := make([]int, len(d.gpuOf))
	for e, g := range d.gpuOf {
		of[e] = slices.Index(d.gpus, g)
	}
	split, err := shared.Split(of, len(d.gpus))
	if err != nil {
		return nil, err
	}
	dims := shared.Dims{Endpoints: len(p.Endpoints), Circuits: p.Circuits, Signals: len(p.Signals), Workers: len(d.gpus)}
	f, err := os.CreateTemp(d.dir, "tetris-hil-replay-*.shm")
	if err != nil {
		return nil, fmt.Errorf("hil: shared memory: %w", err)
	}
	path := f.Name()
	f.Close()
	os.Remove(path) // Create makes it afresh, exclusively
	m, err := shared.Create(path, dims)
	if err != nil {
		return nil, fmt.Errorf("hil: %w", err)
	}
	defer os.Remove(path)
	defer m.Close()
	bufs, err := d.export(ctx, p, of)
	if err != nil {
		return nil, errors.Join(err, d.free(bufs))
	}
	calls := d.launch(ctx, m, p, split, durs, bufs)
	// A GPU's stamp kernel cannot wake a futex: on a GPU engine the watching thread spins
	// (its workers do not: they look at the file every 100 µs, on no circuit's path).
	h := &shared.Host{Program: p, Station: st, Apply: apply, Timeout: d.timeout, Alive: calls.alive, SpinOnly: d.spinOnly() || d.engine != "fake"}
	stamps, herr := h.Run(ctx, m)
	d.clocks = h.Offsets
	for i := range d.clocks {
		d.clocks[i].GPU = d.gpus[d.clocks[i].Worker]
	}
	werr := calls.wait()
	// Every importer has returned from its run, and closed its buffers: the exporters free.
	if ferr := d.free(bufs); herr == nil && werr == nil && ferr != nil {
		return nil, ferr
	}
	if herr == nil && werr != nil {
		return nil, fmt.Errorf("hil: compiled replay across %d worker processes: %w", len(d.gpus), werr)
	}
	if herr != nil {
		return nil, fmt.Errorf("hil: compiled replay across %d worker processes: %w", len(d.gpus), errors.Join(herr, calls.firstErr()))
	}
	return stamps, nil
}

// spinOnly says whether the workers and the host may spin without sleeping: when this process
// and every worker have a CPU of their own. With fewer, spinners starve each other (measured on
// two cores: 8 workers spinning made a µs-scale replay 100× slower than sleeping on the futex).
func (d *ProcessDevice) spinOnly() bool { return runtime.NumCPU() > len(d.gpus) }

// durations are the copy times of p's circuits in ns (zero on a GPU).
func (d *ProcessDevice) durations(p *program.Program) ([]int64, error) {
	out := make([]int64, p.Circuits)
	if d.dur == nil {
		return out, nil
	}
	for e, steps := range p.Endpoints {
		for _, s := range steps {
			sec, err := d.dur(e, int(s.Dst), s.Bytes)
			if err != nil || !(sec >= 0) || sec > math.MaxInt64/1e9 {
				return nil, fmt.Errorf("hil: circuit %d (%d→%d, %d bytes): copy time %g s: %v", s.Circuit, e, s.Dst, s.Bytes, sec, err)
			}
			out[s.Circuit] = int64(math.Round(sec * 1e9))
		}
	}
	return out, nil
}

// calls are the workers' run requests in flight.
type calls struct {
	mu   sync.Mutex
	errs []error
	wg   sync.WaitGroup
}

func (d *ProcessDevice) launch(ctx context.Context, m *shared.Mem, p *program.Program, split [][]int, durs []int64, bufs []exported) *calls {
	cs := &calls{errs: make([]error, len(d.gpus))}
	dims := m.Dims
	for w, g := range d.gpus {
		job := shared.Job{Path: m.Path, Dims: dims, Program: p,
			Work: shared.Work{Worker: w, Endpoints: split[w], Durations: durs, Sleep: d.sleep, ArmTimeout: d.timeout, SpinOnly: d.spinOnly(), Kind: d.kind}}
		for _, b := range bufs {
			if b.importer == w {
				job.Work.Buffers = append(job.Work.Buffers, b.Buffer)
			}
		}
		wk := d.ws.Worker(g)
		cs.wg.Add(1)
		go func() {
			defer cs.wg.Done()
			// The worker gives up at the run's deadline; the call outlasts it so that its own
			// error, not a kill, is what comes back.
			err := wk.Run(ctx, job, 2*d.timeout+10*time.Second)
			if err != nil {
				err = fmt.Errorf("GPU %d: %w", g, err)
			}
			cs.mu.Lock()
			cs.errs[w] = err
			cs.mu.Unlock()
		}()
	}
	return cs
}

// alive reports a worker whose process is gone or whose run failed, other than by the host's
// abort.
func (cs *calls) alive() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, err := range cs.errs {
		if err != nil && !isAbort(err) {
			return err
		}
	}
	return nil
}

func (cs *calls) wait() error {
	cs.wg.Wait()
	return errors.Join(cs.errs...)
}

// firstErr is a worker's own error other than being aborted, which follows from the host's.
func (cs *calls) firstErr() error {
	cs.wg.Wait()
	for _, err := range cs.errs {
		if err != nil && !isAbort(err) {
			return err
		}
	}
	return nil
}

// isAbort says whether a worker's run ended because the host aborted it; the reason crosses
// the protocol as text.
func isAbort(err error) bool {
	var we *worker.Error
	return errors.As(err, &we) && we.Failure == worker.Refused && strings.Contains(we.Detail, shared.ErrAborted.Error())
}

// exported is a buffer a receiving worker exported for the copies of one pair from another
// worker.
type exported struct {
	shared.Buffer
	gpu, id  int // the exporter's GPU and its buffer id
	importer int // the sending worker
}

// export has the receiving worker of every pair of p whose endpoints are on different workers
// (of: endpoint → worker) export a buffer as large as the pair's largest copy, on engines that
// copy (not the fake one, whose workers only keep time). On an error it returns what it
// exported so far, for free.
func (d *ProcessDevice) export(ctx context.Context, p *program.Program, of []int) ([]exported, error) {
	if d.engine == "fake" {
		return nil, nil
	}
	size := map[[2]int]int64{}
	for e, steps := range p.Endpoints {
		for _, s := range steps {
			if of[e] != of[s.Dst] && s.Bytes > 0 {
				k := [2]int{e, int(s.Dst)}
				size[k] = max(size[k], s.Bytes)
			}
		}
	}
	keys := slices.Collect(maps.Keys(size))
	slices.SortFunc(keys, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	var out []exported
	for _, k := range keys {
		g := d.gpus[of[k[1]]]
		id, h, err := d.ws.Worker(g).Export(ctx, size[k])
		if err != nil {
			return out, fmt.Errorf("hil: the buffer on GPU %d for copies from endpoint %d (GPU %d) to endpoint %d: %w (a compiled replay across GPUs copies through CUDA IPC)",
				g, k[0], d.gpus[of[k[0]]], k[1], err)
		}
		out = append(out, exported{Buffer: shared.Buffer{Src: k[0], Dst: k[1], Handle: h}, gpu: g, id: id, importer: of[k[0]]})
	}
	return out, nil
}

// free has the exporters free the buffers of a run, once every importer is done with them.
func (d *ProcessDevice) free(bufs []exported) error {
	var errs []error
	for _, b := range bufs {
		if err := d.ws.Worker(b.gpu).Free(context.Background(), b.id); err != nil {
			errs = append(errs, fmt.Errorf("hil: freeing the buffer on GPU %d for %d→%d: %w", b.gpu, b.Src, b.Dst, err))
		}
	}
	return errors.Join(errs...)
}
