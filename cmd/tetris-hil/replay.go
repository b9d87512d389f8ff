package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/program/cudaprog"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/hil"
	"github.com/tetris-hil/tetris-hil/hil/delay"
	"github.com/tetris-hil/tetris-hil/internal/outlock"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/switchctl"

	// The switch backends a wiring map can name.
	_ "github.com/tetris-hil/tetris-hil/switchctl/fake"
	_ "github.com/tetris-hil/tetris-hil/switchctl/gpioswitch"
	_ "github.com/tetris-hil/tetris-hil/switchctl/serialboard"
)

func init() { subcommands = append(subcommands, newReplayCmd) }

type replayFlags struct {
	src                      demandSource
	plan                     planFlags
	ff                       fakeGPUFlags
	algo, schedule, out      string
	wiring, port             string
	gpuMap, calibration      string
	allowShared              bool
	copyKind                 string
	fakeAlpha, fakeBandwidth string
	fakeNoise                float64
	fakeSeed                 uint64
	inProcess                bool
	processPerGPU            bool
	virtual                  bool
	lockClocks               bool
	clockMHz                 uint
	timeout                  string
	unpinned                 bool
	spin                     string
	selftest                 bool
	nice                     int
	selftestReps             int
}

func newReplayCmd() *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay (--schedule S.json | [--demand FILE --matrix I] --algo LIST) --out RUNDIR",
		Short: "Replay schedules live on GPUs (and switches) and compare the measured timeline with the emulator's prediction",
		Long: `replay drives the GPUs through each schedule in real time, as Tetris §4.1's hardware emulation
does with measured transfer times, and puts the measured timeline beside the emulator's prediction.

Without --wiring the replay is compiled: the walker's dependency order becomes one program per
endpoint (for each of its circuits: wait for the end stamps of its predecessors, wait until the
latest of them plus the modelled reconfiguration delay α_r (--reconfig), copy, stamp the end), the
device runs all programs without the host, and the host reads the stamps back. So a figure at
microsecond scale is the schedule's, not a host round trip per circuit; the summary's HARNESS
columns say how much is left of the harness per circuit (from its last dependency's end plus the
modelled delay to its start: median, p99, worst). With --wiring the host walks the order itself
and sends every switch change to the controller of the map when the walker emits it (a switch
board's T_r is milliseconds): copies then run in pinned worker processes, one per endpoint.

Endpoints map to GPUs by --gpu-map (default: endpoint i on GPU i). More endpoints than GPUs is an
error; several endpoints on one GPU (a one-GPU machine) need --allow-shared-gpu, and the summary
says so: their copies then contend for that GPU.
Endpoints on several GPUs are replayed host-driven unless --process-per-gpu: then one pinned
worker process per GPU runs the programs of its endpoints as CUDA stream programs, their flags and
stamps in one shared memory file that every GPU maps, copies to another GPU going into a buffer
its worker exported (CUDA IPC), and each GPU's clock is put on the host's by an offset measured at
the start (clock_offsets in summary.json).

The emulator predicts each schedule with the same models: the calibration's per-pair α-β
(--calibration), or under --fake the fake engine's own α-β; reconfiguration as α_r per command in
parallel, or with --wiring as the controller carries commands out (one at a time, T_r per change
and T_w to settle, from the wiring map).

RUNDIR receives manifest.json (inputs with SHA-256, tool, GPU inventory, calibration, wiring,
flags; "complete": false until the end), per run the schedule, NAME.predicted.json (emulator run
record), NAME.live.json (measured run record: 'tetris-hil verify S --timeline NAME.live.json'
accepts it) and NAME.live.trace.json (Perfetto), and summary.json (per run the live and predicted
completion, the per-circuit start/end differences and the harness cost: median, p99, worst).
Ctrl-C stops the replay, keeps what was measured (NAME.partial.json), marks the manifest
incomplete, puts the switches safe and unlocks locked clocks.

With --fake, the GPUs are a fake NVML server. Compiled, the programs run on a fake device: every
endpoint in one thread spinning on the monotonic clock (sleeping until --spin before each
deadline), each copy lasting exactly the fake engine's α + bytes/B for its pair (around
--fake-alpha and --fake-bandwidth; --fake-noise does not apply), so live minus predicted is the
harness's cost; --virtual runs the same programs on a virtual clock instead. With --wiring the
copies run on the fake engine (noise included) and the in-memory fake controller has the map's
T_r and T_w.

--selftest-delays measures the injection error (actual wake-up minus deadline) for 10ns to 10ms
and prints median, p99 and worst; nothing else runs.`,
		Example: `  tetris-hil replay --fake --matrix 0 --algo tetris,bvn --reconfig 1ms --out runs/r1
  tetris-hil replay --fake --fake-alpha 5us --fake-bandwidth 370GB/s --matrix 0 --algo tetris,bvn,sunflow,maxweight --reconfig 10us --out runs/r4
  tetris-hil replay --fake --matrix 0 --algo all --wiring examples/wiring-8x8-serial.yaml --out runs/r2
  tetris-hil replay --schedule s.json --calibration cal.json --gpu-map 0,0,0,0,0,0,0,0 --allow-shared-gpu --out runs/r3
  tetris-hil replay --selftest-delays`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runReplay(cmd, &f) },
	}
	fs := cmd.Flags()
	f.src.register(fs)
	f.plan.register(fs)
	f.ff.register(cmd)
	fs.StringVar(&f.algo, "algo", "tetris", "schedulers to replay: a comma-separated list, or all")
	fs.StringVar(&f.schedule, "schedule", "", "replay this schedule file as it is instead of scheduling")
	fs.StringVar(&f.out, "out", "", "run directory: new, or one without a manifest.json (created, with its parents, if missing)")
	fs.StringVar(&f.wiring, "wiring", "", "switch wiring map (YAML): drive its switches (the fake controller under --fake)")
	fs.StringVar(&f.port, "port", "", "with --wiring: serial port, overriding the map's")
	fs.StringVar(&f.gpuMap, "gpu-map", "", "the GPU of each endpoint, comma-separated NVML indices (default: endpoint i on GPU i)")
	fs.BoolVar(&f.allowShared, "allow-shared-gpu", false, "allow several endpoints on one GPU (one worker each); for one-GPU machines")
	fs.StringVar(&f.calibration, "calibration", "", "calibration file: the prediction's per-pair α + β·bytes")
	fs.StringVar(&f.copyKind, "copy", "ce", "copy with the copy engines (ce) or an SM kernel (sm)")
	fs.StringVar(&f.fakeAlpha, "fake-alpha", "5ms", "with --fake: per-copy latency α around which pairs lie")
	fs.StringVar(&f.fakeBandwidth, "fake-bandwidth", "1GB/s", "with --fake: bandwidth B around which pairs lie")
	fs.Float64Var(&f.fakeNoise, "fake-noise", 0.02, "with --fake: standard deviation of the log of each copy's time (0.02 ≈ ±2%)")
	fs.Uint64Var(&f.fakeSeed, "seed", 1, "with --fake: seed of the noise")
	renamedFlag(fs, "fake-seed", "seed")
	fs.BoolVar(&f.inProcess, "in-process", false, "with --fake --wiring: run the fake engines in this process instead of worker processes")
	fs.BoolVar(&f.processPerGPU, "process-per-gpu", false, "run the compiled programs in worker processes, one per GPU, flags and stamps in shared memory: fake devices under --fake, else CUDA stream programs on each GPU (with --wiring: compiled, the switch commands sent by the host thread that watches the stamps)")
	fs.BoolVar(&f.virtual, "virtual", false, "with --fake: run the compiled programs on a virtual clock (live then equals predicted: a check of the compiler)")
	fs.BoolVar(&f.lockClocks, "lock-clocks", false, "lock the GPUs' SM clocks (NVML, needs root) for the run; unlocked on every exit")
	fs.UintVar(&f.clockMHz, "clock-mhz", 0, "with --lock-clocks: SM clock in MHz (0: each GPU's maximum)")
	fs.StringVar(&f.timeout, "timeout", "60s", "a worker that does not answer a copy within this is reported hung and killed")
	fs.BoolVar(&f.unpinned, "unpinned", false, "do not pin the workers to their GPUs' CPUs")
	fs.StringVar(&f.spin, "spin", "1ms", "wait for deadlines by sleeping until this long before them, then spinning")
	fs.IntVar(&f.nice, "nice", -10, "run the replay (and its workers) at this niceness, ahead of other work on the machine (needs root; 0 leaves it)")
	fs.BoolVar(&f.selftest, "selftest-delays", false, "measure the delay-injection error for 10ns, 1us, 10us, 100us, 1ms, 10ms and exit")
	fs.IntVar(&f.selftestReps, "selftest-reps", 200, "with --selftest-delays: waits per delay")
	return cmd
}

