package calibrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/worker"
)

// Config is one calibration run.
type Config struct {
	Plan model.Plan
	// Workers says how the workers start (its Lib, Command, Env, Visible, Unpinned, Timeout and
	// Log; the engine comes from Plan).
	Workers bench.Config
	// Inventory is the machine, recorded in the file (InventoryFrom builds it from NVML's).
	Inventory model.Inventory
	Tool      string // the build, recorded in the file
	// Resume continues an interrupted run: its plan and GPUs must be this run's, and its steps
	// are not measured again.
	Resume *Partial
	// Progress, if set, is called after each step with the steps done and the total.
	Progress func(done, total int)
	// Checkpoint, if set, is called after each step with everything measured so far: write it
	// to the partial file, so that an interrupted run loses at most the step in flight.
	Checkpoint func(*Partial) error
	// StartMargin is how far ahead of now a permutation's copies are released together, long
	// enough for every worker to receive its request and run its warm-ups; 0 means 100 ms.
	StartMargin time.Duration
	// Now is the clock of the file's timestamps; nil is time.Now.
	Now func() time.Time
	// Fit is the fitting rules.
	Fit FitOptions
}

// Partial is what has been measured so far: the content of the partial file an interrupted run
// leaves and --resume continues.
type Partial struct {
	Version int `json:"version"`
	// Partial is always true: it tells this file from a finished calibration.
	Partial   bool            `json:"partial"`
	Tool      string          `json:"tool,omitempty"`
	Started   string          `json:"started"`
	Plan      model.Plan      `json:"plan"`
	Inventory model.Inventory `json:"inventory"`
	// Steps are the steps measured, in plan order (step i of the plan is Steps[i]).
	Steps []StepResult `json:"steps"`
}

// StepResult is one measured step: the medians of every pair that copied in it.
type StepResult struct {
	Step    int      `json:"step"`
	Samples []Sample `json:"samples"`
}

// Sample is one pair's measurement of one size in one step.
type Sample struct {
	Src     int          `json:"src"`
	Dst     int          `json:"dst"`
	Pattern string       `json:"pattern"`
	Demand  bool         `json:"demand,omitempty"` // a transfer of Plan.Demand, not the sweep
	Median  model.Median `json:"median"`
}

// Result is a finished run.
type Result struct {
	Calibration *model.Calibration
	// Measured are the Plan.Demand transfers with their median times.
	Measured []model.Transfer
	// Partial is everything measured, as a partial file would hold it.
	Partial *Partial
}

// step is one unit of measurement: one size, either of one pair alone, of a permutation's pairs
// at once, or of one demand transfer.
type step struct {
	pattern string
	pairs   [][2]int
	bytes   int64
	verify  bool
	demand  bool
}

// steps lists the plan's steps in measurement order: the isolated sweep pair by pair, then the
// permutations, then the demand transfers.
func steps(p *model.Plan) []step {
	var out []step
	verify := func(i int) bool { return p.VerifyEvery > 0 && i%p.VerifyEvery == p.VerifyEvery-1 }
	for _, pat := range p.Patterns {
		switch pat {
		case model.Isolated:
			for _, pr := range p.Pairs {
				for i, n := range p.Sizes {
					out = append(out, step{pattern: pat, pairs: [][2]int{pr}, bytes: n, verify: verify(i)})
				}
			}
		case model.Permutation:
			for _, perm := range p.Permutations {
				for i, n := range p.Sizes {
					out = append(out, step{pattern: pat, pairs: perm, bytes: n, verify: verify(i)})
				}
			}
		}
	}
	for i, t := range p.Demand {
		out = append(out, step{pattern: model.Isolated, pairs: [][2]int{{t.Src, t.Dst}}, bytes: t.Bytes, verify: verify(i), demand: true})
	}
	return out
}

// Steps is the number of measurement steps of a plan (what a progress bar counts).
func Steps(p *model.Plan) int { return len(steps(p)) }

// ErrInterrupted wraps the context's error when a run stops before its end; the partial state
// has been handed to Config.Checkpoint.
var ErrInterrupted = errors.New("calibration interrupted")

