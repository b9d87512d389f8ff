package experiment

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// WriteTable prints the outcome as an aligned table: per matrix and algorithm the completion
// (one time unit for the whole column, named in its heading), its ratios to the bandwidth and
// the reconfiguration-aware lower bounds, the speedup over the reference (headed
// TETRIS_SPEEDUP, its usual reference), the rounds (barrier mode) or planning groups (partial
// mode) and the switch state changes; over several matrices, a total row per algorithm. An
// algorithm run under ablations names them in its VARIANT cell ("--no-partial,--naive-routing").
// Every heading and cell is one whitespace-free token ("-" for none), so that awk '{print $N}'
// reads column N on every row, totals included.
func (out *Outcome) WriteTable(w io.Writer) error {
	var all []float64
	mode := map[string]schedules.Mode{}
	variant := map[string]string{}
	for _, r := range out.Records {
		all = append(all, r.CompletionSeconds)
		if _, ok := mode[r.Algorithm]; !ok {
			mode[r.Algorithm] = r.Mode
			variant[r.Algorithm] = variantCell(r.Variant)
		}
	}
	many := out.Matrices() > 1
	if many {
		for _, t := range out.Totals {
			all = append(all, t.CompletionSeconds)
		}
	}
	col := units.SecondsColumn(all)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "MATRIX\tLABEL\tALGORITHM\tVARIANT\tCOMPLETION(%s)\t/BW_BOUND\t/RECONF_BOUND\tTETRIS_SPEEDUP\tSTEPS\tKIND\tSTATE_CHANGES\t\n", col.Unit)
	for _, r := range out.Records {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t\n", matrixIndex(r.Matrix), matrixLabel(r.Matrix),
			cell(r.Algorithm), variant[r.Algorithm], col.Format(r.CompletionSeconds), ratio(r.Result.RatioBandwidth),
			ratio(r.Result.RatioReconfig), ratio(r.Speedup), r.Result.Groups, stepKind(r.Mode), r.Result.StateChanges)
	}
	if many {
		for _, t := range out.Totals {
			fmt.Fprintf(tw, "total\t%d-matrices\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t\n", t.Matrices, cell(t.Algorithm),
				variant[t.Algorithm], col.Format(t.CompletionSeconds), ratio(safeDiv(t.CompletionSeconds, t.BandwidthBoundSeconds)),
				ratio(safeDiv(t.CompletionSeconds, t.ReconfigBoundSeconds)), ratio(t.Speedup), t.Groups, stepKind(mode[t.Algorithm]),
				t.StateChanges)
		}
	}
	return tw.Flush()
}

// Variant names the ablations of opts that apply to algorithm name, as the CLI flags read
// ("--no-partial --naive-routing"); empty when it ran as published.
func Variant(name string, opts schedules.Options) string {
	var v []string
	if strings.HasPrefix(name, "tetris") || name == "snb" { // snb is the Tetris planner on a crossbar
		if opts.NoPartial {
			v = append(v, "--no-partial")
		}
		if opts.NaiveRouting {
			v = append(v, "--naive-routing")
		}
		if opts.NoDegreeCoverage {
			v = append(v, "--no-degree-coverage")
		}
		if opts.WearWeight > 0 && name != "snb" {
			v = append(v, "--wear-weight "+strconv.FormatFloat(opts.WearWeight, 'g', -1, 64))
		}
		if opts.WearBalance && name != "snb" {
			v = append(v, "--wear-balance")
		}
	}
	if name == "sunflow" && opts.SunflowBySize {
		v = append(v, "--sunflow-by-size")
	}
	if (name == "sunflow" || name == "bff") && opts.RNBMapping != "" && opts.RNBMapping != "earliest" {
		v = append(v, "--rnb-mapping "+opts.RNBMapping)
	}
	return strings.Join(v, " ")
}

// Describe is the line a table of cfg's runs opens with: what was run on what, under which
// models, so that a pasted table says how it was made.
func Describe(source string, matrices int, cfg Config) string {
	parts := []string{fmt.Sprintf("%s (%d matrices)", source, matrices)}
	if matrices == 1 {
		parts[0] = source + " (1 matrix)"
	}
	parts = append(parts, "bandwidth "+units.FormatBandwidth(cfg.Options.Bandwidth),
		"α_r "+units.FormatSeconds(cfg.Options.Reconfig))
	fabric := string(cfg.Options.Fabric)
	if fabric == "" {
		fabric = string(schedules.Benes)
	}
	parts = append(parts, "fabric "+fabric)
	if cfg.Exec.Transfer != nil {
		parts = append(parts, "transfer "+cfg.Exec.Transfer.Name())
	}
	if cfg.Exec.Reconfig != nil {
		parts = append(parts, "reconfiguration "+cfg.Exec.Reconfig.Name())
	}
	return strings.Join(parts, " · ")
}

// stepKind names what the STEPS column counts: barrier schedules execute in rounds, partial
// ones in planning groups (matchings whose circuits start independently).
func stepKind(m schedules.Mode) string {
	if m == schedules.Barrier {
		return "rounds"
	}
	return "groups"
}

// variantCell is the VARIANT cell of Variant's flags: joined by commas, a flag's value after
// "=" as the CLI also reads it ("--no-partial,--wear-weight=4"); "-" when run as published.
func variantCell(v string) string {
	var flags []string
	for _, f := range strings.Fields(v) {
		if n := len(flags); n > 0 && !strings.HasPrefix(f, "-") {
			flags[n-1] += "=" + f
			continue
		}
		flags = append(flags, f)
	}
	return cell(strings.Join(flags, ","))
}

// cell makes s one whitespace-free table cell: "-" when empty, runs of white space as "_".
func cell(s string) string {
	if s = strings.Join(strings.Fields(s), "_"); s == "" {
		return "-"
	}
	return s
}

// matrixIndex is a matrix's MATRIX cell, "-" for a matrix of no trace (a schedule file's).
func matrixIndex(m emulator.MatrixRef) string {
	if m.Index < 0 {
		return "-"
	}
	return strconv.Itoa(m.Index)
}

// matrixLabel is a matrix's LABEL cell: its layer, phase and dataset where known, joined by
// "-" ("L0-dispatch-arxiv"); "-" when the trace does not say.
func matrixLabel(m emulator.MatrixRef) string {
	if m.Index < 0 || m.Layer < 0 {
		return "-"
	}
	parts := []string{fmt.Sprintf("L%d", m.Layer)}
	for _, p := range []string{m.Phase, m.Dataset} {
		if p != "" {
			parts = append(parts, cell(p))
		}
	}
	return strings.Join(parts, "-")
}

// ratio formats a ratio with three decimals, "-" for none.
func ratio(x float64) string {
	if x == 0 {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
