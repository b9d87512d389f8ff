package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/calibrate"
	"github.com/tetris-hil/tetris-hil/calibrate/model"
	calplot "github.com/tetris-hil/tetris-hil/calibrate/plot"
	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/readlimit"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

func init() { subcommands = append(subcommands, newCalibrateCmd) }

type calibrateFlags struct {
	ff                             fakeGPUFlags
	out, gpus, pairs, sizes        string
	perOctave                      float64
	warmup, reps, verifyEvery      int
	copyKind, patterns             string
	demand                         demandSource
	measuredOut                    string
	lockClocks                     bool
	clockMHz                       uint
	resume, unpinned, noProgress   bool
	overwrite                      bool
	progressMode                   string
	timeout                        string
	fakeAlpha, fakeBandwidth       string
	fakeNoise, fakeOutliers        float64
	fakeKnee                       string
	fakeKneeFactor, fakeContention float64
	seed                           uint64
	startMargin                    string
}

func newCalibrateCmd() *cobra.Command {
	var f calibrateFlags
	cmd := &cobra.Command{
		Use:   "calibrate [-o cal.json] [--gpus LIST] [--sizes 4KiB..1GiB] [--copy ce|sm] [--fake]",
		Short: "Measure every GPU pair's transfer times and fit the α-β model the emulator reads",
		Long: `calibrate measures GPU-to-GPU copy times on this server and fits Hockney's α-β model
T(m) = α + β·m per ordered GPU pair (Tetris §4.1, §4.2 and its Figure 13), writing the calibration
file that emulate --calibration reads.

It starts one worker process per GPU, pinned from birth to the GPU's local CPUs (and a second on a
GPU whose loopback pair is measured, so that loopback copies also cross processes). For every
pair and message size it runs --warmup untimed and --reps timed copies, queued behind a spin-kernel
latch and timed by CUDA events in the sending process (as nvbandwidth does), and keeps the median
and spread. Traffic patterns: isolated (one pair at a time) and permutation (every GPU sends at
once along a permutation, the n−1 cyclic shifts, released at one host-clock instant: the
contention a circuit round sees). Every --verify-every'th size also checks the copied bytes; a
wrong copy stops the run with an error. The sending GPU's temperature, clocks and throttle reasons
are recorded per size, and a pair throttled during its measurement gets a warning.

The fit weights least squares by relative error, rejects outlying medians by the median absolute
deviation rule (3.5 robust standard deviations), cross-checks with Theil–Sen, and where one line
does not fit (a copy path that changes at some size) fits two pieces and says where the knee is.

Ctrl-C stops cleanly: what was measured stays in OUT.partial, which --resume continues (the plan
must be the same). --demand FILE also times every distinct (src, dst, bytes) of the trace (the
paper's hardware emulation) and writes the table emulate --measured reads.

With --fake everything runs on fake devices: T(m) = α + m/B per pair around --fake-alpha and
--fake-bandwidth, with --seed noise, outliers, optionally a planted knee (--fake-knee) and
contention under the permutation pattern (--fake-contention).`,
		Example: `  tetris-hil calibrate --fake -o cal.json && tetris-hil emulate --calibration cal.json
  tetris-hil calibrate --gpus 0,1,2,3 --copy sm --reps 50 -o cal-sm.json
  tetris-hil calibrate --demand examples/trace.json -o cal.json --measured-out measured.json
  tetris-hil calibrate -o cal.json --resume          # continue after Ctrl-C
  tetris-hil calibrate show cal.json --plot cal.png`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runCalibrate(cmd, &f) },
	}
	f.ff.register(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&f.out, "output", "o", "calibration.json", "calibration file to write")
	renamedFlag(fs, "out", "output") // -o for a file, --out for directories, on every command
	fs.StringVar(&f.gpus, "gpus", "", "GPUs to calibrate, comma-separated NVML indices (default: all)")
	fs.StringVar(&f.pairs, "pairs", "", "ordered pairs to measure, e.g. 0-1,1-0,0-0 (default: all pairs of distinct --gpus; one GPU: its loopback)")
	fs.StringVar(&f.sizes, "sizes", "4KiB..1GiB", "message sizes: MIN..MAX (geometric, --per-octave per doubling) or a comma-separated list")
	fs.Float64Var(&f.perOctave, "per-octave", 4, "sizes per doubling for --sizes MIN..MAX")
	fs.IntVar(&f.warmup, "warmup", 3, "untimed copies per size before the timed ones")
	fs.IntVar(&f.reps, "reps", 20, "timed copies per size")
	fs.IntVar(&f.verifyEvery, "verify-every", 8, "check the copied bytes of every k-th size of each pair (0: never)")
	fs.StringVar(&f.copyKind, "copy", "ce", "copy with the copy engines (ce) or an SM kernel (sm)")
	fs.StringVar(&f.patterns, "pattern", "isolated,permutation", "traffic patterns: isolated, permutation, or both (permutation needs 2 GPUs)")
	f.demand.register(fs)
	fs.StringVar(&f.measuredOut, "measured-out", "", "with --demand: measured-times file for emulate --measured (default: OUT with .measured.json)")
	fs.BoolVar(&f.lockClocks, "lock-clocks", false, "lock the GPUs' SM clocks (NVML, needs root) for the run; restored on every exit")
	fs.UintVar(&f.clockMHz, "clock-mhz", 0, "with --lock-clocks: SM clock in MHz (0: each GPU's maximum)")
	fs.BoolVar(&f.resume, "resume", false, "continue the interrupted run kept in OUT.partial (same plan; without one, start afresh)")
	fs.BoolVar(&f.unpinned, "unpinned", false, "do not pin the workers to their GPUs' CPUs")
	fs.BoolVar(&f.overwrite, "overwrite", false, "start afresh, discarding the interrupted run kept in OUT.partial")
	fs.StringVar(&f.progressMode, "progress", "auto", "progress bar on standard error: auto (only on a terminal), on, off")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no progress bar")
	_ = fs.MarkDeprecated("no-progress", "use --progress off")
	fs.StringVar(&f.timeout, "timeout", "60s", "a worker that does not answer a request within this is reported hung and killed")
	fs.StringVar(&f.startMargin, "start-margin", "", "permutation pattern: how far ahead the concurrent copies are released together (default 100ms, 1ms with --fake)")
	fs.StringVar(&f.fakeAlpha, "fake-alpha", "3us", "with --fake: per-copy latency α around which pairs lie (±5 %)")
	fs.StringVar(&f.fakeBandwidth, "fake-bandwidth", "370GB/s", "with --fake: bandwidth B around which pairs lie (±5 %)")
	fs.Float64Var(&f.fakeNoise, "fake-noise", fake.Defaults.Noise, "with --fake: σ of the log of each copy's time")
	fs.Float64Var(&f.fakeOutliers, "fake-outliers", fake.Defaults.Outliers, "with --fake: fraction of copies 1.5–3× slow")
	fs.StringVar(&f.fakeKnee, "fake-knee", "", "with --fake: plant a protocol change at this size (e.g. 1MiB)")
	fs.Float64Var(&f.fakeKneeFactor, "fake-knee-factor", 0.5, "with --fake-knee: bandwidth past the knee, as a fraction")
	fs.Float64Var(&f.fakeContention, "fake-contention", 1, "with --fake: permutation copies run this many times slower per byte than a pair alone (a PCIe server's shared links)")
	fs.Uint64Var(&f.seed, "seed", 1, "with --fake: seed of the noise")
	cmd.AddCommand(newCalibrateShowCmd())
	return cmd
}

