package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/reproduce"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

func init() { subcommands = append(subcommands, newReproduceCmd) }

type reproduceFlags struct {
	demand      demandSource
	calibration string
	measured    string
	out         string
	jobs        int
	progress    string
	pdf         bool
	list        bool
}

// figureListText is the figures reproduce runs, as its help and --list show them.
const figureListText = `  fig6   Tetris against its ablations (--no-partial, --naive-routing, --no-degree-coverage) and
         tetris+, at 800Gbps and α_r = 100ns, 10us, 1ms (§3, Figure 6)
  fig7   every scheduler on every matrix at 800Gbps, α_r = 10us: baseline / Tetris (bars per
         workload) and completion / lower bound per matrix (box plots) (Figure 7)
  fig8   the 100–800Gbps × 10ns–10ms grid, baseline / Tetris, a heatmap per baseline (Figure 8)
  fig9   BvN and Tetris on synthetic demand of 8, 16, 32 GPUs: one expert per GPU, 600 tokens
         per GPU, hidden size 6144 (Mixtral-8x22B) (Figure 9)
  fig10  the α_r sweep with transfers timed from a GPU calibration (--calibration) or measured
         per-demand times (--measured); heatmap rows are the trace's workloads (Figure 10)
  fig13  the calibration's α-β fit per GPU pair (Figure 13)
  all    every figure above
`

// fakeCalibrationName is the file the fake calibration is written to in --out.
const fakeCalibrationName = "fake-calibration.json"

