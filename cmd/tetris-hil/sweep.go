package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetris-hil/tetris-hil/internal/safefile"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/emulator/sweep"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func init() { subcommands = append(subcommands, newSweepCmd) }

// The grid of Tetris Figure 8.
const (
	defaultSweepBandwidths = "100Gbps,200Gbps,400Gbps,800Gbps"
	defaultSweepReconfigs  = "10ns,100ns,1us,10us,100us,1ms,10ms"
)

type sweepFlags struct {
	demand demandSource
	// plan holds the fabric, the ablations and the RNB mapping; the grid gives bandwidth and α_r.
	plan planFlags
	// models are the execution models, as in emulate (Tetris Figure 10's hardware emulation
	// takes transfer times from the GPUs).
	models     modelFlags
	algo       string
	reference  string
	bandwidths string
	reconfigs  string
	out        string
	jobs       int
	maxMemory  memoryFlag
	progress   string
	shard      string
	resume     bool
	overwrite  bool
	// tenants makes the sweep multi-tenant (--tenants, --allocation as a list, --fabric-ports).
	tenants tenantFlags
}

func newSweepCmd() *cobra.Command {
	f := &sweepFlags{}
	cmd := &cobra.Command{
		Use:   "sweep --out DIR [--demand FILE] [--algo LIST] [--bandwidth LIST] [--reconfig LIST]",
		Short: "Run every algorithm over a bandwidth × α_r grid and plot the speedup of Tetris (Tetris Figures 7(b), 8, 10)",
		Long: `sweep schedules every matrix of a trace with every algorithm at every (bandwidth, α_r)
cell of a grid, executes each schedule in the emulator (transfer time bytes/b, parallel switch
reconfiguration α_r), and sums completion times over all matrices: one inference pass.

Per cell and per baseline it reports the ratio of the baseline's summed completion time to the
reference's (tetris): above 1, Tetris finishes the pass faster.

Files written to --out:
  sweep.csv                          one row per (bandwidth, α_r, algorithm), with the switch
                                     state changes over the pass (state_changes) and those of
                                     the most-changed switch (state_changes_max)
  speedup-<algo>.svg, .png           heatmap per baseline: rows bandwidth, columns α_r
  completion-vs-lower-bound.svg, .png  per-matrix completion / lower bound at 800Gbps, 10us
                                       (or the nearest cell of the grid)

With --calibration (per-GPU-pair α + β·bytes) or --measured (measured transfer times), transfers
are timed from the GPUs instead of bytes/bandwidth while α_r is injected as before: Tetris
Figure 10's hardware emulation. The bandwidths then only set what the schedulers plan with and
the lower bounds. With --reconfig-model controller, every reconfiguration command takes --tr on
one controller, serialised, then settles for --tw (Er-El and Feitelson §2.3.3) in every cell
(--batch B: ⌈k/B⌉ requests of --tr for k changes; --serial-settle: no overlapping settles); the
cell's α_r then only sets what the schedulers plan with, and the lower bounds use T_r + T_w.
--fabric and the Tetris ablations (--no-partial, --naive-routing, --no-degree-coverage) apply to
every cell, as in emulate.

Switch wear (Tetris §5): --wear-weight 0,1,4 is an axis. Every algorithm plans at the first weight;
tetris (and tetris-wear, when swept) plan again at each further one, as the algorithms tetris@w1,
tetris@w4 of every cell, with their own heatmaps and CSV rows: completion against state changes
per weight and cell, beside the baselines.

Tenants (Tetris §5): --tenants "0-3=a.csv,4-7=b.csv" sweeps several jobs sharing one fabric
(matrix k of each file runs together) under each --allocation (shared,centre,strict): every
algorithm runs under every allocation, as the algorithms tetris@shared, bvn@strict, …, ratios over
the reference under the first allocation, and the CSV adds each tenant's completion sum
(tenant_0-3_completion_sum_seconds).

The work runs on --jobs workers (default: every core). Finished runs are kept in --out as they
complete (` + sweep.PartialName + `): after Ctrl-C or a crash, --resume continues where the sweep
stopped (it checks that the inputs' hashes, the grid and the models are the same), and the
files it writes equal an uninterrupted sweep's byte for byte.`,
		Example: `  tetris-hil sweep --out sweep/
  tetris-hil sweep --demand examples/trace.json --algo tetris,bvn,maxweight --reconfig 1us,10us,100us --out sweep/
  tetris-hil sweep --demand examples/trace.json --calibration cal.json --bandwidth 800Gbps --out fig10/
  tetris-hil sweep --algo tetris,snb --no-partial --reconfig-model controller --tr 1us --tw 10us --out ctl/
  tetris-hil sweep --algo tetris,bvn,sunflow --wear-weight 0,1,4 --bandwidth 800Gbps --reconfig 10ns,10us,1ms --out wear/
  tetris-hil sweep --tenants "0-3=examples/tenant-a.csv,4-7=examples/tenant-b.csv" --fabric-ports 16 --allocation shared,strict --algo tetris,bvn,maxweight --out tenants/
  tetris-hil sweep --out sweep/ --resume                 # continue after Ctrl-C
  tetris-hil sweep --shard 0/2 --out shard-0/ && tetris-hil sweep --shard 1/2 --out shard-1/ && tetris-hil sweep merge shard-*/ --out merged/`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runSweep(cmd, f) },
	}
	fs := cmd.Flags()
	f.demand.register(fs)
	fs.StringVar(&f.algo, "algo", "all", "schedulers to run: a comma-separated list, or all")
	fs.StringVar(&f.reference, "reference", sweep.DefaultReference, "the algorithm every ratio is taken against")
	fs.StringVar(&f.bandwidths, "bandwidth", defaultSweepBandwidths, "grid rows: per-port bandwidths, comma-separated, with units")
	fs.StringVar(&f.reconfigs, "reconfig", defaultSweepReconfigs, "grid columns: reconfiguration delays α_r, comma-separated, with units")
	fs.StringVar(&f.out, "out", "", "directory for the CSV and the plots (created if missing)")
	fs.IntVar(&f.jobs, "jobs", 0, "parallel workers (0: one per core)")
	fs.StringVar(&f.progress, "progress", "auto", "progress bar on standard error: auto (only on a terminal), on, off")
	f.maxMemory.register(fs)
	f.plan.wearList = true
	f.plan.registerShape(fs)
	f.models.register(fs)
	fs.BoolVar(&f.resume, "resume", false, "continue the interrupted sweep kept in --out ("+sweep.PartialName+"; same inputs and grid)")
	fs.BoolVar(&f.overwrite, "overwrite", false, "start afresh, discarding an interrupted sweep kept in --out")
	registerSweepShard(cmd, f)
	fs.StringVar(&f.tenants.spec, "tenants", "", `a multi-tenant sweep (Tetris §5): tenants sharing the fabric, "PORTS=FILE,…" (e.g. "0-3=a.csv,4-7=b.csv"), each file's matrices that tenant's demands (matrix k of each runs together), instead of --demand`)
	fs.StringVar(&f.tenants.allocation, "allocation", "shared,centre,strict", "with --tenants: the allocations to sweep, comma-separated (shared, centre, strict); each algorithm runs under each, as ALGO@ALLOCATION")
	fs.IntVar(&f.tenants.fabricPorts, "fabric-ports", 0, "with --tenants: the fabric's size (a power of two; default: the smallest that holds every tenant)")
	return cmd
}