func runCalibrate(cmd *cobra.Command, f *calibrateFlags) error {
	if err := safefile.Check(f.out); err != nil {
		return usagef("-o %q: %v", f.out, err)
	}
	if err := checkProgress(f.progressMode); err != nil {
		return err
	}
	if f.resume && f.overwrite {
		return usagef("--resume and --overwrite: give one (continue OUT.partial, or discard it)")
	}
	lock, err := claimOutFile(cmd, "output", f.out)
	if err != nil {
		return err
	}
	defer lock.Release()
	// Under the lock: no other run writes OUT.partial while it is looked at.
	partialPath := f.out + ".partial"
	if _, err := os.Stat(partialPath); err == nil && !f.resume && !f.overwrite {
		return usagef("-o %q: %s holds an interrupted calibration: --resume to continue it, or --overwrite to discard it and start afresh",
			f.out, partialPath)
	}
	lib, err := f.ff.open()
	if err != nil {
		return err
	}
	defer lib.Close()
	inv, err := lib.Inventory(cudaVisible())
	if err != nil {
		return err
	}
	cfg, err := f.config(lib, inv)
	if err != nil {
		return err
	}
	if err := f.demandPlan(cmd.Context(), &cfg); err != nil {
		return err
	}
	if err := safefile.Check(partialPath); err != nil {
		return usagef("-o %q: its partial file: %v", f.out, err)
	}
	if _, err := os.Stat(partialPath); f.resume && errors.Is(err, fs.ErrNotExist) {
		// Nothing to continue: a retry loop (until calibrate --resume; do :; done) starts afresh.
		fmt.Fprintf(cmd.ErrOrStderr(), "tetris-hil: --resume: no interrupted calibration in %s; starting from the beginning\n", partialPath)
	} else if f.resume {
		if cfg.Resume, err = loadPartial(partialPath); err != nil {
			return usagef("--resume: %v", err)
		}
		if err := calibrate.CheckResume(cfg.Resume, &cfg.Plan, cfg.Inventory); err != nil {
			return usagef("--resume %s: %v", partialPath, err)
		}
	}
	ctx := cmd.Context()
	if f.lockClocks {
		lock, err := lib.LockClocks(ctx, planGPUs(&cfg.Plan), uint32(f.clockMHz))
		if err != nil {
			return err
		}
		defer func() {
			if err := lock.Restore(); err != nil {
				logger.Error().Err(err).Msg("restoring GPU clocks")
			}
		}()
	}
	f.progress(cmd, &cfg, partialPath)
	logger.Info().Int("pairs", len(cfg.Plan.Pairs)).Int("sizes", len(cfg.Plan.Sizes)).Int("steps", calibrate.Steps(&cfg.Plan)).
		Str("engine", cfg.Plan.Engine).Msg("calibrating")
	res, err := calibrate.Run(ctx, cfg)
	if err != nil {
		if res != nil && res.Partial != nil && len(res.Partial.Steps) > 0 {
			if werr := safefile.WriteJSON(partialPath, res.Partial); werr != nil {
				return errors.Join(err, fmt.Errorf("keeping the partial run: %w", werr))
			}
			return fmt.Errorf("%w; %d of %d steps kept in %s: run again with --resume to continue", err,
				len(res.Partial.Steps), calibrate.Steps(&cfg.Plan), partialPath)
		}
		return err
	}
	return f.finish(cmd, res, partialPath)
}