// Run measures the plan and fits it. When ctx ends first it returns an error wrapping
// ErrInterrupted and the context's error; after a failure once measuring began, the Result holds
// the Partial state (every finished step), for the partial file.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if err := checkPlan(&cfg.Plan, cfg.Inventory); err != nil {
		return nil, err
	}
	part := &Partial{Version: model.FormatVersion, Partial: true, Tool: cfg.Tool, Started: now().UTC().Format(time.RFC3339),
		Plan: cfg.Plan, Inventory: cfg.Inventory}
	if r := cfg.Resume; r != nil {
		if err := CheckResume(r, &cfg.Plan, cfg.Inventory); err != nil {
			return nil, err
		}
		part.Started, part.Steps = r.Started, slices.Clone(r.Steps)
	}
	all := steps(&cfg.Plan)
	if len(part.Steps) < len(all) {
		if err := measure(ctx, cfg, all, part); err != nil {
			return &Result{Partial: part}, err
		}
	}
	cal, measured := Assemble(part, cfg.Fit)
	cal.Created = now().UTC().Format(time.RFC3339)
	if err := cal.Validate(); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	return &Result{Calibration: cal, Measured: measured, Partial: part}, nil
}

func checkPlan(p *model.Plan, inv model.Inventory) error {
	c := model.Calibration{Version: model.FormatVersion, Inventory: inv, Plan: p}
	if err := c.Validate(); err != nil {
		return err
	}
	if len(p.Sizes) < minPiece {
		return fmt.Errorf("plan: %d message sizes; a fit needs at least %d", len(p.Sizes), minPiece)
	}
	if len(p.Pairs) == 0 && len(p.Demand) == 0 {
		return errors.New("plan: no GPU pair to measure")
	}
	if p.Engine == "" {
		return errors.New("plan: no transfer engine")
	}
	return nil
}

// CheckResume says why partial cannot be continued by a run of plan on inv, or nil.
func CheckResume(partial *Partial, plan *model.Plan, inv model.Inventory) error {
	if !partial.Partial || partial.Version != model.FormatVersion {
		return fmt.Errorf("field partial: %v, version %d: not a partial calibration of this build", partial.Partial, partial.Version)
	}
	if d := plan.Diff(&partial.Plan); d != "" {
		return fmt.Errorf("the partial run measured another plan: field %s", d)
	}
	if a, b := busIDs(inv), busIDs(partial.Inventory); !slices.Equal(a, b) {
		return fmt.Errorf("the partial run measured other GPUs: field inventory.gpus: %s here, %s in the file", strings.Join(a, " "), strings.Join(b, " "))
	}
	all := steps(plan)
	for i, s := range partial.Steps {
		if s.Step != i || i >= len(all) {
			return fmt.Errorf("field steps[%d].step: %d, want %d (of %d steps)", i, s.Step, i, len(all))
		}
		if err := checkStep(s, all[i], plan.Reps); err != nil {
			return fmt.Errorf("field steps[%d].%w", i, err)
		}
	}
	return nil
}

// MaxMedianSeconds bounds a median read back from a partial file: no copy of one size that a
// worker's timeout lets through takes an hour.
const MaxMedianSeconds = 3600

// checkStep says why a step read back from a partial file is not what measuring want would have
// written: one sample per pair of the step, in its order, with its pattern, size and repetitions,
// and times that are times. The fit trusts every sample it is given, so a resumed run must not.
func checkStep(s StepResult, want step, reps int) error {
	if len(s.Samples) != len(want.pairs) {
		return fmt.Errorf("samples: %d samples, want %d (one per pair of the step)", len(s.Samples), len(want.pairs))
	}
	for j, x := range s.Samples {
		f := fmt.Sprintf("samples[%d]", j)
		pr := want.pairs[j]
		switch {
		case x.Src != pr[0] || x.Dst != pr[1]:
			return fmt.Errorf("%s: GPU %d → GPU %d, but the plan's step copies GPU %d → GPU %d", f, x.Src, x.Dst, pr[0], pr[1])
		case x.Pattern != want.pattern || x.Demand != want.demand:
			return fmt.Errorf("%s.pattern: %q (demand %v), want %q (demand %v)", f, x.Pattern, x.Demand, want.pattern, want.demand)
		case x.Median.Bytes != want.bytes:
			return fmt.Errorf("%s.median.bytes: %d, want %d", f, x.Median.Bytes, want.bytes)
		case x.Median.Repetitions != reps:
			return fmt.Errorf("%s.median.repetitions: %d, want the plan's %d", f, x.Median.Repetitions, reps)
		}
		m := x.Median
		for _, v := range []struct {
			name string
			v    float64
		}{{"seconds", m.Seconds}, {"p25_seconds", m.P25}, {"p75_seconds", m.P75}, {"min_seconds", m.Min}, {"max_seconds", m.Max}} {
			if !(v.v >= 0 && v.v <= MaxMedianSeconds) { // NaN fails both
				return fmt.Errorf("%s.median.%s: %g, want a time from 0 to %d s", f, v.name, v.v, MaxMedianSeconds)
			}
		}
		if !(m.Min <= m.P25 && m.P25 <= m.Seconds && m.Seconds <= m.P75 && m.P75 <= m.Max) {
			return fmt.Errorf("%s.median: min %g ≤ p25 %g ≤ median %g ≤ p75 %g ≤ max %g does not hold", f, m.Min, m.P25, m.Seconds, m.P75, m.Max)
		}
	}
	return nil
}

