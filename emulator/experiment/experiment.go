// Package experiment is the plan × verify × run × compare loop over many demand matrices and
// many schedulers, as a library: what `tetris-hil emulate` and `tetris-hil sweep` do, callable
// from any Go program.
//
// A tour:
//
//   - Matrix is one demand matrix with where it came from (emulator.MatrixRef).
//   - Config says what to run: registered scheduler names, the scheduler options, the
//     execution models (emulator.Config), the reference algorithm that speedups are taken over
//     (Tetris by default), whether to verify schedules and timelines (on unless SkipVerify) and
//     whether to keep each run's schedule and timeline.
//   - Run plans every matrix with every algorithm, checks each schedule with schedules.Verify,
//     executes it with emulator.Run, checks the timeline with schedules.VerifyTimeline, and
//     returns an Outcome: one Record per (matrix, algorithm) with the completion, its ratios to
//     both lower bounds and the speedup over the reference, and per-algorithm Totals over the
//     matrices (one inference pass of a trace). A barrier scheduler's run that keeps no
//     timeline is planned, checked and executed round by round instead (schedules.RoundStream,
//     schedules.RoundVerifier, emulator.RoundRun, and schedules.RoundTimelineVerifier for its
//     timeline, checked round by round as it is executed): the same Record, with no schedule or
//     timeline ever held whole.
//   - RunMany does the same for several Configs (a bandwidth × α_r grid) on one pool of
//     workers; results are stored by index, so they are the same for any number of workers.
//   - RunSchedule executes one given schedule (from any producer) the same way.
//   - Outcome.WriteTable prints it (emulate's table); Report is its JSON file (emulate --json);
//     WriteTimelines writes each run's schedule, emulator.RunRecord and Chrome trace (emulate
//     --timeline), WriteGantts its Gantt chart.
package experiment

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// DefaultReference is the algorithm speedups are taken over when Config.Reference is empty.
const DefaultReference = "tetris"

// Matrix is one demand matrix and where it came from.
type Matrix struct {
	Ref    emulator.MatrixRef
	Demand *schedules.Demand
}

// Config is one experiment.
type Config struct {
	// Algorithms are registered scheduler names (schedules.Lookup), run in this order on every
	// matrix.
	Algorithms []string
	// Options are passed to every scheduler (bandwidth and α_r to plan with, fabric, ablations).
	Options schedules.Options
	// Exec is how schedules are executed: transfer and reconfiguration models, bound bandwidth.
	Exec emulator.Config
	// Reference is the algorithm whose completion every speedup is over; empty means
	// DefaultReference. Where it did not run, records and totals carry no speedup.
	Reference string
	// SkipVerify skips schedules.Verify and schedules.VerifyTimeline (sweeps, for speed; every
	// scheduler's output is verified by the tests).
	SkipVerify bool
	// KeepRuns keeps each record's Schedule and Timeline (for timeline files and charts).
	KeepRuns bool
	// Stream, when set with KeepRuns, is given each run as soon as it finishes, its Schedule and
	// Timeline kept, and the record then drops both: a caller that writes them out (timeline
	// files, charts) as runs finish holds only the runs under way, not every run to the end, and
	// the memory estimate counts only those. i is the record's index in its Outcome's Records;
	// runs finish in no set order, and calls never overlap. An error stops the experiment and is
	// RunMany's.
	Stream func(i int, r *Record) error
	// MaxMemory, when positive, is a limit in bytes on the estimated peak memory
	// (EstimateMemory): when one run alone is above it, RunMany refuses the Config before
	// planning anything, with a *MemoryError; runs that fit alone but not together run fewer at
	// a time, so that those under way never hold more than the limit between them.
	MaxMemory int64
}

func (c *Config) reference() string {
	if c.Reference == "" {
		return DefaultReference
	}
	return c.Reference
}

// Pool is how RunMany spreads its work.
type Pool struct {
	// Jobs is the number of workers; zero or less means runtime.GOMAXPROCS(0).
	Jobs int
	// Progress, when set, is called after every finished run (one algorithm on one matrix under
	// one Config) with the number done so far and the total. Calls never overlap.
	Progress func(done, total int)
}

