package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/emulator/report"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

func init() { subcommands = append(subcommands, newDemoCmd) }

type demoFlags struct {
	out      string
	progress string
}

func newDemoCmd() *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "The whole pipeline on fake GPUs and the built-in trace, in under a minute",
		Long: `demo runs, without any hardware, what a lab does with tetris-hil, as the commands a user would
type (each is printed before it runs, so any step can be rerun alone):

  1. calibrate 8 fake GPUs (a DGX H200 whose links run at 100 GB/s = 800 Gbps, α ≈ 3 µs) with a
     short plan, and plot the α-β fits (Tetris §4.1–4.2: the hardware emulation's cost model);
  2. schedule every layer and phase of the built-in Mixtral-8x7B trace with Tetris and every
     baseline, and emulate each schedule on the 8-port Beneš fabric with the calibration's
     transfer times at α_r = 10 µs (Tetris §4.1);
  3. chart Tetris and the best baseline on the matrix that takes Tetris longest (Gantt charts);
  4. sweep bandwidth × α_r for Tetris against BvN and Sunflow (Tetris Figures 8 and 10);
  5. write report.html, one self-contained page of all of it (tetris-hil report).

It prints one row per algorithm (sums over the trace's 30 matrices), the sweep's tables, and where
every file went: --out DIR, or a fresh directory under the system's temporary directory.`,
		Example: `  tetris-hil demo
  tetris-hil demo --out demo-run && xdg-open demo-run/report.html`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, &f) },
	}
	cmd.Flags().StringVar(&f.out, "out", "", "directory for every file (default: a fresh tetris-hil-demo-* directory in the temporary directory)")
	cmd.Flags().StringVar(&f.progress, "progress", "auto", "progress bars on standard error: auto (only on a terminal), on, off")
	return cmd
}

// demoStep is one command of the demo, as a user would type it.
type demoStep struct {
	what string
	args []string
	// stdout is the file (in the output directory) that keeps the command's standard output;
	// show says whether it is also printed.
	stdout string
	show   bool
}

func runDemo(cmd *cobra.Command, f *demoFlags) error {
	if err := checkProgress(f.progress); err != nil {
		return err
	}
	dir, err := makeDemoDir(cmd, f.out)
	if err != nil {
		return err
	}
	if f.out != "" {
		lock, err := claimOutDir(cmd, "out", dir)
		if err != nil {
			return err
		}
		defer lock.Release()
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "tetris-hil demo: fake GPUs, the built-in Mixtral-8x7B trace; every file goes to %s\n\n", dir)
	p := func(name string) string { return filepath.Join(dir, name) }
	// --overwrite: the fake calibration takes seconds, so a demo stopped halfway starts afresh.
	calArgs := []string{"calibrate", "--fake", "--fake-bandwidth", "100GB/s", "--sizes", "64KiB..64MiB", "--per-octave", "1",
		"--reps", "5", "--warmup", "1", "--pattern", "isolated", "--progress", f.progress, "--overwrite", "-o", p("calibration.json")}
	first := []demoStep{
		{what: "calibrate 8 fake GPUs (a short plan: every ordered pair, 64KiB to 64MiB, one size per doubling)", args: calArgs, stdout: "calibrate.txt"},
		{what: "plot the α-β fits", args: []string{"calibrate", "show", p("calibration.json"), "--plot", p("calibration.png")}, stdout: "calibration.txt"},
		{what: "schedule and emulate every matrix with every algorithm, calibrated transfers, α_r = 10µs",
			args:   []string{"emulate", "--calibration", p("calibration.json"), "--reconfig", "10us", "--json", p("emulate.json"), "--progress", f.progress},
			stdout: "emulate.txt"},
	}
	if err := runDemoSteps(cmd, first, dir); err != nil {
		return err
	}
	sum, err := report.ReadEmulate(p("emulate.json"))
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintln(w)
	if err := writeDemoTotals(w, sum); err != nil {
		return err
	}
	worst, best := sum.WorstMatrix(), sum.BestBaseline()
	fmt.Fprintf(w, "\nworst matrix for Tetris: %d (%s); best baseline over the trace: %s\n\n", worst.Index, worst.Label, best)
	rest := []demoStep{
		{what: fmt.Sprintf("Gantt charts of tetris and %s on matrix %d", best, worst.Index),
			args: []string{"emulate", "--calibration", p("calibration.json"), "--reconfig", "10us", "--matrix", fmt.Sprint(worst.Index),
				"--algo", "tetris," + best, "--gantt", p("gantt.svg"), "--progress", "off"},
			stdout: "gantt.txt"},
		{what: "sweep bandwidth × α_r (bandwidth model, as Tetris Figure 8)",
			args: []string{"sweep", "--bandwidth", "100Gbps,400Gbps,800Gbps", "--reconfig", "1us,10us,100us",
				"--algo", "tetris,bvn,sunflow", "--out", p("sweep"), "--progress", f.progress},
			stdout: "sweep.txt", show: true},
	}
	if err := runDemoSteps(cmd, rest, dir); err != nil {
		return err
	}
	if err := writeDemoCommands(dir, first, rest); err != nil {
		return err
	}
	if err := runDemoStep(cmd, demoStep{what: "write the report", args: []string{"report", dir, "-o", p("report.html")}, stdout: "report.txt", show: true}, dir); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfiles in %s:\n", dir)
	fmt.Fprintln(w, "  report.html          everything below on one page (open it in a browser)")
	fmt.Fprintln(w, "  calibration.json     the α-β fits of the 56 pairs (emulate --calibration reads it); calibration.png plots them")
	fmt.Fprintln(w, "  emulate.json         every run: inputs with hashes, models, completion, bounds (emulate.txt: the full table)")
	fmt.Fprintf(w, "  %-20s Gantt charts of tetris and %s on the worst matrix\n", fmt.Sprintf("gantt-m%d-*.svg", worst.Index), best)
	fmt.Fprintln(w, "  sweep/               the bandwidth × α_r grid: sweep.csv, sweep.json, heatmaps, completion/lower-bound plot")
	return nil
}