func busIDs(inv model.Inventory) []string {
	var out []string
	for _, g := range inv.GPUs {
		out = append(out, g.PCIBusID+"/"+g.UUID)
	}
	return out
}

// benign throttle reasons: an idle GPU between batches, clocks held by a setting (locked clocks).
var benign = map[string]bool{"gpu_idle": true, "clocks_setting": true, "display_clock_setting": true, "sync_boost": true}

// session holds the workers and buffers of one run.
type session struct {
	cfg  Config
	send *bench.Workers // one per GPU: senders, and receivers of pairs across GPUs
	loop *bench.Workers // a second worker per GPU with a loopback pair: its receiver
	// handles caches each receiver's exported buffer; bufs each sender's destination per pair.
	handles map[*worker.Worker][]byte
	bufs    map[[2]int]int
	// imported marks the pairs whose destination buffer the sender opened from an IPC handle.
	imported map[[2]int]bool
	max      int64
}

// closeTimeout bounds each sender's closing of the buffers it imported.
const closeTimeout = 10 * time.Second

// close stops the workers. First every sender closes the buffers it opened from another process's
// IPC handle, and only then does any worker stop, freeing the buffers it exported: cuda.h leaves
// freeing an exported buffer undefined while another process has it open, and senders import
// from each other (0 → 1 and 1 → 0), so no order of stopping the processes alone would do.
func (s *session) close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	var errs []error
	pairs := slices.SortedFunc(maps.Keys(s.imported), func(a, b [2]int) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	for _, pr := range pairs {
		// A worker stopped when the run was cancelled took its imports with its process.
		if err := s.send.Worker(pr[0]).Free(ctx, s.bufs[pr]); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, fmt.Errorf("GPU %d closing its IPC buffer of GPU %d: %w", pr[0], pr[1], err))
		}
	}
	if s.loop != nil {
		errs = append(errs, s.loop.Close())
	}
	return errors.Join(append(errs, s.send.Close())...)
}

func measure(ctx context.Context, cfg Config, all []step, part *Partial) (err error) {
	p := &cfg.Plan
	wc := cfg.Workers
	wc.Engine, wc.EngineOptions = p.Engine, p.EngineOptions
	if wc.Timeout <= 0 {
		wc.Timeout = 60 * time.Second
	}
	cfg.Workers = wc
	var gpus, loops []int
	s := &session{cfg: cfg, handles: map[*worker.Worker][]byte{}, bufs: map[[2]int]int{}, imported: map[[2]int]bool{}}
	for _, st := range all[len(part.Steps):] {
		s.max = max(s.max, st.bytes)
		for _, pr := range st.pairs {
			gpus = append(gpus, pr[1], pr[0])
			if pr[0] == pr[1] {
				loops = append(loops, pr[0])
			}
		}
	}
	if s.send, err = bench.StartWorkers(ctx, wc, gpus); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.close(ctx)) }()
	if len(loops) > 0 {
		if s.loop, err = bench.StartWorkers(ctx, wc, loops); err != nil {
			return err
		}
	}
	// A receiver makes no call while senders copy into its buffer: without a watch its death
	// would be noticed only at Close, after the whole plan.
	wctx, stopSend := s.send.Watch(ctx)
	defer stopSend()
	if s.loop != nil {
		var stopLoop func()
		wctx, stopLoop = s.loop.Watch(wctx)
		defer stopLoop()
	}
	total := len(all)
	for i := len(part.Steps); i < total; i++ {
		if ctx.Err() != nil {
			return fmt.Errorf("%w after %d of %d steps: %w", ErrInterrupted, i, total, ctx.Err())
		}
		res, err := s.run(wctx, all[i])
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%w after %d of %d steps: %w", ErrInterrupted, i, total, ctx.Err())
			}
			if wctx.Err() != nil {
				return context.Cause(wctx)
			}
			return err
		}
		part.Steps = append(part.Steps, StepResult{Step: i, Samples: res})
		if cfg.Checkpoint != nil {
			if err := cfg.Checkpoint(part); err != nil {
				return err
			}
		}
		if cfg.Progress != nil {
			cfg.Progress(i+1, total)
		}
	}
	return nil
}

