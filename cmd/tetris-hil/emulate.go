package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

func init() { subcommands = append(subcommands, newEmulateCmd) }

type emulateFlags struct {
	src         demandSource
	plan        planFlags
	models      modelFlags
	algo        string
	schedule    string
	jsonOut     string
	timelineDir string
	gantt       string
	progress    string
	maxMemory   memoryFlag
	wear        wearFlags
	tenants     tenantFlags
	csvOut      string
	totals      bool
	// stream writes planned runs' timelines and charts as they finish (emulate_stream.go).
	stream      *runStream
	ganttFormat string
}

func newEmulateCmd() *cobra.Command {
	var f emulateFlags
	cmd := &cobra.Command{
		Use:   "emulate --demand FILE [--algo LIST|all] [--bandwidth 800Gbps] [--reconfig 10us]",
		Short: "Schedule demand with each algorithm and execute it in virtual time over the fabric",
		Long: `emulate plans each selected matrix with each selected scheduler, checks the schedule with the
verifier, and executes it at the granularity of 2×2 switches on completion events (all switches
start in Bar). It prints, per matrix and algorithm, the completion time, its ratio to the
bandwidth lower bound and to the reconfiguration-aware lower bound, Tetris's speedup over the
algorithm (its completion over Tetris's), the rounds or planning groups, and the switch state
changes; with several matrices, a total over them (one inference pass). Every cell is one word
("-" for none, units in the headings), so awk '{print $N}' reads column N of every row.

Timing models: transfers take bytes/bandwidth unless --calibration (per-GPU-pair α + β·bytes) or
--measured (a table of measured times) is given; reconfiguration is --reconfig per change, all in
parallel (the Tetris paper's model), or with --reconfig-model controller, commands serialised through one
controller taking --tr each while the settle time --tw overlaps (T_c = T_r + T_w). With --batch B a
command of k changes is ⌈k/B⌉ requests of --tr each (--batch 1: T_r per change; the default 0:
one request per command); --serial-settle makes the controller wait for each command's settle
before it takes the next (Er-El and Feitelson §2.3.3 overlap them). Schedulers plan
with --bandwidth and --reconfig whatever the execution model; lower bounds follow the execution
models: each pair's least transfer time under the transfer model (bytes/b, α + β·bytes per pair,
or the measured times' best rate, since a split demand's pieces are timed by interpolation) and
the reconfiguration model's delay for one command (α_r, or T_r + T_w).

With --schedule S.json the given schedule is executed as it is (any producer); --demand is then
optional and only adds lower bounds and the verifier's check, and --bandwidth/--reconfig default
to the schedule's own parameters.

Switch wear (Tetris §5): --wear prints, per algorithm, how often each switch changed state over
the pass (a heatmap of stage × switch index), the most-changed switch and how long it lasts when
rated for --switch-cycles changes and the pass runs --passes-per-second times a second; --json
has the counts per run. --wear-weight makes Tetris trade completion time for fewer changes
(tetris-wear is the same planner with the weight at 1 unless given).

Tenants (Tetris §5): --tenants "0-3=a.csv,4-7=b.csv" runs several jobs on one fabric, each file
the demand of its ports in order, under --allocation shared, centre or strict (see 'tetris-hil
tenants'); the table and --json give each tenant's completion.

Every schedule is checked by the verifier, and so is every emulated timeline. Without --timeline or
--gantt a barrier schedule is planned, checked and executed round by round and never held whole, and
its timeline is checked round by round as the rounds are executed. A violation is an internal error
(exit 1).`,
		Example: `  tetris-hil emulate --demand examples/demand.csv
  tetris-hil emulate --demand examples/trace.json --layer 1 --phase dispatch --algo tetris,bvn --reconfig 1us
  tetris-hil emulate --demand examples/demand.csv --reconfig-model controller --tr 1us --tw 10us --json out.json
  tetris-hil emulate --schedule s.json --timeline runs/
  tetris-hil emulate --demand examples/demand.csv --reconfig-model controller --tr 1us --tw 10us --batch 16 --serial-settle
  tetris-hil emulate --layer 0 --algo tetris,tetris-wear --wear-weight 4 --wear --passes-per-second 100
  tetris-hil emulate --tenants "0-3=examples/tenant-a.csv,4-7=examples/tenant-b.csv" --allocation strict --algo tetris,bvn --json t.json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEmulate(cmd, &f)
		},
	}
	fs := cmd.Flags()
	f.maxMemory.register(fs)
	f.src.register(fs)
	f.plan.register(fs)
	fs.StringVar(&f.algo, "algo", "all", "schedulers to run: a comma-separated list, or all")
	fs.StringVar(&f.schedule, "schedule", "", "execute this schedule file as it is instead of scheduling")
	f.models.register(fs)
	fs.StringVar(&f.jsonOut, "json", "", "write every run (and totals) as JSON to this file (- for standard output, instead of the table)")
	fs.StringVar(&f.csvOut, "csv", "", "write every run and the totals as CSV to this file, a unit per column heading (- for standard output, instead of the table)")
	fs.BoolVar(&f.totals, "totals", false, "print one summary line per algorithm over every matrix instead of a row per matrix (with --csv: the total rows only)")
	fs.StringVar(&f.timelineDir, "timeline", "", "write each run's schedule, timeline and Chrome trace (Perfetto) into this directory")
	fs.StringVar(&f.progress, "progress", "auto", "progress bar on standard error: auto (only on a terminal), on, off")
	f.wear.register(fs)
	f.tenants.register(fs)
	fs.StringVar(&f.gantt, "gantt", "", "draw a Gantt chart per run (per transmitter and per switch) to this .svg, .png or .pdf file; with several runs, -m<matrix>-<algorithm> goes before the extension")
	return cmd
}

// modelFlags are the execution-model flags that emulate and sweep share.
type modelFlags struct {
	calibration, gpuMap, measured string
	reconfModel, tr, tw           string
	batch                         int
	serialSettle                  bool
	switchBench                   *switchBenchFlag
	fs                            *pflag.FlagSet // to refuse --tr/--tw that the model would ignore
}

func (m *modelFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&m.calibration, "calibration", "", "calibration file: transfers take the per-GPU-pair α + β·bytes")
	fs.StringVar(&m.gpuMap, "gpu-map", "", "with --calibration: the GPU of each port, comma-separated NVML indices, PCI bus ids or UUIDs of the calibration's GPUs (default: port i is GPU i)")
	fs.StringVar(&m.measured, "measured", "", "measured transfer times (JSON, or CSV with header src,dst,bytes,seconds)")
	fs.StringVar(&m.reconfModel, "reconfig-model", "parallel", "reconfiguration model: parallel (α_r per change, all concurrent) or controller (--tr serialised, --tw overlapping)")
	fs.StringVar(&m.tr, "tr", "1us", "controller model: time the controller takes per request of up to --batch changes (T_r)")
	fs.StringVar(&m.tw, "tw", "10us", "controller model: settle time after each command, overlapping (T_w)")
	fs.IntVar(&m.batch, "batch", 0, "controller model: at most this many changes per request (B), so a command of k changes takes ⌈k/B⌉·T_r + T_w; 1 is T_r per change, 0 no limit (T_r per command)")
	fs.BoolVar(&m.serialSettle, "serial-settle", false, "controller model: the controller takes the next command only once the last has settled (settles do not overlap)")
	m.switchBench = registerSwitchBench(fs)
	m.fs = fs
}

// exec builds the execution models: transfers at bandwidth unless a file says otherwise,
// reconfiguration α_r = reconfig under the parallel model; the lower bounds follow both.
func (m *modelFlags) exec(ctx context.Context, bandwidth, reconfig float64) (emulator.Config, error) {
	var cfg emulator.Config
	if m.calibration != "" && m.measured != "" {
		return cfg, usagef("--calibration %q and --measured %q: pick one transfer model", m.calibration, m.measured)
	}
	var err error
	// A large calibration takes seconds to parse: a signal ends the wait at once.
	cfg.Transfer, err = interruptible(ctx, emulator.TransferSpec{Bandwidth: bandwidth, Calibration: m.calibration, GPUMap: m.gpuMap, Measured: m.measured, Context: ctx}.Model)
	if ctx.Err() != nil {
		return cfg, context.Cause(ctx)
	}
	if err != nil {
		return cfg, specUsage(err)
	}
	spec := emulator.ReconfigSpec{Model: m.reconfModel, Alpha: reconfig}
	if m.reconfModel == "controller" {
		if spec.Tr, err = units.ParseDuration(m.tr); err != nil {
			return cfg, usagef("--tr %q: %v", m.tr, err)
		}
		if spec.Tw, err = units.ParseDuration(m.tw); err != nil {
			return cfg, usagef("--tw %q: %v", m.tw, err)
		}
		if m.batch < 0 {
			return cfg, usagef("--batch %d: want B ≥ 1 changes per request, or 0 for no limit", m.batch)
		}
		spec.Batch, spec.SerialSettle = m.batch, m.serialSettle
		if spec.Tr, spec.Tw, spec.Batch, err = m.switchBench.times(spec.Tr, spec.Tw, spec.Batch); err != nil {
			return cfg, err
		}
	} else if m.reconfModel == "parallel" {
		for _, name := range []string{"tr", "tw", "batch", "serial-settle"} {
			if m.fs != nil && m.fs.Changed(name) {
				return cfg, usagef("--%s %q: only --reconfig-model controller uses it (the parallel model takes --reconfig)", name, m.fs.Lookup(name).Value)
			}
		}
		if err := m.switchBench.parallel(); err != nil {
			return cfg, err
		}
	}
	if cfg.Reconfig, err = spec.ReconfigModel(); err != nil {
		return cfg, specUsage(err)
	}
	return cfg, nil
}

// specUsage turns an emulator.SpecError into a usage error naming the flag of the same name.
func specUsage(err error) error {
	if se, ok := err.(*emulator.SpecError); ok {
		return usagef("--%s %q: %v", se.Field, se.Value, se.Err)
	}
	return err
}

func runEmulate(cmd *cobra.Command, f *emulateFlags) error {
	ganttFormat, err := f.checkOutputs()
	if err != nil {
		return err
	}
	f.ganttFormat = ganttFormat
	if err := f.wear.check(); err != nil {
		return err
	}
	if f.tenants.spec != "" {
		return runEmulateTenants(cmd, f)
	}
	if f.timelineDir != "" {
		lock, err := claimOutDir(cmd, "timeline", f.timelineDir)
		if err != nil {
			return err
		}
		defer lock.Release()
	}
	var out *experiment.Outcome
	var cfg experiment.Config
	if f.schedule != "" {
		out, cfg, err = f.runSchedule(cmd)
	} else {
		out, cfg, err = f.runPlanned(cmd)
	}
	if err != nil {
		return err
	}
	stdout := cmd.OutOrStdout()
	if f.jsonOut != "-" && f.csvOut != "-" {
		fmt.Fprintln(stdout, experiment.Describe(f.sourceName(), out.Matrices(), cfg))
		write := out.WriteTable
		if f.totals {
			write = func(w io.Writer) error { return writeEmulateTotals(w, out) }
		}
		if err := write(stdout); err != nil {
			return err
		}
	}
	if f.csvOut != "" {
		if err := writeCSVTo(stdout, f.csvOut, func(w io.Writer) error { return writeEmulateCSV(w, out, f.totals) }); err != nil {
			return fmt.Errorf("--csv %s: %w", f.csvOut, err)
		}
	}
	if err := f.writeOutputs(cmd.Context(), stdout, out, cfg, ganttFormat); err != nil {
		return err
	}
	wearOut := stdout
	if f.jsonOut == "-" || f.csvOut == "-" {
		wearOut = cmd.ErrOrStderr() // standard output carries the JSON or CSV itself
	}
	if err := f.wear.write(wearOut, out); err != nil {
		return err
	}
	return f.sayWritten(cmd)
}

// sayWritten names the files emulate wrote: on standard output after the table, or on standard
// error when standard output carries the JSON or CSV itself.
func (f *emulateFlags) sayWritten(cmd *cobra.Command) error {
	var files []string
	for _, p := range []string{f.jsonOut, f.csvOut} {
		if p != "" && p != "-" {
			files = append(files, p)
		}
	}
	if f.timelineDir != "" {
		files = append(files, f.timelineDir+" (schedules, timelines, Chrome traces; "+experiment.TimelinesManifestName+" lists them)")
	}
	if f.gantt != "" {
		files = append(files, f.gantt+" (one chart per run: -m<matrix>-<algorithm> before the extension when there are several)")
	}
	if len(files) == 0 {
		return nil
	}
	w := cmd.OutOrStdout()
	if f.jsonOut == "-" || f.csvOut == "-" {
		w = cmd.ErrOrStderr()
	}
	_, err := fmt.Fprintf(w, "\nwrote %s\n", strings.Join(files, ", "))
	return err
}

// checkOutputs checks every output path before any work starts and returns the chart format.
func (f *emulateFlags) checkOutputs() (ganttFormat string, err error) {
	if err := checkProgress(f.progress); err != nil {
		return "", err
	}
	if f.gantt != "" {
		switch strings.ToLower(filepath.Ext(f.gantt)) {
		case ".svg":
			ganttFormat = "svg"
		case ".png":
			ganttFormat = "png"
		case ".pdf":
			ganttFormat = "pdf"
		default:
			return "", usagef("--gantt %q: the file must end in .svg, .png or .pdf", f.gantt)
		}
		if err := safefile.Check(f.gantt); err != nil {
			return "", usagef("--gantt %q: %v", f.gantt, err)
		}
	}
	if f.jsonOut == "-" && f.csvOut == "-" {
		return "", usagef("--json - and --csv -: only one can take standard output")
	}
	for flag, p := range map[string]string{"json": f.jsonOut, "csv": f.csvOut} {
		if p != "" && p != "-" {
			if err := safefile.Check(p); err != nil {
				return "", usagef("--%s %q: %v", flag, p, err)
			}
		}
	}
	if f.timelineDir != "" {
		if err := checkOutDir(f.timelineDir); err != nil {
			return "", usagef("--timeline %q: %v", f.timelineDir, err)
		}
		// The manifest there says which files a rerun replaces: unreadable, it is refused now.
		if _, err := experiment.ReadTimelinesManifest(f.timelineDir); err != nil {
			return "", usagef("--timeline %q: %v", f.timelineDir, err)
		}
	}
	return ganttFormat, nil
}

// runSchedule executes the --schedule file as it is.
func (f *emulateFlags) runSchedule(cmd *cobra.Command) (*experiment.Outcome, experiment.Config, error) {
	var cfg experiment.Config
	flags := cmd.Flags()
	for _, name := range []string{"algo", "fabric", "no-partial", "naive-routing", "no-degree-coverage", "sunflow-by-size", "rnb-mapping", "wear-weight", "wear-balance"} {
		if flags.Changed(name) {
			return nil, cfg, usagef("--%s: not with --schedule (the schedule file is executed as it is)", name)
		}
	}
	s, err := loadScheduleToRun(f.schedule)
	if err != nil {
		return nil, cfg, err
	}
	// Execute under the schedule's own parameters unless the flags override them.
	if !flags.Changed("bandwidth") && s.Params.BandwidthBytesPerSecond > 0 {
		f.plan.bandwidth = strconv.FormatFloat(s.Params.BandwidthBytesPerSecond, 'g', -1, 64) + "B/s"
	}
	if !flags.Changed("reconfig") {
		f.plan.reconfig = strconv.FormatFloat(s.Params.ReconfigSeconds, 'g', -1, 64) + "s"
	}
	f.plan.fabric = string(s.Fabric)
	if cfg.Options, err = f.plan.options(); err != nil {
		return nil, cfg, err
	}
	if err := cfg.Options.CheckScheduleHorizon(s); err != nil {
		return nil, cfg, usagef("--schedule %s: %v", f.schedule, err)
	}
	if cfg.Exec, err = f.models.exec(cmd.Context(), cfg.Options.Bandwidth, cfg.Options.Reconfig); err != nil {
		return nil, cfg, err
	}
	m := experiment.Matrix{Ref: emulator.MatrixRef{Index: -1, Layer: -1, Label: f.schedule}}
	if f.src.path != "" {
		ds, err := f.src.load(cmd.Context())
		if err != nil {
			return nil, cfg, err
		}
		if len(ds) != 1 {
			return nil, cfg, usagef("%s holds %d matrices: pick the one this schedule serves with --matrix", demandName(f.src.path), len(ds))
		}
		m = ds[0].matrix()
	}
	cfg.KeepRuns = true
	out, err := experiment.RunSchedule(cmd.Context(), s, m, cfg)
	var inv *experiment.Invalid
	if errors.As(err, &inv) && !inv.Internal {
		return nil, cfg, &exitError{code: 1, msg: fmt.Sprintf("--schedule %s: invalid for --demand %s: %s (and %d more violations; see 'tetris-hil verify')",
			f.schedule, f.src.path, inv.Violations[0], len(inv.Violations)-1)}
	}
	return out, cfg, err
}

// runPlanned plans every selected matrix with every selected algorithm and executes the plans.
func (f *emulateFlags) runPlanned(cmd *cobra.Command) (*experiment.Outcome, experiment.Config, error) {
	var cfg experiment.Config
	var err error
	if cfg.Options, err = f.plan.options(); err != nil {
		return nil, cfg, err
	}
	if cfg.Algorithms, err = lookupAlgos(f.algo); err != nil {
		return nil, cfg, err
	}
	if cfg.Exec, err = f.models.exec(cmd.Context(), cfg.Options.Bandwidth, cfg.Options.Reconfig); err != nil {
		return nil, cfg, err
	}
	if cfg.MaxMemory, err = f.maxMemory.apply(); err != nil {
		return nil, cfg, err
	}
	ds, err := f.src.load(cmd.Context())
	if err != nil {
		return nil, cfg, err
	}
	ms := make([]experiment.Matrix, len(ds))
	for i, nd := range ds {
		ms[i] = nd.matrix()
	}
	cfg.KeepRuns = f.timelineDir != "" || f.gantt != ""
	if cfg.KeepRuns {
		if f.stream, err = f.newRunStream(cmd.Context(), ms, cfg); err != nil {
			return nil, cfg, err
		}
		cfg.Stream = f.stream.write
	}
	pool := experiment.Pool{}
	if total := len(ms) * len(cfg.Algorithms); total > 1 {
		var finish func()
		pool.Progress, finish = newProgress(cmd.ErrOrStderr(), f.progress, "emulate", total)
		defer finish()
	}
	out, err := experiment.Run(cmd.Context(), ms, cfg, pool)
	return out, cfg, memoryRefusal(err)
}

// writeOutputs writes the run records, charts and report the flags ask for.
func (f *emulateFlags) writeOutputs(ctx context.Context, stdout io.Writer, out *experiment.Outcome, cfg experiment.Config, ganttFormat string) error {
	if f.timelineDir == "" && f.gantt == "" && f.jsonOut == "" {
		return nil
	}
	inputs, err := f.runInputs()
	if err != nil {
		return err
	}
	if f.stream != nil {
		if err := f.stream.close(); err != nil {
			return err
		}
	} else if f.timelineDir != "" {
		if err := experiment.WriteTimelines(ctx, f.timelineDir, out.Records, cfg.Exec, provenance.Tool(), inputs); err != nil {
			return fmt.Errorf("--timeline %s: %w", f.timelineDir, err)
		}
	}
	if f.gantt != "" && f.stream == nil {
		if err := experiment.WriteGantts(ctx, f.gantt, ganttFormat, out.Records); err != nil {
			return fmt.Errorf("--gantt %s: %w", f.gantt, err)
		}
	}
	if f.jsonOut != "" {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := writeJSONTo(stdout, f.jsonOut, experiment.NewReport(out, cfg, provenance.Tool(), inputs)); err != nil {
			return fmt.Errorf("--json %s: %w", f.jsonOut, err)
		}
	}
	return nil
}