// finish writes the calibration (and the measured table), removes the partial file and prints
// the report.
func (f *calibrateFlags) finish(cmd *cobra.Command, res *calibrate.Result, partialPath string) error {
	b, err := res.Calibration.Marshal()
	if err != nil {
		return err
	}
	if err := safefile.WriteFile(f.out, b); err != nil {
		return fmt.Errorf("-o %s: %w", f.out, err)
	}
	if err := os.Remove(partialPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	out := cmd.OutOrStdout()
	if len(res.Calibration.Plan.Demand) > 0 {
		t := emulator.MeasuredTable{Version: emulator.MeasuredFormatVersion}
		for _, x := range res.Measured {
			t.Measurements = append(t.Measurements, emulator.Measurement{Src: x.Src, Dst: x.Dst, Bytes: x.Bytes, Seconds: x.Seconds})
		}
		if err := safefile.WriteJSON(f.measuredOutPath(), t); err != nil {
			return fmt.Errorf("--measured-out %s: %w", f.measuredOutPath(), err)
		}
		fmt.Fprintf(out, "Measured %d demand transfers: %s (emulate --measured %s)\n", len(t.Measurements), f.measuredOutPath(), f.measuredOutPath())
	}
	if err := calibrate.WriteReport(out, res.Calibration); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nWrote %s (emulate --calibration %s)\n", f.out, f.out)
	return nil
}

func (f *calibrateFlags) measuredOutPath() string {
	if f.measuredOut != "" {
		return f.measuredOut
	}
	return strings.TrimSuffix(f.out, filepath.Ext(f.out)) + ".measured.json"
}

// config turns the flags into a calibration run on lib's GPUs.
func (f *calibrateFlags) config(lib *nvml.Lib, inv *nvml.Inventory) (calibrate.Config, error) {
	var cfg calibrate.Config
	gpus, err := f.gpuList(len(inv.GPUs))
	if err != nil {
		return cfg, err
	}
	plan, err := f.plan(gpus, len(inv.GPUs))
	if err != nil {
		return cfg, err
	}
	if plan.Engine, plan.EngineOptions, err = f.engine(); err != nil {
		return cfg, err
	}
	plan.LockClocks, plan.ClockMHz = f.lockClocks, int(f.clockMHz)
	callTimeout, err := units.ParseDuration(f.timeout)
	if err != nil || callTimeout <= 0 {
		return cfg, usagef("--timeout %q: want a positive duration such as 60s", f.timeout)
	}
	margin := 0.1
	if f.ff.fake {
		margin = 0.001 // fake copies take no time: nothing to line up but the requests
	}
	if f.startMargin != "" {
		margin, err = units.ParseDuration(f.startMargin)
	}
	if err != nil || margin <= 0 {
		return cfg, usagef("--start-margin %q: want a positive duration such as 100ms", f.startMargin)
	}
	exe, err := os.Executable()
	if err != nil {
		return cfg, fmt.Errorf("finding this binary to start workers: %w", err)
	}
	host, _ := os.Hostname()
	cfg = calibrate.Config{Plan: plan, Inventory: calibrate.InventoryFrom(inv, host), Tool: provenance.Tool(),
		Workers: bench.Config{Lib: lib, Command: []string{exe, "worker"}, Visible: cudaVisible(), Unpinned: f.unpinned,
			Timeout: secondsToDuration(callTimeout), Log: os.Stderr, Started: debugWorker},
		StartMargin: secondsToDuration(margin)}
	return cfg, nil
}

func (f *calibrateFlags) gpuList(n int) ([]int, error) {
	if f.gpus == "" {
		gpus := make([]int, n)
		for i := range gpus {
			gpus[i] = i
		}
		return gpus, nil
	}
	var gpus []int
	for _, s := range strings.Split(f.gpus, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || g < 0 || g >= n || slices.Contains(gpus, g) {
			return nil, usagef("--gpus %q: %q is not one of this machine's GPUs 0..%d (each once)", f.gpus, s, n-1)
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

// plan builds the measurement plan of the flags over gpus (n GPUs on the machine).
func (f *calibrateFlags) plan(gpus []int, n int) (model.Plan, error) {
	p := model.Plan{Warmup: f.warmup, Reps: f.reps, Copy: f.copyKind, VerifyEvery: f.verifyEvery}
	if _, err := transfer.ParseKind(f.copyKind); err != nil {
		return p, usagef("--copy: %v", err)
	}
	if f.reps < 1 || f.warmup < 0 || f.verifyEvery < 0 {
		return p, usagef("--reps %d --warmup %d --verify-every %d: want reps >= 1, the others >= 0", f.reps, f.warmup, f.verifyEvery)
	}
	if err := checkReps(f.reps, f.warmup); err != nil {
		return p, err
	}
	var err error
	if p.Sizes, err = f.sizeList(); err != nil {
		return p, err
	}
	if p.Pairs, err = parsePairs(f.pairs, gpus, n); err != nil {
		return p, err
	}
	for _, pat := range strings.Split(f.patterns, ",") {
		switch pat = strings.TrimSpace(pat); pat {
		case model.Isolated:
		case model.Permutation:
			if len(gpus) < 2 {
				continue // one GPU has no permutation to load it with
			}
			p.Permutations = calibrate.CyclicShifts(gpus)
		default:
			return p, usagef("--pattern %q: %q is not isolated or permutation", f.patterns, pat)
		}
		if !slices.Contains(p.Patterns, pat) {
			p.Patterns = append(p.Patterns, pat)
		}
	}
	return p, nil
}

func (f *calibrateFlags) sizeList() ([]int64, error) {
	if lo, hi, ok := strings.Cut(f.sizes, ".."); ok {
		a, err1 := units.ParseBytes(strings.TrimSpace(lo))
		b, err2 := units.ParseBytes(strings.TrimSpace(hi))
		if err := errors.Join(err1, err2); err != nil {
			return nil, usagef("--sizes %q: %v", f.sizes, err)
		}
		s, err := calibrate.GeometricSizes(a, b, f.perOctave)
		if err != nil {
			return nil, usagef("--sizes %q --per-octave %g: %v", f.sizes, f.perOctave, err)
		}
		return s, nil
	}
	var out []int64
	for _, part := range strings.Split(f.sizes, ",") {
		b, err := units.ParseBytes(strings.TrimSpace(part))
		if err != nil || b <= 0 || (len(out) > 0 && b <= out[len(out)-1]) {
			return nil, usagef("--sizes %q: %q is not a size above the one before it", f.sizes, part)
		}
		out = append(out, b)
	}
	if len(out) < 3 {
		return nil, usagef("--sizes %q: a fit needs at least 3 sizes", f.sizes)
	}
	return out, nil
}

// parsePairs reads "0-1,1-0"; empty is every ordered pair of gpus (one GPU: its loopback).
func parsePairs(list string, gpus []int, n int) ([][2]int, error) {
	if list == "" {
		return calibrate.DefaultPairs(gpus), nil
	}
	var out [][2]int
	for _, e := range strings.Split(list, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(e), "-")
		s, err1 := strconv.Atoi(a)
		d, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || s < 0 || d < 0 || s >= n || d >= n {
			return nil, usagef("--pairs %q: %q is not SRC-DST with GPUs 0..%d", list, e, n-1)
		}
		if slices.Contains(out, [2]int{s, d}) {
			return nil, usagef("--pairs %q: %q appears twice", list, e)
		}
		out = append(out, [2]int{s, d})
	}
	return out, nil
}

func (f *calibrateFlags) engine() (string, string, error) {
	if !f.ff.fake {
		return "cuda", "", nil
	}
	m := fake.Defaults
	var err error
	if m.Alpha, err = units.ParseDuration(f.fakeAlpha); err != nil {
		return "", "", usagef("--fake-alpha: %v", err)
	}
	if m.Bandwidth, err = units.ParseBandwidth(f.fakeBandwidth); err != nil {
		return "", "", usagef("--fake-bandwidth: %v", err)
	}
	if f.fakeNoise < 0 || f.fakeOutliers < 0 || f.fakeOutliers > 1 {
		return "", "", usagef("--fake-noise %g --fake-outliers %g: want noise >= 0 and outliers in [0, 1]", f.fakeNoise, f.fakeOutliers)
	}
	if f.fakeContention < 1 {
		return "", "", usagef("--fake-contention %g: want a factor >= 1", f.fakeContention)
	}
	m.Noise, m.Outliers, m.Seed, m.Contention = f.fakeNoise, f.fakeOutliers, f.seed, f.fakeContention
	if f.fakeKnee != "" {
		if m.KneeBytes, err = units.ParseBytes(f.fakeKnee); err != nil || m.KneeBytes <= 0 {
			return "", "", usagef("--fake-knee %q: want a size such as 1MiB", f.fakeKnee)
		}
		if !(f.fakeKneeFactor > 0) {
			return "", "", usagef("--fake-knee-factor %g: want a positive fraction", f.fakeKneeFactor)
		}
		m.KneeFactor = f.fakeKneeFactor
	}
	return "fake", m.String(), nil
}

// demandPlan adds the distinct transfers of --demand to the plan: port i is GPU i.
func (f *calibrateFlags) demandPlan(ctx context.Context, cfg *calibrate.Config) error {
	if f.demand.path == "" {
		return nil
	}
	ds, err := f.demand.load(ctx)
	if err != nil {
		return err
	}
	n := len(cfg.Inventory.GPUs)
	seen := map[model.Transfer]bool{}
	for _, d := range ds {
		if d.Demand.N() > n {
			return usagef("--demand %s: %s has %d ports, this machine %d GPUs (port i is GPU i)", f.demand.path, d.Label, d.Demand.N(), n)
		}
		for _, p := range d.Demand.Pairs() {
			t := model.Transfer{Src: p.Src, Dst: p.Dst, Bytes: p.Bytes}
			if p.Src != p.Dst && !seen[t] {
				seen[t] = true
				cfg.Plan.Demand = append(cfg.Plan.Demand, t)
			}
		}
	}
	if err := safefile.Check(f.measuredOutPath()); err != nil {
		return usagef("--measured-out %q: %v", f.measuredOutPath(), err)
	}
	return nil
}

// progress installs the progress bar (stderr, with ETA) and the checkpoint that keeps the partial
// file at most a second behind.
func (f *calibrateFlags) progress(cmd *cobra.Command, cfg *calibrate.Config, partialPath string) {
	var last time.Time
	cfg.Checkpoint = func(p *calibrate.Partial) error {
		if time.Since(last) < time.Second {
			return nil
		}
		last = time.Now()
		return safefile.WriteJSON(partialPath, p)
	}
	if f.noProgress || !showProgress(f.progressMode, cmd.ErrOrStderr()) {
		return
	}
	bar := progressbar.NewOptions(calibrate.Steps(&cfg.Plan),
		progressbar.OptionSetWriter(cmd.ErrOrStderr()),
		progressbar.OptionSetDescription("calibrate"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())
	cfg.Progress = func(done, _ int) { _ = bar.Set(done) }
}

func planGPUs(p *model.Plan) []int {
	var out []int
	for _, pr := range p.Pairs {
		for _, g := range pr {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	for _, t := range p.Demand {
		for _, g := range []int{t.Src, t.Dst} {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}

// loadPartial reads a partial file within readlimit's limit (a regular file only); its steps
// are checked against the plan by calibrate.CheckResume.
func loadPartial(path string) (*calibrate.Partial, error) {
	b, err := readlimit.ReadFile(context.Background(), path, readlimit.Partial)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p calibrate.Partial
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

func newCalibrateShowCmd() *cobra.Command {
	var plotOut string
	cmd := &cobra.Command{
		Use:   "show FILE [--plot OUT.svg|png]",
		Short: "Print a calibration file: α and bandwidth per pair as matrices, the worst fits; plot it",
		Long: `show prints where and how a calibration was taken, then per traffic pattern the α (µs) and
the bandwidth (GB/s, of the largest sizes) of every ordered GPU pair as src × dst matrices, then
the worst fits (by maximum relative residual) with R², m* = α/β, the Theil–Sen cross-check, the
pieces of a knee and the rejected outliers, then the measurement's warnings.

--plot draws time against size on log-log axes, per pair the medians with their interquartile
spread and the fitted line or pieces (like Tetris Figure 13), and a bandwidth heatmap with its
colour scale, to an .svg or .png file.`,
		Example: `  tetris-hil calibrate show cal.json
  tetris-hil calibrate show cal.json --plot cal.png`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format := strings.TrimPrefix(strings.ToLower(filepath.Ext(plotOut)), ".")
			if plotOut != "" && format != "svg" && format != "png" {
				return usagef("--plot %q: want an .svg or .png file", plotOut)
			}
			if plotOut != "" {
				if err := safefile.Check(plotOut); err != nil {
					return usagef("--plot %q: %v", plotOut, err)
				}
			}
			cal, err := model.Load(args[0])
			if err != nil {
				return usagef("%v", err)
			}
			if err := calibrate.WriteReport(cmd.OutOrStdout(), cal); err != nil {
				return err
			}
			if plotOut == "" {
				return nil
			}
			var buf strings.Builder
			if err := calplot.Draw(&buf, format, cal); err != nil {
				return err
			}
			if err := safefile.WriteFile(plotOut, []byte(buf.String())); err != nil {
				return fmt.Errorf("--plot %s: %w", plotOut, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", plotOut)
			return err
		},
	}
	cmd.Flags().StringVar(&plotOut, "plot", "", "draw the fits and a bandwidth heatmap to this .svg or .png file")
	return cmd
}