// buffer is sender src's destination buffer for pair (src, dst): the receiver's, exported once
// and imported by each sender, or where IPC is unavailable one the sender allocates on dst.
func (s *session) buffer(ctx context.Context, pr [2]int) (*worker.Worker, int, error) {
	sw := s.send.Worker(pr[0])
	if b, ok := s.bufs[pr]; ok {
		return sw, b, nil
	}
	rw := s.send.Worker(pr[1])
	if pr[0] == pr[1] {
		rw = s.loop.Worker(pr[1])
	}
	h, ok := s.handles[rw]
	var err error
	if !ok {
		if _, h, err = rw.Export(ctx, s.max); err != nil && !errors.Is(err, transfer.ErrIPCUnsupported) {
			return nil, 0, err
		}
		s.handles[rw] = h
	}
	var b int
	if h != nil {
		if b, err = sw.Import(ctx, h); err == nil {
			s.imported[pr] = true
		}
	}
	if h == nil || errors.Is(err, transfer.ErrIPCUnsupported) {
		b, err = sw.Peer(ctx, s.send.Device(pr[1]), s.max)
	}
	if err != nil {
		delete(s.imported, pr)
		return nil, 0, err
	}
	s.bufs[pr] = b
	return sw, b, nil
}

// run measures one step: its pairs' copies at once (released together at one host-clock instant
// when there are several), then each sender's telemetry.
func (s *session) run(ctx context.Context, st step) ([]Sample, error) {
	p := &s.cfg.Plan
	c := transfer.Copy{Bytes: st.bytes, Reps: p.Reps, Warmup: p.Warmup, Kind: transfer.Kind(p.Copy), Verify: st.verify}
	type job struct {
		w   *worker.Worker
		buf int
	}
	jobs := make([]job, len(st.pairs))
	for i, pr := range st.pairs {
		w, b, err := s.buffer(ctx, pr)
		if err != nil {
			return nil, fmt.Errorf("GPU %d → GPU %d: %w", pr[0], pr[1], err)
		}
		jobs[i] = job{w, b}
	}
	if len(st.pairs) > 1 {
		margin := s.cfg.StartMargin
		if margin <= 0 {
			margin = 100 * time.Millisecond
		}
		c.StartAt = transfer.Monotonic() + margin
	}
	timings := make([]transfer.Timing, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() { timings[i], errs[i] = j.w.Copy(ctx, j.buf, c, s.cfg.Workers.Timeout) })
	}
	wg.Wait()
	out := make([]Sample, len(jobs))
	for i, pr := range st.pairs {
		if errs[i] != nil {
			return nil, fmt.Errorf("GPU %d → GPU %d, %s (%s): %w", pr[0], pr[1], fmtBytes(st.bytes), st.pattern, errs[i])
		}
		m := Summarize(st.bytes, timings[i].Times)
		m.Verified = st.verify
		if t, err := s.cfg.Workers.Lib.Sample(pr[0]); err == nil {
			m.Telemetry = telemetry(t)
		}
		out[i] = Sample{Src: pr[0], Dst: pr[1], Pattern: st.pattern, Demand: st.demand, Median: m}
	}
	return out, nil
}

func telemetry(t nvml.Telemetry) *model.Telemetry {
	return &model.Telemetry{TemperatureC: int(t.TemperatureC), SMClockMHz: int(t.SMClockMHz), MemClockMHz: int(t.MemClockMHz),
		ThrottleReasons: slices.Clone(t.ThrottleReasons), Unavailable: slices.Clone(t.Unavailable)}
}