func runReplay(cmd *cobra.Command, f *replayFlags) error {
	r := &replayRun{f: f, cmd: cmd, ctx: cmd.Context(), out: cmd.OutOrStdout()}
	defer r.close()
	if err := r.prepare(); err != nil || f.selftest {
		return err
	}
	if err := r.loadJobs(); err != nil {
		return err
	}
	if err := r.checkWiringFabric(); err != nil {
		return err
	}
	lock, err := claimOutDir(cmd, "out", f.out)
	if err != nil {
		return err
	}
	r.closers = append(r.closers, lock.Release)
	if err := hil.CheckDir(f.out); err != nil { // again, now that no other run can write there
		return usagef("--out %q: %v", f.out, err)
	}
	if err := r.openGPUs(); err != nil {
		return err
	}
	if err := r.openSwitches(); err != nil {
		return err
	}
	if err := r.predictionModel(); err != nil {
		return err
	}
	if err := r.manifest(); err != nil {
		return err
	}
	if err := r.startTransfers(); err != nil {
		return err
	}
	return r.run()
}

// replayRun is one replay command's state as its steps build it; close undoes, in reverse
// order, what the steps opened (GPU library, switch controller, workers).
type replayRun struct {
	f        *replayFlags
	cmd      *cobra.Command
	ctx      context.Context
	out      io.Writer
	closers  []func()
	injector delay.Injector

	opts        schedules.Options
	jobs        []hil.Job
	kind        transfer.Kind
	callTimeout float64
	ports       int

	lib    *nvml.Lib
	inv    *nvml.Inventory
	gpuOf  []int
	shared bool

	env          hil.Env
	man          hil.Manifest
	reconfig     emulator.ReconfigModel
	liveReconfig string

	predict            emulator.TransferModel
	fakeModel          fake.Model
	engine, engineOpts string
	notes              []string
	cfg                hil.Config
}

