package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tetris-hil/tetris-hil/internal/safefile"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/plot"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func init() { subcommands = append(subcommands, newEmulateCmd) }

// emulateFormatVersion is the version of the --json file.
const emulateFormatVersion = 1

// emulateReport is the --json file.
type emulateReport struct {
	Version int `json:"version"`
	// Tool and Inputs tie the numbers to the code and the exact files that produced them.
	Tool          string          `json:"tool"`
	Inputs        []inputFile     `json:"inputs"`
	Bandwidth     float64         `json:"bandwidth_bytes_per_second"`
	Reconfig      float64         `json:"reconfig_seconds"`
	TransferModel string          `json:"transfer_model"`
	ReconfigModel string          `json:"reconfig_model"`
	Runs          []emulateRecord `json:"runs"`
	Totals        []emulateTotal  `json:"totals,omitempty"`
}

// matrixRef says which matrix of the demand file a run used (layer −1 and no phase for a matrix
// without trace metadata).
type matrixRef struct {
	Index   int    `json:"index"`
	Layer   int    `json:"layer"`
	Phase   string `json:"phase,omitempty"`
	Dataset string `json:"dataset,omitempty"`
	Label   string `json:"label,omitempty"`
}

// emulateRecord is one (matrix, algorithm) run.
type emulateRecord struct {
	Algorithm             string    `json:"algorithm"`
	Matrix                matrixRef `json:"matrix"`
	CompletionSeconds     float64   `json:"completion_seconds"`
	LowerBoundSeconds     float64   `json:"lower_bound_seconds,omitempty"`
	BandwidthBoundSeconds float64   `json:"bandwidth_bound_seconds,omitempty"`
	ReconfigBoundSeconds  float64   `json:"reconfig_bound_seconds,omitempty"`
	// TetrisSpeedup is this algorithm's completion over Tetris's on the same matrix.
	TetrisSpeedup float64          `json:"tetris_speedup,omitempty"`
	Result        *emulator.Result `json:"result"`

	schedule *schedules.Schedule
	timeline *schedules.Timeline
}

// emulateTotal sums one algorithm over all matrices (one inference pass of a trace).
type emulateTotal struct {
	Algorithm         string  `json:"algorithm"`
	Matrices          int     `json:"matrices"`
	CompletionSeconds float64 `json:"completion_seconds"`
	// The bounds are sums over the matrices of each matrix's bound.
	LowerBoundSeconds     float64 `json:"lower_bound_seconds,omitempty"`
	BandwidthBoundSeconds float64 `json:"bandwidth_bound_seconds,omitempty"`
	ReconfigBoundSeconds  float64 `json:"reconfig_bound_seconds,omitempty"`
	TetrisSpeedup         float64 `json:"tetris_speedup,omitempty"`
	Groups                int     `json:"groups"`
	StateChanges          int     `json:"state_changes"`
}