// Assemble fits every pair of a (complete or partial) run and returns the calibration and the
// measured demand transfers. A pair that cannot be fitted is left out with a warning.
func Assemble(part *Partial, opt FitOptions) (*model.Calibration, []model.Transfer) {
	plan := part.Plan
	cal := &model.Calibration{Version: model.FormatVersion, Tool: part.Tool, Started: part.Started, Plan: &plan, Inventory: part.Inventory}
	type key struct {
		src, dst int
		pattern  string
	}
	medians := map[key][]model.Median{}
	throttled := map[key]map[string]bool{}
	var order []key
	var measured []model.Transfer
	for _, st := range part.Steps {
		for _, s := range st.Samples {
			if s.Demand {
				measured = append(measured, model.Transfer{Src: s.Src, Dst: s.Dst, Bytes: s.Median.Bytes, Seconds: s.Median.Seconds})
				continue
			}
			k := key{s.Src, s.Dst, s.Pattern}
			if _, ok := medians[k]; !ok {
				order = append(order, k)
				throttled[k] = map[string]bool{}
			}
			medians[k] = append(medians[k], s.Median)
			if t := s.Median.Telemetry; t != nil {
				for _, r := range t.ThrottleReasons {
					if !benign[r] {
						throttled[k][r] = true
					}
				}
			}
		}
	}
	for _, k := range order {
		f, err := Fit(medians[k], opt)
		if err != nil {
			cal.Warnings = append(cal.Warnings, fmt.Sprintf("GPU %d → GPU %d (%s): not fitted: %v", k.src, k.dst, k.pattern, err))
			continue
		}
		f.Src, f.Dst, f.Pattern = k.src, k.dst, k.pattern
		for r := range throttled[k] {
			f.Throttled = append(f.Throttled, r)
		}
		sort.Strings(f.Throttled)
		if len(f.Throttled) > 0 {
			cal.Warnings = append(cal.Warnings, fmt.Sprintf("GPU %d → GPU %d (%s): throttled during its measurement (%s): its times are suspect",
				k.src, k.dst, k.pattern, strings.Join(f.Throttled, ", ")))
		}
		cal.Pairs = append(cal.Pairs, f)
	}
	cal.SortPairs()
	return cal, measured
}

// InventoryFrom is the calibration file's record of an NVML inventory.
func InventoryFrom(inv *nvml.Inventory, host string) model.Inventory {
	out := model.Inventory{Host: host, Driver: inv.DriverVersion, CUDA: inv.CUDADriverVersion, Fake: inv.Fake, Links: map[string]string{}}
	for _, g := range inv.GPUs {
		out.GPUs = append(out.GPUs, model.GPU{Index: g.Index, Name: g.Name, PCIBusID: g.PCIBusID, UUID: g.UUID,
			SMClockMHz: int(g.Telemetry.SMClockMHz), MemClockMHz: int(g.Telemetry.MemClockMHz)})
	}
	for _, p := range inv.Pairs {
		out.Links[fmt.Sprintf("%d-%d", p.A, p.B)] = p.Link
		out.Links[fmt.Sprintf("%d-%d", p.B, p.A)] = p.Link
	}
	if len(out.Links) == 0 {
		out.Links = nil
	}
	return out
}

// DefaultPairs is every ordered pair of distinct GPUs of gpus, or the loopback pair of a single GPU.
func DefaultPairs(gpus []int) [][2]int {
	if len(gpus) == 1 {
		return [][2]int{{gpus[0], gpus[0]}}
	}
	var out [][2]int
	for _, s := range gpus {
		for _, d := range gpus {
			if s != d {
				out = append(out, [2]int{s, d})
			}
		}
	}
	return out
}

// CyclicShifts are the n−1 permutations i → i+k (mod n), k = 1..n−1, over gpus: together they
// measure every ordered pair of distinct GPUs once under full load.
func CyclicShifts(gpus []int) [][][2]int {
	var out [][][2]int
	for k := 1; k < len(gpus); k++ {
		var perm [][2]int
		for i, g := range gpus {
			perm = append(perm, [2]int{g, gpus[(i+k)%len(gpus)]})
		}
		out = append(out, perm)
	}
	return out
}