func (r *replayRun) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// prepare sets up delay injection and the process priority, and runs the delay self-test when
// asked for.
func (r *replayRun) prepare() error {
	f := r.f
	spin, err := units.ParseDuration(f.spin)
	if err != nil || spin < 0 {
		return usagef("--spin %q: want a duration ≥ 0 such as 1ms", f.spin)
	}
	r.injector = delay.Injector{SleepThreshold: max(secondsToDuration(spin), 1)}
	if f.nice < -20 || f.nice > 19 {
		return usagef("--nice %d: want -20..19", f.nice)
	}
	if f.nice != 0 {
		// Before any worker starts, so that they inherit it.
		if err := hil.Renice(f.nice); err != nil {
			logger.Warn().Err(err).Msg("replaying at the normal priority: other work on this machine delays the replay's reactions")
		}
	}
	if f.selftest {
		if f.selftestReps < 1 {
			return usagef("--selftest-reps %d: want at least 1", f.selftestReps)
		}
		stats, err := r.injector.SelfTest(r.ctx, delay.SelfTestDelays, f.selftestReps, nil)
		if err != nil {
			return err
		}
		return writeSelfTest(r.out, stats, r.injector)
	}
	return nil
}

// loadJobs checks the flags and plans (or reads) the schedules to replay.
func (r *replayRun) loadJobs() error {
	f := r.f
	if f.out == "" {
		return usagef("--out: missing (the run directory to write)")
	}
	if err := hil.CheckDir(f.out); err != nil {
		// A run still writing there holds the lock: name it rather than its manifest.
		if st, serr := os.Stat(f.out); serr == nil && st.IsDir() {
			l, lerr := outlock.Dir(f.out, commandLine())
			if lerr != nil {
				return fmt.Errorf("--out %q: %w", f.out, lerr)
			}
			l.Release()
		}
		return usagef("--out %q: %v", f.out, err)
	}
	if f.inProcess && (!f.ff.fake || f.wiring == "") {
		return usagef("--in-process: only with --fake --wiring (real copies run in pinned worker processes, and without --wiring a replay runs compiled, without workers)")
	}
	if f.processPerGPU && (f.virtual || f.inProcess) {
		return usagef("--process-per-gpu: not with --virtual or --in-process (the compiled programs run in worker processes, in real time)")
	}
	if f.virtual && (!f.ff.fake || f.wiring != "") {
		return usagef("--virtual: only with --fake and without --wiring (a switch controller runs in real time)")
	}
	var err error
	if r.kind, err = transfer.ParseKind(f.copyKind); err != nil {
		return usagef("--copy %q: %v", f.copyKind, err)
	}
	if r.callTimeout, err = units.ParseDuration(f.timeout); err != nil || r.callTimeout <= 0 {
		return usagef("--timeout %q: want a positive duration such as 60s", f.timeout)
	}
	if r.opts, err = f.plan.options(); err != nil {
		return err
	}
	if r.jobs, err = f.jobs(r.cmd, r.opts); err != nil {
		return err
	}
	for _, j := range r.jobs {
		r.ports = max(r.ports, j.Schedule.Ports)
		for i, c := range j.Schedule.Circuits {
			if c.Src >= j.Schedule.Ports || c.Dst >= j.Schedule.Ports {
				return usagef("%s: circuit %d runs %d→%d on a padding port (the schedule has %d real ports): only real endpoints have GPUs",
					j.Schedule.Algorithm, i, c.Src, c.Dst, j.Schedule.Ports)
			}
		}
	}
	return nil
}