// Record is one (matrix, algorithm) run.
type Record struct {
	Algorithm             string             `json:"algorithm"`
	Matrix                emulator.MatrixRef `json:"matrix"`
	CompletionSeconds     float64            `json:"completion_seconds"`
	LowerBoundSeconds     float64            `json:"lower_bound_seconds,omitempty"`
	BandwidthBoundSeconds float64            `json:"bandwidth_bound_seconds,omitempty"`
	ReconfigBoundSeconds  float64            `json:"reconfig_bound_seconds,omitempty"`
	// Speedup is this algorithm's completion over the reference's on the same matrix (above 1:
	// the reference is faster). The JSON key keeps its first name, from when the reference was
	// always Tetris.
	Speedup float64          `json:"tetris_speedup,omitempty"`
	Result  *emulator.Result `json:"result"`
	// StateChanges is Result.StateChanges; StateChangesMax is the most any one switch changed
	// (crossbar: any transmitter re-pointed) and StateChangesPerSwitch every switch that changed,
	// [stage, index, count] by stage then index, summing to StateChanges (switch wear, Tetris §5).
	StateChanges          int                    `json:"state_changes"`
	StateChangesMax       int                    `json:"state_changes_max"`
	StateChangesPerSwitch []emulator.SwitchCount `json:"state_changes_per_switch"`
	// Mode is how the schedule executed (partial or barrier): its Groups are rounds in barrier
	// mode. Variant names the ablations it ran under ("--no-partial"), empty for none. Both
	// are for tables; the run record keeps the schedule's mode and options.
	Mode    schedules.Mode `json:"-"`
	Variant string         `json:"-"`
	// N and Fabric are the schedule's fabric size and kind (for the wear report's grid).
	N      int                  `json:"-"`
	Fabric schedules.FabricKind `json:"-"`
	// Schedule and Timeline are kept with Config.KeepRuns.
	Schedule *schedules.Schedule `json:"-"`
	Timeline *schedules.Timeline `json:"-"`
}

// Total sums one algorithm over all matrices (one inference pass of a trace).
type Total struct {
	Algorithm         string  `json:"algorithm"`
	Matrices          int     `json:"matrices"`
	CompletionSeconds float64 `json:"completion_seconds"`
	// The bounds are sums over the matrices of each matrix's bound.
	LowerBoundSeconds     float64 `json:"lower_bound_seconds,omitempty"`
	BandwidthBoundSeconds float64 `json:"bandwidth_bound_seconds,omitempty"`
	ReconfigBoundSeconds  float64 `json:"reconfig_bound_seconds,omitempty"`
	// Speedup is the summed completion over the reference's sum (0 where it did not run).
	Speedup      float64 `json:"tetris_speedup,omitempty"`
	Groups       int     `json:"groups"`
	StateChanges int     `json:"state_changes"`
}

// Outcome is a finished experiment.
type Outcome struct {
	// Records are in matrix order, algorithms in Config order within a matrix.
	Records []Record
	// Totals are per algorithm, in order of first appearance.
	Totals []Total
	// Reference is the algorithm speedups are over.
	Reference string
}

// Matrices is the number of distinct matrices (by index) the records cover.
func (o *Outcome) Matrices() int {
	seen := map[int]bool{}
	for _, r := range o.Records {
		seen[r.Matrix.Index] = true
	}
	return len(seen)
}

// TaskError is the failure of one run: which algorithm, on which matrix, at which stage
// ("scheduling", "verifying", "emulating", "verifying the timeline").
type TaskError struct {
	// Config is the index of the Config in RunMany (0 for Run).
	Config    int
	Algorithm string
	Matrix    emulator.MatrixRef
	// Position is the matrix's position in the slice given to Run.
	Position int
	Stage    string
	Err      error
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("%s on matrix %d (%s): %s: %v", e.Algorithm, e.Matrix.Index, e.Matrix.Label, e.Stage, e.Err)
}

func (e *TaskError) Unwrap() error { return e.Err }

// Invalid is a schedule or a timeline that fails the verifier.
type Invalid struct {
	// Internal is true when a scheduler or the emulator produced it (a bug), false for a
	// schedule given to RunSchedule.
	Internal   bool
	Violations []schedules.Violation
}

func (e *Invalid) Error() string {
	msg := fmt.Sprintf("%s (and %d more violations)", e.Violations[0], len(e.Violations)-1)
	if e.Internal {
		return "internal error: " + msg
	}
	return msg
}