// makeDemoDir makes the demo's directory: --out (checked, created if missing), or a fresh one.
func makeDemoDir(cmd *cobra.Command, out string) (string, error) {
	if out == "" {
		d, err := os.MkdirTemp("", "tetris-hil-demo-")
		if err != nil {
			return "", fmt.Errorf("demo: creating its directory: %w", err)
		}
		return d, nil
	}
	if err := checkOutDir(out); err != nil {
		return "", usagef("--out %q: %v", out, err)
	}
	return out, nil // claimOutDir creates it
}

func runDemoSteps(cmd *cobra.Command, steps []demoStep, dir string) error {
	for _, s := range steps {
		if err := runDemoStep(cmd, s, dir); err != nil {
			return err
		}
	}
	return nil
}

// writeDemoCommands writes commands.json: what reproduces each file, for the report's captions.
func writeDemoCommands(dir string, first, rest []demoStep) error {
	commands := map[string]string{}
	calibrated := "tetris-hil " + shellJoin(first[0].args) + " && tetris-hil " + shellJoin(first[1].args)
	matches, _ := filepath.Glob(filepath.Join(dir, "*"))
	sweepFiles, _ := filepath.Glob(filepath.Join(dir, "sweep", "*"))
	for _, m := range append(matches, sweepFiles...) {
		rel, _ := filepath.Rel(dir, m)
		switch {
		case strings.HasPrefix(rel, "calibration."):
			commands[rel] = calibrated
		case strings.HasPrefix(rel, "gantt-"):
			commands[rel] = "tetris-hil " + shellJoin(rest[0].args)
		case strings.HasPrefix(rel, "sweep"+string(filepath.Separator)):
			commands[rel] = "tetris-hil " + shellJoin(rest[1].args)
		}
	}
	if err := safefile.WriteJSON(filepath.Join(dir, "commands.json"), commands); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// runDemoStep prints the command and runs it in this process, as the CLI would, keeping its
// standard output in the step's file (and printing it where the step says so).
func runDemoStep(cmd *cobra.Command, s demoStep, dir string) error {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "== %s\n   $ tetris-hil %s\n", s.what, shellJoin(s.args))
	out, err := os.Create(filepath.Join(dir, s.stdout))
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer out.Close()
	var sink io.Writer = out
	if s.show {
		sink = io.MultiWriter(out, w)
	}
	root := newRootCmd()
	root.SetOut(sink)
	root.SetErr(cmd.ErrOrStderr())
	args := []string{"--log-level", flagValue(cmd, "log-level"), "--log-format", flagValue(cmd, "log-format")}
	root.SetArgs(append(args, s.args...))
	if err := root.ExecuteContext(cmd.Context()); err != nil {
		return fmt.Errorf("demo step %q (tetris-hil %s): %w", s.what, shellJoin(s.args), err)
	}
	return out.Close()
}

func flagValue(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return cmd.Root().PersistentFlags().Lookup(name).Value.String()
}

// shellJoin quotes the arguments that a shell would split or expand.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\*?;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// writeDemoTotals prints one row per algorithm: the trace's sums.
func writeDemoTotals(w io.Writer, s *report.Emulate) error {
	fmt.Fprintf(w, "%d matrices · %s · %s · bounds at %s\n", s.Matrices(), s.TransferModel, s.ReconfigModel, units.FormatBandwidth(s.Bandwidth))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ALGORITHM\tCOMPLETION (ms)\t/BW BOUND\t/RECONF BOUND\tTETRIS SPEEDUP\t")
	for _, t := range s.Totals {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t\n", t.Algorithm, t.CompletionSeconds*1e3,
			t.CompletionSeconds/t.BandwidthBoundSeconds, t.CompletionSeconds/t.ReconfigBoundSeconds, t.Speedup)
	}
	return tw.Flush()
}