// openGPUs opens NVML (real or fake), reads the inventory and maps endpoints to GPUs.
func (r *replayRun) openGPUs() error {
	lib, err := r.f.ff.open()
	if err != nil {
		return err
	}
	r.lib = lib
	r.closers = append(r.closers, func() { lib.Close() })
	if r.inv, err = lib.Inventory(cudaVisible()); err != nil {
		return err
	}
	r.gpuOf, r.shared, err = r.f.endpoints(r.ports, len(r.inv.GPUs))
	return err
}

// openSwitches opens the switch controller of --wiring, before any worker so that a missing
// board fails fast; without --wiring, α_r is injected.
func (r *replayRun) openSwitches() error {
	f, ctx := r.f, r.ctx
	r.env = hil.Env{Injector: r.injector, AlphaR: secondsToDuration(r.opts.Reconfig)}
	r.reconfig = emulator.ParallelReconfig(r.opts.Reconfig)
	r.man.Reconfiguration = "injected α_r = " + units.FormatSeconds(r.opts.Reconfig) + " per command, commands in parallel (no switch controller)"
	r.liveReconfig = r.man.Reconfiguration
	if f.wiring == "" {
		return nil
	}
	w, err := loadWiring(f.wiring)
	if err != nil {
		return err
	}
	for _, j := range r.jobs {
		if j.Schedule.N != w.Ports {
			return usagef("--wiring %q: the map is for %d ports, schedule %s has %d", f.wiring, w.Ports, j.Schedule.Algorithm, j.Schedule.N)
		}
	}
	backend := w.Backend
	if f.ff.fake {
		backend = "fake"
	}
	r.env.SwitchLog = &switchctl.ChangeLog{}
	c, err := switchctl.OpenBackend(ctx, backend, w, switchctl.Options{Log: r.env.SwitchLog, Port: f.port})
	if err != nil {
		if errors.Is(err, switchctl.ErrNoHardware) {
			return fmt.Errorf("--wiring %s: %w (run with --fake for the in-memory controller)", f.wiring, err)
		}
		return fmt.Errorf("--wiring %s: %w", f.wiring, err)
	}
	r.closers = append(r.closers, func() {
		if err := c.Close(ctx); err != nil {
			logger.Error().Err(err).Msg("closing the switch controller")
		}
	})
	r.env.Switches = c
	// The wiring map's B: the fake runs on it, and it is what the map says of a real board.
	r.reconfig = hil.ControllerModel(w.Model())
	r.man.Wiring = hil.WiringRefOf(w, backend)
	per := "per change"
	if w.Batch != 1 {
		per = fmt.Sprintf("per request of up to %d changes", w.Batch)
		if w.Batch == 0 {
			per = "per command"
		}
	}
	r.man.Reconfiguration = fmt.Sprintf("switch controller %s (%s): one command at a time, T_r = %s %s, T_w = %s", backend, f.wiring, w.TR, per, w.TW)
	r.liveReconfig = "measured: " + r.man.Reconfiguration
	return nil
}