// Run runs cfg on every matrix; see the package comment.
func Run(ctx context.Context, ms []Matrix, cfg Config, pool Pool) (*Outcome, error) {
	outs, err := RunMany(ctx, ms, []Config{cfg}, pool)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// RunMany runs every Config on every matrix on one pool of workers and returns one Outcome per
// Config. On the first failure, or when ctx is cancelled, the workers stop taking runs and
// RunMany returns the error (a *TaskError for a failed run, of the earliest run that failed);
// no partial result is returned.
func RunMany(ctx context.Context, ms []Matrix, cfgs []Config, pool Pool) ([]*Outcome, error) {
	if len(ms) == 0 {
		return nil, errors.New("experiment: no demand matrices")
	}
	type plan struct {
		cfg    *Config
		scheds []schedules.Scheduler
		base   int // first task
		// est holds each run's estimate, matrices then algorithms (the memory gate's share of
		// each task), computed once here rather than again for every task.
		est Estimate
	}
	// One memory gate for the pool: the tightest limit of any Config.
	var budget int64
	for i := range cfgs {
		if l := cfgs[i].MaxMemory; l > 0 && (budget == 0 || l-baseBytes < budget) {
			budget = max(l-baseBytes, 1)
		}
	}
	plans := make([]plan, len(cfgs))
	total := 0
	for i := range cfgs {
		c := &cfgs[i]
		if len(c.Algorithms) == 0 {
			return nil, fmt.Errorf("experiment: config %d names no algorithm", i)
		}
		if c.Exec.Transfer == nil || c.Exec.Reconfig == nil {
			return nil, fmt.Errorf("experiment: config %d needs both a transfer and a reconfiguration model", i)
		}
		var est Estimate
		if budget > 0 {
			est = EstimateMemory(ms, *c, 1)
		}
		if err := checkMemory(est, *c); err != nil {
			return nil, fmt.Errorf("experiment: %w", err)
		}
		p := plan{cfg: c, base: total, est: est}
		for _, name := range c.Algorithms {
			s, err := schedules.Lookup(name)
			if err != nil {
				return nil, fmt.Errorf("experiment: %w", err)
			}
			p.scheds = append(p.scheds, s)
		}
		plans[i] = p
		total += len(ms) * len(c.Algorithms)
	}
	mem := newGate(budget)
	recs := make([]Record, total)
	errs := make([]error, total)
	// Task t belongs to the plan whose base is the largest not above t; within it, algorithms
	// vary fastest, then matrices, so that neighbouring tasks share a demand.
	locate := func(t int) (int, int, int) {
		k := len(plans) - 1
		for plans[k].base > t {
			k--
		}
		na := len(plans[k].scheds)
		return k, (t - plans[k].base) / na, (t - plans[k].base) % na
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := pool.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	jobs = min(jobs, total)
	var next atomic.Int64
	var streaming sync.Mutex // Config.Stream's calls never overlap
	var wg sync.WaitGroup
	done := make(chan struct{}, jobs)
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t := int(next.Add(1) - 1)
				if t >= total || ctx.Err() != nil {
					return
				}
				k, m, a := locate(t)
				p := plans[k]
				var need int64
				if budget > 0 {
					need = p.est.Runs[m*len(p.scheds)+a].Bytes
				}
				if mem.acquire(ctx, need) != nil {
					return // cancelled: reported below
				}
				rec, err := runOne(ctx, p.scheds[a], p.cfg.Algorithms[a], ms[m], p.cfg)
				if err == nil && p.cfg.KeepRuns && p.cfg.Stream != nil {
					streaming.Lock()
					err = p.cfg.Stream(t-p.base, &rec)
					streaming.Unlock()
					rec.Schedule, rec.Timeline = nil, nil
				}
				mem.release(need)
				if err != nil {
					// A run that fails because another failure (or the caller) cancelled the
					// context is not the cause: only failures under a live context are kept.
					if ctx.Err() == nil {
						var te *TaskError
						if errors.As(err, &te) {
							te.Config, te.Position = k, m
						}
						errs[t] = err
						cancel()
					}
					return
				}
				recs[t] = rec
				done <- struct{}{}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	n := 0
	for range done {
		n++
		if pool.Progress != nil {
			pool.Progress(n, total)
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("experiment: stopped after %d of %d runs: %w", n, total, err)
	}
	outs := make([]*Outcome, len(plans))
	for k, p := range plans {
		end := total
		if k+1 < len(plans) {
			end = plans[k+1].base
		}
		outs[k] = assemble(recs[p.base:end], p.cfg.reference())
	}
	return outs, nil
}

// runOne plans m with s, verifies, executes and verifies the timeline.
func runOne(ctx context.Context, s schedules.Scheduler, name string, m Matrix, cfg *Config) (Record, error) {
	fail := func(stage string, err error) (Record, error) {
		return Record{}, &TaskError{Algorithm: name, Matrix: m.Ref, Stage: stage, Err: err}
	}
	if !cfg.KeepRuns {
		// A barrier scheduler's rounds are planned, checked and executed one at a time when no
		// timeline is kept: a decomposition's millions of circuits are never held together.
		st, ok, err := schedules.ScheduleRounds(ctx, s, m.Demand, cfg.Options)
		if err != nil {
			return fail("scheduling", err)
		}
		if ok {
			rec, stage, err := runRounds(ctx, st, m, cfg)
			if err != nil {
				return fail(stage, err)
			}
			rec.Algorithm = name
			rec.Variant = Variant(name, cfg.Options)
			return rec, nil
		}
	}
	sch, err := s.Schedule(ctx, m.Demand, cfg.Options)
	if err != nil {
		return fail("scheduling", err)
	}
	if !cfg.SkipVerify {
		if vs := schedules.Verify(sch, m.Demand); len(vs) > 0 {
			return fail("verifying", &Invalid{Internal: true, Violations: vs})
		}
	}
	// Planned here by a registered scheduler (and verified unless SkipVerify): its paths need no
	// second check in the emulator.
	rec, err := execute(ctx, sch, m, cfg, true)
	if err != nil {
		var inv *Invalid
		if errors.As(err, &inv) {
			return fail("verifying the timeline", err)
		}
		return fail("emulating", err)
	}
	rec.Algorithm = name
	rec.Variant = Variant(name, cfg.Options)
	return rec, nil
}

// execute runs one schedule and, unless cfg.SkipVerify, checks its timeline; pathsChecked says
// its paths need no second check (emulator.Config.PathsChecked). Without KeepRuns the timeline
// is not kept: none is built without verification (emulator.RunResult), and one is checked and
// dropped with it (emulator.RunChecked, by round in barrier mode).
func execute(ctx context.Context, s *schedules.Schedule, m Matrix, cfg *Config, pathsChecked bool) (Record, error) {
	exec := cfg.Exec
	exec.PathsChecked = exec.PathsChecked || pathsChecked
	var res *emulator.Result
	var tl *schedules.Timeline
	var vs []schedules.Violation
	// Counted first, from the order the run then derives again in the same pooled memory: the
	// run's peak is not raised.
	perSwitch, err := emulator.SwitchChanges(s, exec.PathsChecked)
	if err != nil {
		return Record{}, err
	}
	switch {
	case cfg.KeepRuns:
		res, tl, err = emulator.Run(ctx, s, m.Demand, exec)
		if err == nil && !cfg.SkipVerify {
			vs = schedules.VerifyTimeline(s, tl)
		}
	case cfg.SkipVerify:
		res, err = emulator.RunResult(ctx, s, m.Demand, exec)
	default:
		res, vs, err = emulator.RunChecked(ctx, s, m.Demand, exec)
	}
	if err != nil {
		return Record{}, err
	}
	if len(vs) > 0 {
		return Record{}, &Invalid{Internal: true, Violations: vs}
	}
	rec := newRecord(s, m, res, perSwitch)
	if cfg.KeepRuns {
		rec.Schedule, rec.Timeline = s, tl
	}
	return rec, nil
}

// newRecord is the record of schedule s (its header: circuits are not read) run on m.
func newRecord(s *schedules.Schedule, m Matrix, res *emulator.Result, perSwitch []emulator.SwitchCount) Record {
	rec := Record{
		Algorithm: s.Algorithm, Matrix: m.Ref, CompletionSeconds: res.Completion,
		LowerBoundSeconds: res.Bounds.Max(), BandwidthBoundSeconds: res.Bounds.Bandwidth, ReconfigBoundSeconds: res.Bounds.Reconfig,
		Result: res, Mode: s.Mode, N: s.N, Fabric: s.Fabric,
		StateChanges: res.StateChanges,
	}
	rec.StateChangesPerSwitch = perSwitch
	if m, ok := emulator.MostChanged(rec.StateChangesPerSwitch); ok {
		rec.StateChangesMax = m.Count
	}
	return rec
}

// runRounds checks (unless cfg.SkipVerify) and executes a schedule handed out round by round,
// keeping no round after the next (schedules.RoundVerifier, emulator.RoundRun), and checks the
// execution's timeline round by round as the run produces it (schedules.RoundTimelineVerifier,
// the check execute makes of the same schedule whole): the record execute makes, without its
// timeline. A failure comes with the stage it happened in.
func runRounds(ctx context.Context, st *schedules.RoundStream, m Matrix, cfg *Config) (Record, string, error) {
	exec := cfg.Exec
	exec.PathsChecked = true // planned here by a registered scheduler, and verified unless SkipVerify
	var ver *schedules.RoundVerifier
	var tver *schedules.RoundTimelineVerifier
	if !cfg.SkipVerify {
		var vs []schedules.Violation
		if ver, vs = schedules.NewRoundVerifier(&st.Header, m.Demand); len(vs) > 0 {
			return Record{}, "verifying", &Invalid{Internal: true, Violations: vs}
		}
		tver = schedules.NewRoundTimelineVerifier(&st.Header)
	}
	run, err := emulator.NewRoundRun(&st.Header, m.Demand, exec)
	if err != nil {
		return Record{}, "emulating", err
	}
	for {
		r, ok, err := st.Next(ctx)
		if err != nil {
			return Record{}, "scheduling", err
		}
		if !ok {
			break
		}
		if ver != nil {
			if vs := ver.Round(r); len(vs) > 0 {
				return Record{}, "verifying", &Invalid{Internal: true, Violations: slices.Clone(vs)}
			}
		}
		if err := run.Round(ctx, r); err != nil {
			return Record{}, "emulating", err
		}
		if p, ok := run.Part(); ok && tver != nil {
			if vs := tver.Round(r, p); len(vs) > 0 {
				return Record{}, "verifying the timeline", &Invalid{Internal: true, Violations: vs}
			}
		}
	}
	if ver != nil {
		if vs := ver.Finish(); len(vs) > 0 {
			return Record{}, "verifying", &Invalid{Internal: true, Violations: vs}
		}
		if vs := tver.Finish(); len(vs) > 0 {
			return Record{}, "verifying the timeline", &Invalid{Internal: true, Violations: vs}
		}
	}
	res, perSwitch, err := run.Finish()
	if err != nil {
		return Record{}, "emulating", err
	}
	return newRecord(&st.Header, m, res, perSwitch), "", nil
}

// RunSchedule executes the given schedule s on matrix m (whose Demand may be nil: then there are
// no lower bounds and no check that s delivers it). A schedule that fails the verifier for m's
// demand is an *Invalid error (not Internal); a timeline that fails it is an internal one.
func RunSchedule(ctx context.Context, s *schedules.Schedule, m Matrix, cfg Config) (*Outcome, error) {
	if m.Demand != nil && !cfg.SkipVerify {
		if vs := schedules.Verify(s, m.Demand); len(vs) > 0 {
			return nil, &Invalid{Violations: vs}
		}
	}
	// A schedule from a file has its paths checked by the verifier, when it runs; else by the
	// emulator.
	rec, err := execute(ctx, s, m, &cfg, m.Demand != nil && !cfg.SkipVerify)
	if err != nil {
		var inv *Invalid
		if errors.As(err, &inv) {
			return nil, fmt.Errorf("the emulated timeline of %s on matrix %d (%s) fails the verifier: %w", s.Algorithm, m.Ref.Index, m.Ref.Label, err)
		}
		return nil, fmt.Errorf("emulating %s on matrix %d (%s): %w", s.Algorithm, m.Ref.Index, m.Ref.Label, err)
	}
	return assemble([]Record{rec}, cfg.reference()), nil
}

// assemble fills each record's speedup over ref and sums per algorithm, in record order.
func assemble(recs []Record, ref string) *Outcome {
	refAt := map[int]float64{}
	for _, r := range recs {
		if r.Algorithm == ref {
			refAt[r.Matrix.Index] = r.CompletionSeconds
		}
	}
	var totals []Total
	at := map[string]int{}
	for i := range recs {
		r := &recs[i]
		if t, ok := refAt[r.Matrix.Index]; ok && t > 0 {
			r.Speedup = r.CompletionSeconds / t
		}
		k, ok := at[r.Algorithm]
		if !ok {
			k = len(totals)
			at[r.Algorithm] = k
			totals = append(totals, Total{Algorithm: r.Algorithm})
		}
		t := &totals[k]
		t.Matrices++
		t.CompletionSeconds += r.CompletionSeconds
		t.LowerBoundSeconds += r.LowerBoundSeconds
		t.BandwidthBoundSeconds += r.BandwidthBoundSeconds
		t.ReconfigBoundSeconds += r.ReconfigBoundSeconds
		t.Groups += r.Result.Groups
		t.StateChanges += r.Result.StateChanges
	}
	if k, ok := at[ref]; ok && totals[k].CompletionSeconds > 0 {
		for i := range totals {
			totals[i].Speedup = totals[i].CompletionSeconds / totals[k].CompletionSeconds
		}
	}
	return &Outcome{Records: recs, Totals: totals, Reference: ref}
}
