package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

func init() { subcommands = append(subcommands, newParetoCmd) }

type paretoFlags struct {
	src                 demandSource
	bandwidth, reconfig string
	weights, algo       string
	balance             bool
	svg, jsonOut        string
	progress            string
}

func newParetoCmd() *cobra.Command {
	var f paretoFlags
	cmd := &cobra.Command{
		Use:   "pareto [--demand FILE] [--weights 0,1,4,16] [--reconfig 10ns,10us,1ms]",
		Short: "Switch wear against completion: Tetris over a range of wear weights, every baseline as a point",
		Long: `pareto runs one pass of demand (every selected matrix) at each α_r with Tetris at every wear
weight of --weights (0 is Tetris as published; see emulate --wear-weight) and with every
baseline of --algo once, and prints per run the pass's completion over its lower bound against
its switch state changes: in total and on the most-changed switch (Tetris §5 names both
objectives: completion time, and how often switches change state, which wears MEMS switches).
Reconfiguration executes under the parallel model at each α_r.

--svg PREFIX draws, per α_r, PREFIX-<α_r>-total.svg and PREFIX-<α_r>-max.svg: the weights as a
line, the baselines as points.`,
		Example: `  tetris-hil pareto --layer 0 --weights 0,1,4 --reconfig 10us --algo bvn,maxweight
  tetris-hil pareto --weights 0,0.25,1,4,16 --reconfig 10ns,10us,1ms --svg wear --json wear.json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runPareto(cmd, &f) },
	}
	fs := cmd.Flags()
	f.src.register(fs)
	fs.StringVar(&f.bandwidth, "bandwidth", "800Gbps", "per-port link bandwidth, with a unit")
	fs.StringVar(&f.reconfig, "reconfig", "10ns,10us,1ms", "α_r values, comma-separated, with units")
	fs.StringVar(&f.weights, "weights", "0,0.25,1,4,16", "Tetris wear weights, comma-separated (mean transfer times charged per switch change)")
	fs.StringVar(&f.algo, "algo", "all", "baselines to set beside Tetris: a comma-separated list, or all (tetris-wear is the line; all leaves out snb, whose changes are a crossbar's re-pointings)")
	fs.BoolVar(&f.balance, "wear-balance", false, "Tetris: scale each switch's charge by its changes so far (see emulate --wear-balance)")
	fs.StringVar(&f.svg, "svg", "", "draw the figures to PREFIX-<α_r>-total.svg and PREFIX-<α_r>-max.svg")
	fs.StringVar(&f.jsonOut, "json", "", "write the points as JSON to this file (- for standard output, instead of the table)")
	fs.StringVar(&f.progress, "progress", "auto", "progress bar on standard error: auto (only on a terminal), on, off")
	return cmd
}

func runPareto(cmd *cobra.Command, f *paretoFlags) error {
	if err := checkProgress(f.progress); err != nil {
		return err
	}
	b, err := units.ParseBandwidth(f.bandwidth)
	if err != nil {
		return usagef("--bandwidth %q: %v", f.bandwidth, err)
	}
	alphas, err := parseList("reconfig", f.reconfig, units.ParseDuration)
	if err != nil {
		return err
	}
	weights, err := parseList("weights", f.weights, func(s string) (float64, error) {
		w, err := strconv.ParseFloat(s, 64)
		if err == nil && !(w >= 0 && w < 1e300) {
			err = fmt.Errorf("want a non-negative, finite weight")
		}
		return w, err
	})
	if err != nil {
		return err
	}
	algos, err := lookupAlgos(f.algo)
	if err != nil {
		return err
	}
	var base []string
	for _, a := range algos {
		// tetris-wear is the line; snb's changes are a crossbar's transmitter re-pointings, not
		// switch changes, so "all" leaves it out (naming it adds it).
		if a != "tetris-wear" && (a != "snb" || f.algo != "all") {
			base = append(base, a)
		}
	}
	for _, a := range alphas {
		for _, kind := range []string{"total", "max"} {
			if name := f.svgName(a, kind); name != "" {
				if err := safefile.Check(name); err != nil {
					return usagef("--svg %q: %v", name, err)
				}
			}
		}
	}
	if f.jsonOut != "" && f.jsonOut != "-" {
		if err := safefile.Check(f.jsonOut); err != nil {
			return usagef("--json %q: %v", f.jsonOut, err)
		}
	}
	ds, err := f.src.load(cmd.Context())
	if err != nil {
		return err
	}
	spec := experiment.ParetoSpec{Reconfig: alphas, Weights: weights}
	for _, nd := range ds {
		spec.Matrices = append(spec.Matrices, nd.matrix())
	}
	spec.Base.Algorithms = base
	spec.Base.Options.Bandwidth, spec.Base.Options.WearBalance = b, f.balance
	spec.Base.Exec = emulator.Config{Transfer: emulator.BandwidthModel(b), Reconfig: emulator.ParallelReconfig(0)}
	pool := experiment.Pool{}
	var finish func()
	pool.Progress, finish = newProgress(cmd.ErrOrStderr(), f.progress, "pareto", len(ds)*len(alphas)*(len(weights)+len(base)))
	pts, err := experiment.Pareto(cmd.Context(), spec, pool)
	finish()
	if err != nil {
		return err
	}
	table := cmd.OutOrStdout()
	if f.jsonOut == "-" {
		table = io.Discard // standard output carries the JSON instead
	}
	fmt.Fprintf(table, "%d matrices of %s at %s\n", len(ds), f.sourceName(), units.FormatBandwidth(b))
	if err := experiment.WriteParetoTable(table, pts); err != nil {
		return err
	}
	return f.write(cmd.OutOrStdout(), pts, alphas)
}

func (f *paretoFlags) sourceName() string {
	if f.src.path == "" {
		return "the built-in trace"
	}
	return f.src.path
}

// write draws the figures and writes the JSON the flags ask for.
func (f *paretoFlags) write(stdout io.Writer, pts []experiment.ParetoPoint, alphas []float64) error {
	if f.svg != "" {
		for _, a := range alphas {
			for _, kind := range []string{"total", "max"} {
				var buf bytes.Buffer
				if err := experiment.ParetoPlot(&buf, "svg", pts, a, kind == "max"); err != nil {
					return err
				}
				name := f.svgName(a, kind)
				if err := safefile.WriteFile(name, buf.Bytes()); err != nil {
					return fmt.Errorf("--svg %s: %w", name, err)
				}
			}
		}
	}
	if f.jsonOut != "" {
		if err := writeJSONTo(stdout, f.jsonOut, map[string]any{"version": 1, "points": pts}); err != nil {
			return fmt.Errorf("--json %s: %w", f.jsonOut, err)
		}
	}
	return nil
}

// svgName is the figure file of α_r a ("total" or "max"), empty without --svg.
func (f *paretoFlags) svgName(a float64, kind string) string {
	if f.svg == "" {
		return ""
	}
	return fmt.Sprintf("%s-%s-%s.svg", f.svg, strings.ReplaceAll(units.FormatSeconds(a), "µ", "u"), kind)
}