// sweepDemands are the matrices to sweep and the inputs they come from: --demand's, or with
// --tenants their joint matrices (each tenant's matrix k on its ports of the fabric), the
// tenants and allocations then set in cfg.
func (f *sweepFlags) sweepDemands(cmd *cobra.Command, cfg *sweep.Config) ([]*schedules.Demand, [][2]string, error) {
	if f.tenants.spec == "" {
		for _, name := range []string{"allocation", "fabric-ports"} {
			if cmd.Flags().Changed(name) {
				return nil, nil, usagef("--%s: only with --tenants", name)
			}
		}
		named, err := f.demand.load(cmd.Context())
		if err != nil {
			return nil, nil, err
		}
		demands := make([]*schedules.Demand, len(named))
		for i, nd := range named {
			demands[i] = nd.Demand
		}
		return demands, [][2]string{{"demand", f.demand.path}}, nil
	}
	for _, name := range []string{"demand", "max-memory"} {
		if cmd.Flags().Changed(name) {
			return nil, nil, usagef("--%s: not with --tenants", name)
		}
	}
	cfg.MaxMemory = 0 // tenants' runs are not gated (sweep.Config.Tenants)
	if cfg.Algorithms = without(cfg.Algorithms, "snb"); f.algo != "all" && len(cfg.Algorithms) < len(strings.Split(f.algo, ",")) {
		return nil, nil, usagef("--algo %q: snb plans on the crossbar, which has no tenant allocations", f.algo)
	}
	for _, a := range strings.Split(f.tenants.allocation, ",") {
		al, err := schedules.ParseAllocation(strings.TrimSpace(a))
		if err != nil {
			return nil, nil, usagef("--allocation %q: %v", f.tenants.allocation, err)
		}
		cfg.Allocations = append(cfg.Allocations, al)
	}
	ins, err := parseTenants(cmd.Context(), f.tenants.spec, f.demand)
	if err != nil {
		return nil, nil, err
	}
	n, err := f.tenants.fabricFor(ins)
	if err != nil {
		return nil, nil, err
	}
	runs := 1
	var files [][2]string
	for _, in := range ins {
		runs = max(runs, len(in.ms))
		cfg.Tenants = append(cfg.Tenants, in.block)
		files = append(files, [2]string{"tenant " + in.block.String(), in.file})
	}
	demands := make([]*schedules.Demand, runs)
	for k := range runs {
		d := schedules.NewDemand(n)
		for _, in := range ins {
			m := in.ms[min(k, len(in.ms)-1)].Demand
			for i := range in.block.Size {
				for j := range in.block.Size {
					d.Bytes[in.block.Lo+i][in.block.Lo+j] = m.At(i, j)
				}
			}
		}
		demands[k] = d
	}
	return demands, files, nil
}