type emulateFlags struct {
	src         demandSource
	plan        planFlags
	algo        string
	schedule    string
	calibration string
	gpuMap      string
	measured    string
	reconfModel string
	tr, tw      string
	jsonOut     string
	timelineDir string
	gantt       string
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
changes; with several matrices, a total over them (one inference pass).

Timing models: transfers take bytes/bandwidth unless --calibration (per-GPU-pair α + β·bytes) or
--measured (a table of measured times) is given; reconfiguration is --reconfig per change, all in
parallel (the seed's model), or with --reconfig-model controller, commands serialised through one
controller taking --tr each while the settle time --tw overlaps (T_c = T_r + T_w). Schedulers plan
with --bandwidth and --reconfig whatever the execution model; lower bounds use --bandwidth and
the reconfiguration model's delay for one command (α_r, or T_r + T_w).

With --schedule S.json the given schedule is executed as it is (any producer); --demand is then
optional and only adds lower bounds and the verifier's check, and --bandwidth/--reconfig default
to the schedule's own parameters.

Every emulated timeline is checked by the verifier; a violation is an internal error (exit 1).`,
		Example: `  tetris-hil emulate --demand m.csv
  tetris-hil emulate --demand trace.json --layer 3 --phase dispatch --algo tetris,bvn --reconfig 1us
  tetris-hil emulate --demand m.csv --reconfig-model controller --tr 1us --tw 10us --json out.json
  tetris-hil emulate --schedule s.json --timeline runs/`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEmulate(cmd, &f)
		},
	}
	fs := cmd.Flags()
	f.src.register(fs)
	f.plan.register(fs)
	fs.StringVar(&f.algo, "algo", "all", "schedulers to run: a comma-separated list, or all")
	fs.StringVar(&f.schedule, "schedule", "", "execute this schedule file as it is instead of scheduling")
	fs.StringVar(&f.calibration, "calibration", "", "calibration file: transfers take the per-GPU-pair α + β·bytes")
	fs.StringVar(&f.gpuMap, "gpu-map", "", "with --calibration: the GPU of each port, comma-separated (default: port i is GPU i)")
	fs.StringVar(&f.measured, "measured", "", "measured transfer times (JSON, or CSV with header src,dst,bytes,seconds)")
	fs.StringVar(&f.reconfModel, "reconfig-model", "parallel", "reconfiguration model: parallel (α_r per change, all concurrent) or controller (--tr serialised, --tw overlapping)")
	fs.StringVar(&f.tr, "tr", "1us", "controller model: time the controller takes per command (T_r)")
	fs.StringVar(&f.tw, "tw", "10us", "controller model: settle time after each command, overlapping (T_w)")
	fs.StringVar(&f.jsonOut, "json", "", "write every run (and totals) as JSON to this file")
	fs.StringVar(&f.timelineDir, "timeline", "", "write each run's schedule, timeline and Chrome trace (Perfetto) into this directory")
	fs.StringVar(&f.gantt, "gantt", "", "draw a Gantt chart per run (per transmitter and per switch) to this .svg or .png file; with several runs, -m<matrix>-<algorithm> goes before the extension")
	return cmd
}

// models builds the execution models from the flags.
func (f *emulateFlags) models(bandwidth, reconfig float64) (emulator.Config, error) {
	var cfg emulator.Config
	if f.calibration != "" && f.measured != "" {
		return cfg, usagef("--calibration %q and --measured %q: pick one transfer model", f.calibration, f.measured)
	}
	switch {
	case f.calibration != "":
		cal, err := model.Load(f.calibration)
		if err != nil {
			return cfg, usagef("--calibration %q: %v", f.calibration, err)
		}
		// Entries are GPU indices, PCI bus ids or UUIDs; one the calibration was not taken on is
		// an error naming it and the calibration's GPUs.
		gpuOf, err := cal.GPUMap(f.gpuMap)
		if err != nil {
			return cfg, usagef("--gpu-map %q with --calibration %q: %v", f.gpuMap, f.calibration, err)
		}
		if cfg.Transfer, err = emulator.AlphaBetaModel(cal, gpuOf); err != nil {
			if f.gpuMap != "" {
				// The file was validated by Load: what is left to go wrong is the mapping.
				return cfg, usagef("--gpu-map %q: %v", f.gpuMap, err)
			}
			return cfg, usagef("--calibration %q: %v", f.calibration, err)
		}
	case f.measured != "":
		t, err := emulator.LoadMeasuredTable(f.measured)
		if err != nil {
			return cfg, usagef("--measured %q: %v", f.measured, err)
		}
		cfg.Transfer = emulator.MeasuredModel(t)
	default:
		if f.gpuMap != "" {
			return cfg, usagef("--gpu-map %q: only applies with --calibration", f.gpuMap)
		}
		cfg.Transfer = emulator.BandwidthModel(bandwidth)
	}
	cfg.BoundBandwidth = bandwidth
	switch f.reconfModel {
	case "parallel":
		cfg.Reconfig = emulator.ParallelReconfig(reconfig)
	case "controller":
		tr, err := units.ParseDuration(f.tr)
		if err != nil {
			return cfg, usagef("--tr %q: %v", f.tr, err)
		}
		tw, err := units.ParseDuration(f.tw)
		if err != nil {
			return cfg, usagef("--tw %q: %v", f.tw, err)
		}
		cfg.Reconfig = emulator.ControllerReconfig(tr, tw)
	default:
		return cfg, usagef("--reconfig-model %q: want parallel or controller", f.reconfModel)
	}
	return cfg, nil
}

func runEmulate(cmd *cobra.Command, f *emulateFlags) error {
	ctx := cmd.Context()
	flags := cmd.Flags()
	ganttFormat := ""
	if f.gantt != "" {
		switch strings.ToLower(filepath.Ext(f.gantt)) {
		case ".svg":
			ganttFormat = "svg"
		case ".png":
			ganttFormat = "png"
		default:
			return usagef("--gantt %q: the file must end in .svg or .png", f.gantt)
		}
	}
	var recs []emulateRecord
	var cfg emulator.Config
	var opts schedules.Options
	if f.schedule != "" {
		for _, name := range []string{"algo", "fabric", "no-partial", "naive-routing", "no-degree-coverage", "sunflow-by-size", "rnb-mapping"} {
			if flags.Changed(name) {
				return usagef("--%s: not with --schedule (the schedule file is executed as it is)", name)
			}
		}
		s, err := schedules.LoadSchedule(f.schedule)
		if err != nil {
			return usagef("--schedule %q: %v", f.schedule, err)
		}
		// Execute under the schedule's own parameters unless the flags override them.
		if !flags.Changed("bandwidth") && s.Params.BandwidthBytesPerSecond > 0 {
			f.plan.bandwidth = strconv.FormatFloat(s.Params.BandwidthBytesPerSecond, 'g', -1, 64) + "B/s"
		}
		if !flags.Changed("reconfig") {
			f.plan.reconfig = strconv.FormatFloat(s.Params.ReconfigSeconds, 'g', -1, 64) + "s"
		}
		f.plan.fabric = string(s.Fabric)
		if opts, err = f.plan.options(); err != nil {
			return err
		}
		if cfg, err = f.models(opts.Bandwidth, opts.Reconfig); err != nil {
			return err
		}
		ref := matrixRef{Index: -1, Layer: -1, Label: f.schedule}
		var d *schedules.Demand
		if f.src.path != "" {
			ds, err := f.src.load()
			if err != nil {
				return err
			}
			if len(ds) != 1 {
				return usagef("--demand %s holds %d matrices: pick the one this schedule serves with --matrix", f.src.path, len(ds))
			}
			d = ds[0].Demand
			ref = matrixRef{Index: ds[0].Index, Layer: ds[0].Layer, Phase: ds[0].Phase, Dataset: ds[0].Dataset, Label: ds[0].Label}
			if vs := schedules.Verify(s, d); len(vs) > 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("--schedule %s: invalid for --demand %s: %s (and %d more violations; see 'tetris-hil verify')",
					f.schedule, f.src.path, vs[0], len(vs)-1)}
			}
		}
		rec, err := emulateOne(ctx, s, d, ref, cfg)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	} else {
		var err error
		if opts, err = f.plan.options(); err != nil {
			return err
		}
		names, err := lookupAlgos(f.algo)
		if err != nil {
			return err
		}
		if cfg, err = f.models(opts.Bandwidth, opts.Reconfig); err != nil {
			return err
		}
		ds, err := f.src.load()
		if err != nil {
			return err
		}
		var bar *progressbar.ProgressBar
		if total := len(ds) * len(names); total > 1 && showProgress("auto", cmd.ErrOrStderr()) {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(cmd.ErrOrStderr()),
				progressbar.OptionSetDescription("emulate"), progressbar.OptionShowCount(),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
			defer bar.Finish()
		}
		for _, nd := range ds {
			ref := matrixRef{Index: nd.Index, Layer: nd.Layer, Phase: nd.Phase, Dataset: nd.Dataset, Label: nd.Label}
			for _, name := range names {
				sch, err := schedules.Lookup(name)
				if err != nil {
					return usagef("--algo %q: %v", name, err)
				}
				s, err := sch.Schedule(ctx, nd.Demand, opts)
				if err != nil {
					return fmt.Errorf("%s on matrix %d (%s): %w", name, nd.Index, nd.Label, err)
				}
				if vs := schedules.Verify(s, nd.Demand); len(vs) > 0 {
					return fmt.Errorf("internal error: %s produced an invalid schedule for matrix %d (%s): %s (and %d more violations)",
						name, nd.Index, nd.Label, vs[0], len(vs)-1)
				}
				rec, err := emulateOne(ctx, s, nd.Demand, ref, cfg)
				if err != nil {
					return err
				}
				rec.Algorithm = name
				recs = append(recs, rec)
				if bar != nil {
					_ = bar.Add(1)
				}
			}
		}
	}
	totals := addSpeedups(recs)
	if err := printEmulateTable(cmd.OutOrStdout(), recs, totals); err != nil {
		return err
	}
	if f.timelineDir != "" {
		if err := writeTimelines(f.timelineDir, recs); err != nil {
			return err
		}
	}
	if f.gantt != "" {
		if err := writeGantts(f.gantt, ganttFormat, recs); err != nil {
			return err
		}
	}
	if f.jsonOut != "" {
		inputs, err := describeInputs([2]string{"demand", f.src.path}, [2]string{"schedule", f.schedule},
			[2]string{"calibration", f.calibration}, [2]string{"measured", f.measured})
		if err != nil {
			return err
		}
		if f.schedule != "" && f.src.path == "" {
			inputs = inputs[1:] // a schedule file alone: no demand was read
		}
		rep := emulateReport{Version: emulateFormatVersion, Tool: toolVersion(), Inputs: inputs,
			Bandwidth: opts.Bandwidth, Reconfig: opts.Reconfig,
			TransferModel: cfg.Transfer.Name(), ReconfigModel: cfg.Reconfig.Name(), Runs: recs}
		if len(recs) > 0 && recs[0].Matrix.Index >= 0 && countMatrices(recs) > 1 {
			rep.Totals = totals
		}
		if err := safefile.WriteJSON(f.jsonOut, rep); err != nil {
			return fmt.Errorf("--json %s: %w", f.jsonOut, err)
		}
	}
	return nil
}

// emulateOne runs one schedule and checks its timeline with the verifier.
func emulateOne(ctx context.Context, s *schedules.Schedule, d *schedules.Demand, ref matrixRef, cfg emulator.Config) (emulateRecord, error) {
	res, tl, err := emulator.Run(ctx, s, d, cfg)
	if err != nil {
		return emulateRecord{}, fmt.Errorf("emulating %s on matrix %d (%s): %w", s.Algorithm, ref.Index, ref.Label, err)
	}
	if vs := schedules.VerifyTimeline(s, tl); len(vs) > 0 {
		return emulateRecord{}, fmt.Errorf("internal error: the emulated timeline of %s on matrix %d (%s) fails the verifier: %s (and %d more violations)",
			s.Algorithm, ref.Index, ref.Label, vs[0], len(vs)-1)
	}
	return emulateRecord{
		Algorithm: s.Algorithm, Matrix: ref, CompletionSeconds: res.Completion,
		LowerBoundSeconds: res.Bounds.Max(), BandwidthBoundSeconds: res.Bounds.Bandwidth, ReconfigBoundSeconds: res.Bounds.Reconfig,
		Result: res, schedule: s, timeline: tl,
	}, nil
}

// addSpeedups fills each record's Tetris speedup and returns per-algorithm totals over matrices.
func addSpeedups(recs []emulateRecord) []emulateTotal {
	tetris := map[int]float64{}
	for _, r := range recs {
		if r.Algorithm == "tetris" {
			tetris[r.Matrix.Index] = r.CompletionSeconds
		}
	}
	var totals []emulateTotal
	at := map[string]int{}
	for i := range recs {
		r := &recs[i]
		if t, ok := tetris[r.Matrix.Index]; ok && t > 0 {
			r.TetrisSpeedup = r.CompletionSeconds / t
		}
		k, ok := at[r.Algorithm]
		if !ok {
			k = len(totals)
			at[r.Algorithm] = k
			totals = append(totals, emulateTotal{Algorithm: r.Algorithm})
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
	if k, ok := at["tetris"]; ok && totals[k].CompletionSeconds > 0 {
		for i := range totals {
			totals[i].TetrisSpeedup = totals[i].CompletionSeconds / totals[k].CompletionSeconds
		}
	}
	return totals
}

func countMatrices(recs []emulateRecord) int {
	seen := map[int]bool{}
	for _, r := range recs {
		seen[r.Matrix.Index] = true
	}
	return len(seen)
}

func printEmulateTable(w io.Writer, recs []emulateRecord, totals []emulateTotal) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MATRIX\tALGORITHM\tCOMPLETION\t/BW BOUND\t/RECONF BOUND\tTETRIS SPEEDUP\tGROUPS\tSTATE CHANGES\t")
	ratio := func(x float64) string {
		if x == 0 {
			return "-"
		}
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
	for _, r := range recs {
		m := strconv.Itoa(r.Matrix.Index)
		if r.Matrix.Index < 0 {
			m = "-"
		} else if r.Matrix.Layer >= 0 {
			m += fmt.Sprintf(" (L%d %s", r.Matrix.Layer, r.Matrix.Phase)
			if r.Matrix.Dataset != "" {
				m += " " + r.Matrix.Dataset
			}
			m += ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t\n", m, r.Algorithm, units.FormatSeconds(r.CompletionSeconds),
			ratio(r.Result.RatioBandwidth), ratio(r.Result.RatioReconfig), ratio(r.TetrisSpeedup), r.Result.Groups, r.Result.StateChanges)
	}
	if countMatrices(recs) > 1 {
		for _, t := range totals {
			fmt.Fprintf(tw, "total (%d)\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t\n", t.Matrices, t.Algorithm, units.FormatSeconds(t.CompletionSeconds),
				ratio(safeDiv(t.CompletionSeconds, t.BandwidthBoundSeconds)), ratio(safeDiv(t.CompletionSeconds, t.ReconfigBoundSeconds)),
				ratio(t.TetrisSpeedup), t.Groups, t.StateChanges)
		}
	}
	return tw.Flush()
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// writeTimelines writes, per run, the schedule, the timeline with its result, and a Chrome trace.
func writeTimelines(dir string, recs []emulateRecord) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--timeline %s: %w", dir, err)
	}
	for _, r := range recs {
		base := filepath.Join(dir, runName(r))
		if err := safefile.WriteJSON(base+".schedule.json", r.schedule); err != nil {
			return fmt.Errorf("--timeline: %w", err)
		}
		rec := struct {
			Version   int                 `json:"version"`
			Algorithm string              `json:"algorithm"`
			Matrix    matrixRef           `json:"matrix"`
			Result    *emulator.Result    `json:"result"`
			Timeline  *schedules.Timeline `json:"timeline"`
		}{emulateFormatVersion, r.Algorithm, r.Matrix, r.Result, r.timeline}
		if err := safefile.WriteJSON(base+".timeline.json", rec); err != nil {
			return fmt.Errorf("--timeline: %w", err)
		}
		var b strings.Builder
		if err := emulator.WriteChromeTrace(&b, r.schedule, r.timeline); err != nil {
			return fmt.Errorf("--timeline: %w", err)
		}
		if err := safefile.WriteFile(base+".trace.json", []byte(b.String())); err != nil {
			return fmt.Errorf("--timeline: %w", err)
		}
	}
	return nil
}

// writeGantts draws one chart per run: to path itself for a single run, else to path with the
// run's name before the extension.
func writeGantts(path, format string, recs []emulateRecord) error {
	for _, r := range recs {
		out := path
		if len(recs) > 1 {
			ext := filepath.Ext(path)
			out = strings.TrimSuffix(path, ext) + "-" + runName(r) + ext
		}
		var b bytes.Buffer
		if err := plot.Gantt(&b, format, r.schedule, r.timeline); err != nil {
			return fmt.Errorf("--gantt %s: %w", out, err)
		}
		if err := safefile.WriteFile(out, b.Bytes()); err != nil {
			return fmt.Errorf("--gantt: %w", err)
		}
	}
	return nil
}

// runName is a file-name-safe name for one run: m<index>-<algorithm>.
func runName(r emulateRecord) string {
	m := "schedule"
	if r.Matrix.Index >= 0 {
		m = "m" + strconv.Itoa(r.Matrix.Index)
	}
	alg := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			return c
		}
		return '_'
	}, r.Algorithm)
	return m + "-" + alg
}