// predictionModel chooses the prediction's transfer model: the fake engine's α-β under --fake,
// the calibration's with --calibration, else bytes / --bandwidth (with a warning).
func (r *replayRun) predictionModel() error {
	f := r.f
	r.engine = "cuda"
	if f.ff.fake {
		model := fake.Defaults
		var err error
		if model.Alpha, err = units.ParseDuration(f.fakeAlpha); err != nil {
			return usagef("--fake-alpha %q: %v", f.fakeAlpha, err)
		}
		if model.Bandwidth, err = units.ParseBandwidth(f.fakeBandwidth); err != nil {
			return usagef("--fake-bandwidth %q: %v", f.fakeBandwidth, err)
		}
		if !(f.fakeNoise >= 0 && f.fakeNoise < 1) {
			return usagef("--fake-noise %g: want 0 ≤ noise < 1", f.fakeNoise)
		}
		// Outliers are left out: a replay compares against the model, not a calibration's fit.
		model.Noise, model.Outliers, model.OutlierFactor, model.Seed = f.fakeNoise, 0, 1, f.fakeSeed
		r.engine, r.engineOpts = "fake", model.String()
		r.predict, r.fakeModel = hil.FakeTransferModel(model, r.gpuOf), model
	}
	if f.calibration != "" {
		spec := emulator.TransferSpec{Calibration: f.calibration, GPUMap: joinInts(r.gpuOf)}
		var err error
		if r.predict, err = spec.Model(); err != nil {
			return specUsage(err)
		}
	}
	if r.predict == nil {
		r.predict = emulator.BandwidthModel(r.opts.Bandwidth)
		r.notes = append(r.notes, "no --calibration: the prediction's transfers take bytes / --bandwidth ("+units.FormatBandwidth(r.opts.Bandwidth)+"), not this machine's α-β; calibrate for a like-for-like comparison")
		logger.Warn().Msg(r.notes[0])
	}
	return nil
}

// manifest fills what the run directory's manifest says of the inputs, tool, engine, GPUs and
// flags.
func (r *replayRun) manifest() error {
	f := r.f
	inputs, err := describeInputs([2]string{"demand", f.src.path}, [2]string{"schedule", f.schedule},
		[2]string{"calibration", f.calibration}, [2]string{"wiring", f.wiring})
	if err != nil {
		return err
	}
	if f.schedule != "" && f.src.path == "" {
		inputs = inputs[1:]
	}
	m := &r.man
	m.Inputs, m.Tool, m.Engine, m.EngineOptions, m.SharedGPU, m.Inventory = inputs, provenance.Tool(), r.engine, r.engineOpts, r.shared, r.inv
	m.Flags = map[string]string{}
	// Every flag with its value, defaults included: the manifest alone says how the run was made.
	r.cmd.Flags().VisitAll(func(fl *pflag.Flag) { m.Flags[fl.Name] = fl.Value.String() })
	if f.calibration != "" {
		sum, _ := provenance.SHA256(f.calibration)
		m.Calibration = &hil.FileRef{Path: f.calibration, SHA256: sum, Summary: r.predict.Name()}
	}
	return nil
}