func newReproduceCmd() *cobra.Command {
	f := &reproduceFlags{}
	cmd := &cobra.Command{
		Use:   "reproduce fig6|fig7|fig8|fig9|fig10|fig13|all... --out DIR [--demand FILE] [--calibration FILE | --measured FILE]",
		Short: "Run the settings of the Tetris paper's figures and print our numbers beside the paper's (Tetris §4.2)",
		Long: `reproduce runs the setting of each named figure of "Tetris: Circuit Scheduling for
Rearrangeably Non-Blocking Photonic Interconnects" (§4.1–§4.2), writes its plot and data under
DIR/<figure>/, and prints a table of the numbers the paper's text states beside ours ("not
stated" where the text gives none). DIR/reproduce.json records the tool, the inputs with their
SHA-256 and every table.

` + figureListText + `
Demand is the built-in Mixtral-8x7B trace unless --demand names one (the --matrix, --layer
and --phase selections apply). Without --calibration, Figures 10 and 13 use a fake calibration
this command makes first (calibrate --fake with its default model: α ≈ 3us and B ≈ 370GB/s
per pair, seeded noise, one fake GPU per port of the demand and 8 at least), written to
DIR/fake-calibration.json; the output says so. --measured times Figure 10's transfers from a
measured table instead (calibrate --demand writes one). Every ratio to the lower bound is to
the reconfiguration-aware bound (one α_r per partner of the busiest endpoint).`,
		Example: `  tetris-hil reproduce all --out repro/
  tetris-hil reproduce fig8 fig9 --out repro/
  tetris-hil reproduce fig10 fig13 --calibration cal.json --out repro/
  tetris-hil reproduce fig7 --demand examples/trace.json --out repro/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.list {
				if len(args) > 0 {
					return usagef("--list takes no figures (it lists them all)")
				}
				return nil
			}
			if len(args) == 0 {
				return usagef("%s needs at least one figure: fig6, fig7, fig8, fig9, fig10, fig13 or all (see --list)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.list {
				_, err := fmt.Fprint(cmd.OutOrStdout(), figureListText)
				return err
			}
			return runReproduce(cmd, f, args)
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return append(slices.Clone(reproduce.Figures), "all"), cobra.ShellCompDirectiveNoFileComp
		},
	}
	fs := cmd.Flags()
	f.demand.register(fs)
	fs.StringVar(&f.calibration, "calibration", "", "calibration file (tetris-hil calibrate) for Figures 10 and 13 (default: a fake one made first)")
	fs.StringVar(&f.measured, "measured", "", "measured transfer times for Figure 10 (JSON, or CSV with header src,dst,bytes,seconds)")
	fs.StringVar(&f.out, "out", "", "output directory (created if missing)")
	fs.IntVar(&f.jobs, "jobs", 0, "parallel workers (0: one per core)")
	fs.StringVar(&f.progress, "progress", "auto", "progress bar on standard error: auto (only on a terminal), on, off")
	fs.BoolVar(&f.pdf, "pdf", false, "also write each chart as PDF for papers (vector, fonts embedded as subsets); Figure 8's heatmaps stay SVG and PNG")
	fs.BoolVar(&f.list, "list", false, "list the figures and what each runs, and exit")
	return cmd
}

func runReproduce(cmd *cobra.Command, f *reproduceFlags, args []string) error {
	start := time.Now()
	figs, err := f.check(args)
	if err != nil {
		return err
	}
	lock, err := claimOutDir(cmd, "out", f.out)
	if err != nil {
		return err
	}
	defer lock.Release()
	s := reproduce.Default()
	s.Jobs = f.jobs
	s.PDF = f.pdf
	bars := &figureBars{w: cmd.ErrOrStderr(), mode: f.progress}
	s.Progress = bars.update
	in, err := f.inputs(cmd, figs)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	last := time.Now()
	_, err = reproduce.Run(cmd.Context(), figs, s, in, f.out, func(fig *reproduce.Figure) {
		bars.finish()
		_ = fig.WriteText(out)
		fmt.Fprintf(out, "(%s: %.1f s)\n\n", fig.ID, time.Since(last).Seconds())
		last = time.Now()
	})
	bars.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Wrote %s (plots and data under %s/) in %.1f s\n", filepath.Join(f.out, reproduce.ManifestName), filepath.Join(f.out, "<figure>"),
		time.Since(start).Seconds())
	return nil
}

// check parses the figure arguments and checks the flags and outputs before any work.
func (f *reproduceFlags) check(args []string) ([]string, error) {
	for _, a := range args {
		if name := strings.ToLower(strings.TrimSpace(a)); name != "all" && !slices.Contains(reproduce.Figures, name) {
			return nil, unknownName("figure", "figure", a, append(slices.Clone(reproduce.Figures), "all"), "tetris-hil reproduce --list")
		}
	}
	figs, err := reproduce.Check(args)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if err := f.checkOutputs(figs); err != nil {
		return nil, err
	}
	if f.jobs < 0 {
		return nil, usagef("--jobs %d: want 0 (every core) or a positive count", f.jobs)
	}
	switch f.progress {
	case "auto", "on", "off":
	default:
		return nil, usagef("--progress %q: want auto, on or off", f.progress)
	}
	return figs, nil
}

// figureBars draws one progress bar per figure (and per fabric size of Figure 9), cleared
// before the figure's table prints.
type figureBars struct {
	w       io.Writer
	mode    string
	bar     func(done, total int)
	end     func()
	current string
}

func (b *figureBars) update(what string, done, total int) {
	if what != b.current {
		b.finish()
		b.current = what
		b.bar, b.end = newProgress(b.w, b.mode, what, total)
	}
	if b.bar != nil {
		b.bar(done, total)
	}
}

func (b *figureBars) finish() {
	if b.end != nil {
		b.end()
	}
	b.bar, b.end, b.current = nil, nil, ""
}

// inputs loads what the figures need: the trace (Figures 6, 7, 8, 10), a measured table or a
// calibration (Figure 10), the calibration (Figure 13; a fake one made here without
// --calibration), and the inputs' provenance.
func (f *reproduceFlags) inputs(cmd *cobra.Command, figs []string) (reproduce.Inputs, error) {
	in := reproduce.Inputs{Tool: provenance.Tool()}
	needs := func(ids ...string) bool {
		return slices.ContainsFunc(figs, func(x string) bool { return slices.Contains(ids, x) })
	}
	demandPath := ""
	if f.demand.path != "" && !needs("fig6", "fig7", "fig8", "fig10") {
		logger.Warn().Str("demand", f.demand.path).Msg("--demand is not used: Figures 9 and 13 run on the generator and the calibration")
	}
	if needs("fig6", "fig7", "fig8", "fig10") {
		named, err := f.demand.load(cmd.Context())
		if err != nil {
			return in, err
		}
		for _, nd := range named {
			in.Trace = append(in.Trace, nd.matrix())
		}
		in.TraceName, demandPath = f.demand.path, f.demand.path
		if demandPath == "" {
			in.TraceName = trace.DefaultName
		}
	}
	measuredPath := ""
	if f.measured != "" && needs("fig10") {
		measuredPath = f.measured
		var err error
		if in.Measured, err = emulator.LoadMeasuredTable(f.measured); err != nil {
			return in, usagef("--measured %q: %v", f.measured, err)
		}
		in.MeasuredName = f.measured
	}
	calPath := ""
	if needs("fig13") || (needs("fig10") && in.Measured == nil) {
		var err error
		if calPath, err = f.loadCalibration(cmd, &in); err != nil {
			return in, err
		}
	}
	var err error
	if in.Files, err = describeInputs([2]string{"demand", demandPath}, [2]string{"calibration", calPath}, [2]string{"measured", measuredPath}); err != nil {
		return in, err
	}
	if demandPath == "" && len(in.Trace) == 0 {
		in.Files = slices.DeleteFunc(in.Files, func(i provenance.Input) bool { return i.Role == "demand" })
	}
	return in, nil
}

// loadCalibration loads --calibration into in, or makes a fake one in --out when none is given
// (saying so), and returns the file's path.
func (f *reproduceFlags) loadCalibration(cmd *cobra.Command, in *reproduce.Inputs) (string, error) {
	calPath := f.calibration
	if calPath == "" {
		calPath = filepath.Join(f.out, fakeCalibrationName)
		// Enough fake GPUs for every port of the demand (port i is GPU i), 8 at least.
		gpus := 8
		for _, m := range in.Trace {
			gpus = max(gpus, m.Demand.N())
		}
		if err := makeFakeCalibration(cmd, calPath, gpus); err != nil {
			return "", fmt.Errorf("making the fake calibration: %w", err)
		}
		in.CalibrationName = "a fake calibration made by this run (calibrate --fake, " + calPath + ")"
		fmt.Fprintf(cmd.OutOrStdout(), "No --calibration: Figures 10 and 13 use a fake calibration (fake GPUs and calibrate --fake's α-β model with seeded noise, not a measurement), written to %s\n\n", calPath)
	} else {
		in.CalibrationName = calPath
	}
	var err error
	if in.Calibration, err = model.Load(calPath); err != nil {
		return "", usagef("--calibration %q: %v", calPath, err)
	}
	return calPath, nil
}

// checkOutputs checks --out and what will be written in it before any work.
func (f *reproduceFlags) checkOutputs(figs []string) error {
	if f.out == "" {
		return usagef("--out: an output directory is required")
	}
	if err := checkOutDir(f.out); err != nil {
		return usagef("--out %q: %v", f.out, err)
	}
	if _, err := os.Stat(f.out); err != nil {
		return nil // created by the run: nothing in it to be in the way
	}
	files, dirs := reproduce.OutputPaths(f.out, figs)
	if f.calibration == "" {
		files = append(files, filepath.Join(f.out, fakeCalibrationName))
	}
	for _, p := range files {
		if err := safefile.Check(p); err != nil {
			return usagef("--out %q: %v", f.out, err)
		}
	}
	for _, d := range dirs {
		if err := checkOutDir(d); err != nil {
			return usagef("--out %q: %v", f.out, err)
		}
	}
	return nil
}

// makeFakeCalibration runs `calibrate --fake --fake-gpus gpus -o path` in process: the same fake GPUs, workers,
// measurement and fit as that command, so that Figures 10 and 13 run without hardware.
func makeFakeCalibration(cmd *cobra.Command, path string, gpus int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	c := newCalibrateCmd()
	// Two sizes per doubling (4 KiB to 1 GiB) are plenty for a fit and halve the steps.
	c.SetArgs([]string{"--fake", "--fake-gpus", strconv.Itoa(gpus), "--progress", "off", "--overwrite", "--per-octave", "2", "-o", path})
	c.SetOut(io.Discard)
	c.SetErr(cmd.ErrOrStderr())
	c.SilenceUsage, c.SilenceErrors = true, true
	return c.ExecuteContext(cmd.Context())
}