// parseList splits a comma-separated flag value and parses each element; errors name the flag
// and the element.
func parseList(flag, list string, parse func(string) (float64, error)) ([]float64, error) {
	var vs []float64
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, emptyEntry(flag, list)
		}
		v, err := parse(s)
		if err != nil {
			return nil, usagef("--%s %q: %v", flag, s, err)
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return nil, usagef("--%s %q: give at least one value", flag, list)
	}
	return vs, nil
}

func (f *sweepFlags) config(ctx context.Context) (sweep.Config, error) {
	var cfg sweep.Config
	if err := f.checkFlags(); err != nil {
		return cfg, err
	}
	var err error
	if cfg.Bandwidths, err = parseList("bandwidth", f.bandwidths, units.ParseBandwidth); err != nil {
		return cfg, err
	}
	if cfg.Reconfigs, err = parseList("reconfig", f.reconfigs, units.ParseDuration); err != nil {
		return cfg, err
	}
	if cfg.Algorithms, err = lookupAlgos(f.algo); err != nil {
		return cfg, err
	}
	if !containsString(cfg.Algorithms, f.reference) {
		return cfg, usagef("--reference %q: not among --algo %q (%s); every ratio is taken against it",
			f.reference, f.algo, strings.Join(cfg.Algorithms, ","))
	}
	cfg.Reference = f.reference
	if cfg.Plan, err = f.plan.shape(); err != nil {
		return cfg, err
	}
	if cfg.WearWeights, err = f.wearWeights(cfg.Algorithms); err != nil {
		return cfg, err
	}
	cfg.Fabric, cfg.RNBMapping = cfg.Plan.Fabric, cfg.Plan.RNBMapping
	m := f.models
	if m.calibration != "" || m.measured != "" || m.gpuMap != "" || m.reconfModel != "parallel" || m.timingChanged() {
		// The same flags, checks and messages as emulate's models.
		exec, err := m.exec(ctx, cfg.Bandwidths[0], cfg.Reconfigs[0])
		if err != nil {
			return cfg, err
		}
		if m.calibration != "" || m.measured != "" {
			cfg.Transfer = exec.Transfer
		}
		if m.reconfModel != "parallel" {
			cfg.ReconfigModel = exec.Reconfig
		}
	}
	cfg.Jobs = f.jobs
	if cfg.Jobs == 0 {
		cfg.Jobs = runtime.GOMAXPROCS(0)
	}
	if cfg.MaxMemory, err = f.maxMemory.apply(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// wearWeights parses --wear-weight: one weight (every algorithm plans at it, as before the axis)
// or the axis (sweep.Config.WearWeights).
func (f *sweepFlags) wearWeights(algos []string) ([]float64, error) {
	ws, err := parseList("wear-weight", f.plan.wearWeights, func(s string) (float64, error) {
		w, err := strconv.ParseFloat(s, 64)
		if err != nil || !(w >= 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("want a non-negative, finite weight")
		}
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	for i, w := range ws {
		if slices.Index(ws, w) != i {
			return nil, usagef("--wear-weight %q: %g is listed twice", f.plan.wearWeights, w)
		}
	}
	if len(ws) > 1 && !slices.ContainsFunc(algos, func(a string) bool { return slices.Contains(sweep.WearAlgorithms, a) }) {
		return nil, usagef("--wear-weight %q: the axis needs tetris or tetris-wear among --algo %q", f.plan.wearWeights, f.algo)
	}
	return ws, nil
}

// checkFlags checks the flags that need no parsing, and the output directory.
func (f *sweepFlags) checkFlags() error {
	if f.out == "" {
		return usagef("--out: an output directory is required")
	}
	if err := checkOutDir(f.out); err != nil {
		return usagef("--out %q: %v", f.out, err)
	}
	if st, err := os.Stat(f.out); err == nil && st.IsDir() {
		for _, name := range []string{"sweep.csv", "sweep.json", sweep.ShardFileName, sweep.PartialName} {
			if err := safefile.Check(filepath.Join(f.out, name)); err != nil {
				return usagef("--out %q: %v", f.out, err)
			}
		}
	}
	if f.jobs < 0 {
		return usagef("--jobs %d: want 0 (every core) or a positive count", f.jobs)
	}
	switch {
	case f.resume && f.overwrite:
		return usagef("--resume and --overwrite: give one (continue the interrupted sweep, or discard it)")
	case (f.resume || f.overwrite) && f.shard != "":
		return usagef("--resume, --overwrite: not with --shard (a shard is rerun whole)")
	}
	switch f.progress {
	case "auto", "on", "off":
	default:
		return usagef("--progress %q: want auto, on or off", f.progress)
	}
	return nil
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func runSweep(cmd *cobra.Command, f *sweepFlags) error {
	cfg, err := f.config(cmd.Context())
	if err != nil {
		return err
	}
	if f.shard != "" {
		return runSweepShard(cmd, f, cfg)
	}
	demands, inputFiles, err := f.sweepDemands(cmd, &cfg)
	if err != nil {
		return err
	}
	lock, err := claimOutDir(cmd, "out", f.out)
	if err != nil {
		return err
	}
	defer lock.Release()
	inputs, err := describeInputs(append(inputFiles, [2]string{"calibration", f.models.calibration},
		[2]string{"measured", f.models.measured}, [2]string{"switch_bench", f.models.switchBench.path})...)
	if err != nil {
		return err
	}
	partialPath := filepath.Join(f.out, sweep.PartialName)
	part, err := f.partial(cmd, demands, cfg, inputs, partialPath)
	if err != nil {
		return err
	}
	total := len(cfg.Bandwidths) * len(cfg.Reconfigs) * len(demands) * len(cfg.Names())
	logger.Info().Int("matrices", len(demands)).Int("cells", len(cfg.Bandwidths)*len(cfg.Reconfigs)).
		Strs("algorithms", cfg.Algorithms).Int("runs", total).Int("jobs", cfg.Jobs).Int("units_kept", len(part.Results)).Msg("sweep")
	var finish func()
	cfg.Progress, finish = newProgress(cmd.ErrOrStderr(), f.progress, "sweep", total)
	start := time.Now()
	res, err := sweep.RunCheckpointed(cmd.Context(), demands, cfg, part, func(sf *sweep.ShardFile) error {
		return safefile.WriteJSON(partialPath, sf)
	})
	finish()
	if err != nil {
		if n := len(part.Results); n > 0 {
			return fmt.Errorf("%w; %d of %d matrix-cells kept in %s: run again with --resume to continue",
				memoryRefusal(err), n, part.Units, partialPath)
		}
		return memoryRefusal(err)
	}
	logger.Info().Str("elapsed", time.Since(start).Round(time.Millisecond).String()).Msg("sweep done")
	files, err := res.WriteFiles(cmd.Context(), f.out, sweep.NewManifest(res, cfg, provenance.Tool(), inputs))
	if err != nil {
		return err
	}
	if err := os.Remove(partialPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	w := cmd.OutOrStdout()
	if err := res.WriteSummary(w); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nwrote %s\n", strings.Join(files, ", "))
	return err
}

// partial is where the sweep starts: the units an interrupted run kept in partialPath (with
// --resume, checked against this run's inputs and grid), or none. An existing partial file is
// never dropped silently: without --resume or --overwrite the run is refused.
func (f *sweepFlags) partial(cmd *cobra.Command, demands []*schedules.Demand, cfg sweep.Config, inputs []provenance.Input, partialPath string) (*sweep.ShardFile, error) {
	fresh, err := sweep.NewPartial(demands, cfg, provenance.Tool(), inputs)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(partialPath); err != nil {
		if f.resume {
			fmt.Fprintf(cmd.ErrOrStderr(), "tetris-hil: --resume: no interrupted sweep in %s; starting from the beginning\n", f.out)
		}
		return fresh, nil
	}
	switch {
	case f.overwrite:
		return fresh, nil
	case !f.resume:
		return nil, usagef("--out %q: %s holds an interrupted sweep: --resume to continue it, or --overwrite to discard it and start afresh",
			f.out, partialPath)
	}
	prior, err := sweep.ReadPartial(partialPath)
	if err != nil {
		return nil, usagef("--resume: %v", err)
	}
	if err := sweep.CheckResume(prior, fresh); err != nil {
		return nil, usagef("--resume %s: %v", partialPath, err)
	}
	prior.Manifest = fresh.Manifest // this run's input paths (the hashes are the same)
	fmt.Fprintf(cmd.ErrOrStderr(), "tetris-hil: resuming: %d of %d matrix-cells already done in %s\n",
		len(prior.Results), prior.Units, partialPath)
	return prior, nil
}