// startTransfers locks clocks if asked, then starts the transfer engines: fake engines in this
// process, or one pinned worker per endpoint. Both are undone on every exit path.
func (r *replayRun) startTransfers() error {
	f, ctx, inv := r.f, r.ctx, r.inv
	r.cfg = hil.Config{Dir: f.out, Jobs: r.jobs, Env: r.env, Notes: r.notes,
		Predict:      emulator.Config{Transfer: r.predict, Reconfig: r.reconfig},
		LiveTransfer: "measured: " + r.engine + " copies, one worker per endpoint"}
	if f.lockClocks {
		lock, err := r.lib.LockClocks(ctx, distinct(r.gpuOf), uint32(f.clockMHz))
		if err != nil {
			return err
		}
		r.cfg.Clocks = lock
	}
	if f.processPerGPU {
		return r.startProcessDevice()
	}
	if f.wiring == "" && f.ff.fake {
		// Compiled: the fake device runs every endpoint's program in one thread; no workers.
		r.env.Device = hil.FakeDevice(r.fakeModel, r.gpuOf, f.virtual, r.injector.SleepThreshold)
		r.cfg.LiveTransfer = "measured: fake device running the compiled programs, one thread spinning on the monotonic clock, copies of exactly α + bytes/B"
		if f.virtual {
			r.cfg.LiveTransfer = "fake device running the compiled programs in virtual time, copies of exactly α + bytes/B"
		}
		for e, g := range r.gpuOf {
			r.man.Endpoints = append(r.man.Endpoints, hil.Endpoint{Endpoint: e, GPU: g, BusID: inv.GPUs[g].PCIBusID})
		}
		return nil
	}
	if f.wiring == "" && len(distinct(r.gpuOf)) == 1 {
		return r.openGPUDevice()
	}
	if f.wiring == "" {
		r.cfg.Notes = append(r.cfg.Notes, "the endpoints are on several GPUs: this replay is host-driven (one worker per endpoint, a host round trip per circuit); --process-per-gpu compiles it across one worker process per GPU")
	}
	pairs := hil.Pairs(schedulesOf(r.jobs)...)
	var closeTransfers func() error
	if f.inProcess {
		devs := make([]transfer.Device, len(r.gpuOf))
		for e, g := range r.gpuOf {
			devs[e] = transfer.Device{GPU: g, CUDAOrdinal: inv.GPUs[g].CUDAOrdinal, BusID: inv.GPUs[g].PCIBusID}
		}
		es, err := hil.OpenEngines(ctx, r.engine, r.engineOpts, devs, pairs, r.kind)
		if err != nil {
			return errors.Join(err, restore(r.cfg.Clocks))
		}
		r.env.Transfers, closeTransfers = es, es.Close
		r.cfg.LiveTransfer = "measured: fake engines in this process, one per endpoint"
	} else {
		exe, err := os.Executable()
		if err != nil {
			return errors.Join(fmt.Errorf("finding this binary to start workers: %w", err), restore(r.cfg.Clocks))
		}
		bc := bench.Config{Lib: r.lib, Engine: r.engine, EngineOptions: r.engineOpts, Command: []string{exe, "worker"},
			Visible: cudaVisible(), Unpinned: f.unpinned, Timeout: secondsToDuration(r.callTimeout), Log: os.Stderr}
		logger.Info().Int("endpoints", len(r.gpuOf)).Str("engine", r.engine).Msg("starting one worker per endpoint")
		ws, err := hil.StartWorkers(ctx, bc, r.gpuOf, pairs, r.kind)
		if err != nil {
			return errors.Join(err, restore(r.cfg.Clocks))
		}
		r.env.Transfers, closeTransfers = ws, ws.Close
		cpus := ws.CPUs()
		for e, g := range r.gpuOf {
			r.man.Endpoints = append(r.man.Endpoints, hil.Endpoint{Endpoint: e, GPU: g, BusID: inv.GPUs[g].PCIBusID, CPUs: cpus[e]})
		}
	}
	r.closers = append(r.closers, func() {
		if err := closeTransfers(); err != nil && ctx.Err() == nil {
			logger.Error().Err(err).Msg("stopping the workers")
		}
	})
	if r.man.Endpoints == nil {
		for e, g := range r.gpuOf {
			r.man.Endpoints = append(r.man.Endpoints, hil.Endpoint{Endpoint: e, GPU: g, BusID: inv.GPUs[g].PCIBusID})
		}
	}
	return nil
}

// openGPUDevice opens the one GPU every endpoint is on to run the compiled programs as stream
// programs (package gpu/program/cudaprog).
func (r *replayRun) openGPUDevice() error {
	g := r.gpuOf[0]
	gi := r.inv.GPUs[g]
	dev, err := cudaprog.Open(cudaprog.Config{Device: transfer.Device{GPU: g, CUDAOrdinal: gi.CUDAOrdinal, BusID: gi.PCIBusID},
		Kind: r.kind, Timeout: secondsToDuration(r.callTimeout)})
	if err != nil {
		return errors.Join(err, restore(r.cfg.Clocks))
	}
	r.closers = append(r.closers, func() {
		if err := dev.Close(); err != nil {
			logger.Error().Err(err).Msg("releasing the GPU")
		}
	})
	r.env.Device = dev
	r.cfg.LiveTransfer = "measured: compiled stream programs on GPU " + strconv.Itoa(g) + " (" + string(r.kind) + " copies, %globaltimer stamps)"
	for e := range r.gpuOf {
		r.man.Endpoints = append(r.man.Endpoints, hil.Endpoint{Endpoint: e, GPU: g, BusID: gi.PCIBusID})
	}
	return nil
}

// run replays the jobs with a progress bar, prints the live-against-predicted table and says
// where the run directory is.
func (r *replayRun) run() error {
	f, out := r.f, r.out
	r.cfg.Env, r.cfg.Manifest, r.cfg.LiveReconfig = r.env, r.man, r.liveReconfig
	total := 0
	for _, j := range r.jobs {
		total += len(j.Schedule.Circuits)
	}
	finish := func() {}
	done := 0
	if total > 0 {
		var p func(int, int)
		if p, finish = newProgress(r.cmd.ErrOrStderr(), "auto", "replay", total); p != nil {
			r.cfg.Env.Progress = func(int, int) { done++; p(done, total) }
		}
	}
	sum, err := hil.Run(r.ctx, r.cfg)
	finish()
	if sum != nil && len(sum.Runs) > 0 {
		if werr := writeReplayTable(out, sum); werr != nil {
			return werr
		}
	}
	if err != nil {
		if r.ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w; %s keeps what was measured, its manifest says incomplete", err, f.out)
		}
		return err
	}
	fmt.Fprintf(out, "run directory: %s (manifest.json, summary.json, per run *.live.json, *.predicted.json, *.live.trace.json)\n", f.out)
	return nil
}

func restore(r hil.Restorer) error {
	if r == nil {
		return nil
	}
	return r.Restore()
}

// jobs plans (or reads) the schedules to replay.
func (f *replayFlags) jobs(cmd *cobra.Command, opts schedules.Options) ([]hil.Job, error) {
	flags := cmd.Flags()
	if f.schedule != "" {
		if flags.Changed("algo") {
			return nil, usagef("--algo: not with --schedule (the schedule file is replayed as it is)")
		}
		s, err := schedules.LoadSchedule(f.schedule)
		if err != nil {
			return nil, usagef("--schedule %q: %v", f.schedule, err)
		}
		j := hil.Job{Schedule: s, Matrix: emulator.MatrixRef{Index: -1, Layer: -1, Label: f.schedule}}
		// The demand it serves, for the lower bounds and the verifier: a --demand file, or a
		// --matrix of the built-in trace.
		if f.src.path != "" || flags.Changed("matrix") {
			ds, err := f.src.load(cmd.Context())
			if err != nil {
				return nil, err
			}
			if len(ds) != 1 {
				return nil, usagef("--demand %q holds %d matrices: pick the one this schedule serves with --matrix", f.src.path, len(ds))
			}
			if vs := schedules.Verify(s, ds[0].Demand); len(vs) > 0 {
				return nil, &exitError{code: 1, msg: fmt.Sprintf("--schedule %s: invalid for %s: %s (and %d more; see 'tetris-hil verify')",
					f.schedule, ds[0].Label, vs[0], len(vs)-1)}
			}
			j.Demand, j.Matrix = ds[0].Demand, ds[0].matrix().Ref
		}
		return []hil.Job{j}, nil
	}
	algos, err := lookupAlgos(f.algo)
	if err != nil {
		return nil, err
	}
	ds, err := f.src.load(cmd.Context())
	if err != nil {
		return nil, err
	}
	if len(ds) != 1 {
		return nil, usagef("--matrix %d: the selection holds %d matrices; a replay takes one (e.g. --matrix 0; see 'tetris-hil trace show')", f.src.matrix, len(ds))
	}
	nd := ds[0]
	var jobs []hil.Job
	for _, a := range algos {
		sc, err := schedules.Lookup(a)
		if err != nil {
			return nil, usagef("--algo: %v", err)
		}
		s, err := sc.Schedule(cmd.Context(), nd.Demand, opts)
		if err != nil {
			return nil, fmt.Errorf("scheduling %s: %w", a, err)
		}
		if vs := schedules.Verify(s, nd.Demand); len(vs) > 0 {
			return nil, fmt.Errorf("internal error: %s's schedule is invalid: %s", a, vs[0])
		}
		jobs = append(jobs, hil.Job{Schedule: s, Demand: nd.Demand, Matrix: nd.matrix().Ref})
	}
	return jobs, nil
}

// endpoints resolves --gpu-map against the machine's GPUs: the GPU of every endpoint, and whether
// some GPU serves several.
func (f *replayFlags) endpoints(ports, gpus int) ([]int, bool, error) {
	var gpuOf []int
	if f.gpuMap == "" {
		if ports > gpus && !f.allowShared {
			return nil, false, usagef("the schedules have %d endpoints and this machine %d GPUs: map them with --gpu-map (several on one GPU need --allow-shared-gpu)", ports, gpus)
		}
		for e := 0; e < ports; e++ {
			gpuOf = append(gpuOf, e%gpus)
		}
	} else {
		for _, p := range strings.Split(f.gpuMap, ",") {
			g, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || g < 0 || g >= gpus {
				return nil, false, usagef("--gpu-map %q: %q is not a GPU of this machine (0..%d)", f.gpuMap, p, gpus-1)
			}
			gpuOf = append(gpuOf, g)
		}
		if len(gpuOf) != ports {
			return nil, false, usagef("--gpu-map %q: %d entries, the schedules have %d endpoints", f.gpuMap, len(gpuOf), ports)
		}
	}
	shared := len(distinct(gpuOf)) < len(gpuOf)
	if shared && !f.allowShared {
		return nil, false, usagef("--gpu-map %q: several endpoints on one GPU; allow it with --allow-shared-gpu", joinInts(gpuOf))
	}
	return gpuOf, shared, nil
}

func distinct(xs []int) []int {
	var out []int
	seen := map[int]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func schedulesOf(jobs []hil.Job) []*schedules.Schedule {
	out := make([]*schedules.Schedule, len(jobs))
	for i, j := range jobs {
		out[i] = j.Schedule
	}
	return out
}

// writeReplayTable prints the summary with one time unit per group of columns, named in the
// heading, and bare numbers in the cells (awk reads them as they are).
func writeReplayTable(w io.Writer, sum *hil.Summary) error {
	var times, deltas, harness []float64
	for _, r := range sum.Runs {
		times = append(times, r.CompletionSeconds, r.PredictedCompletionSeconds)
		for _, d := range []hil.Diff{r.StartDifference, r.EndDifference} {
			deltas = append(deltas, d.Median, d.P99, math.Abs(d.Worst))
		}
		harness = append(harness, r.HarnessCost.Median, r.HarnessCost.P99, r.HarnessCost.Worst)
	}
	tu, du, hu := units.SecondsColumn(times), units.SecondsColumn(deltas), units.SecondsColumn(harness)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "ALGORITHM\tLIVE (%s)\tPREDICTED (%s)\tLIVE/PRED\tSTART Δ MEDIAN (%s)\tP99\tWORST\tEND Δ MEDIAN (%s)\tP99\tWORST\tHARNESS MEDIAN (%s)\tP99\tWORST\tCOMMANDS\t\n",
		tu.Unit, tu.Unit, du.Unit, du.Unit, hu.Unit)
	for _, r := range sum.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", r.Algorithm, tu.Format(r.CompletionSeconds),
			tu.Format(r.PredictedCompletionSeconds), r.LiveOverPredicted,
			du.Format(r.StartDifference.Median), du.Format(r.StartDifference.P99), du.Signed(r.StartDifference.Worst),
			du.Format(r.EndDifference.Median), du.Format(r.EndDifference.P99), du.Signed(r.EndDifference.Worst),
			hu.Format(r.HarnessCost.Median), hu.Format(r.HarnessCost.P99), hu.Format(r.HarnessCost.Worst), r.Commands)
	}

	if err := tw.Flush(); err != nil {
		return err
	}
	if len(sum.Runs) > 0 {
		fmt.Fprintf(w, "execution: %s; HARNESS is per circuit the time from its last dependency's end (plus the modelled delay) to its start\n", sum.Runs[0].Execution)
	}
	for _, n := range sum.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	return nil
}

func writeSelfTest(w io.Writer, stats []delay.Stats, in delay.Injector) error {
	fmt.Fprintf(w, "delay injection error (wake-up minus deadline), %d waits per delay, sleeping until %s before each deadline and spinning after:\n",
		stats[0].Samples, time.Duration(in.SleepThreshold))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "DELAY\tMEDIAN\tP99\tWORST\t")
	for _, s := range stats {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", units.FormatSeconds(s.Requested.Seconds()), units.FormatSeconds(s.Median.Seconds()),
			units.FormatSeconds(s.P99.Seconds()), units.FormatSeconds(s.Worst.Seconds()))
	}
	return tw.Flush()
}

// checkWiringFabric refuses --wiring when no schedule is on the Beneš fabric, before the output
// directory is made, and notes the crossbar schedules whose re-pointings are injected instead.
func (r *replayRun) checkWiringFabric() error {
	f := r.f
	if f.wiring == "" || len(r.jobs) == 0 {
		return nil
	}
	// A crossbar circuit has no switch to command: a replay in which no schedule is on the
	// Beneš fabric would drive the controller with nothing while the manifest says it was driven.
	// Beside Beneš schedules (the ideal SNB reference in --algo all) a crossbar schedule's
	// re-pointings are injected as α_r, and its run record and a note say so.
	var off []string
	for _, j := range r.jobs {
		if j.Schedule.Fabric != schedules.Benes {
			off = append(off, j.Schedule.Algorithm)
		}
	}
	if len(off) == len(r.jobs) {
		return usagef("--wiring %q: every schedule is on the %s fabric, which has no switches to drive; drop --wiring (α_r is then injected) or replay a Beneš schedule", f.wiring, r.jobs[0].Schedule.Fabric)
	}
	if len(off) > 0 {
		fmt.Fprintf(r.cmd.ErrOrStderr(), "tetris-hil: %s on the crossbar fabric: no switches to drive, α_r injected per re-pointing\n", strings.Join(off, ", "))
	}
	return nil
}
