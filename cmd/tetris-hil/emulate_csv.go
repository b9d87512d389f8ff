package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// emulateCSVHeader is emulate --csv's first row: one quantity per column, its unit in the
// heading and never in a cell, so that awk, pandas or a spreadsheet read the numbers as they are.
var emulateCSVHeader = []string{"matrix", "layer", "phase", "dataset", "algorithm", "variant", "matrices",
	"completion (s)", "bandwidth bound (s)", "reconfig bound (s)", "completion / bandwidth bound",
	"completion / reconfig bound", "speedup of the reference", "mode", "rounds or groups", "state changes"}

// writeEmulateCSV writes the runs (unless totalsOnly) and the per-algorithm totals as CSV; a
// total's matrix cell is "total".
func writeEmulateCSV(w io.Writer, out *experiment.Outcome, totalsOnly bool) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(emulateCSVHeader); err != nil {
		return err
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	mode := map[string]schedules.Mode{}
	variant := map[string]string{}
	for _, r := range out.Records {
		if _, ok := mode[r.Algorithm]; !ok {
			mode[r.Algorithm], variant[r.Algorithm] = r.Mode, r.Variant
		}
		if totalsOnly {
			continue
		}
		layer := ""
		if r.Matrix.Layer >= 0 {
			layer = strconv.Itoa(r.Matrix.Layer)
		}
		if err := cw.Write([]string{strconv.Itoa(r.Matrix.Index), layer, r.Matrix.Phase, r.Matrix.Dataset, r.Algorithm, r.Variant, "1",
			g(r.CompletionSeconds), g(r.BandwidthBoundSeconds), g(r.ReconfigBoundSeconds), g(r.Result.RatioBandwidth),
			g(r.Result.RatioReconfig), g(r.Speedup), string(r.Mode), strconv.Itoa(r.Result.Groups), strconv.Itoa(r.Result.StateChanges)}); err != nil {
			return err
		}
	}
	for _, t := range out.Totals {
		if err := cw.Write([]string{"total", "", "", "", t.Algorithm, variant[t.Algorithm], strconv.Itoa(t.Matrices),
			g(t.CompletionSeconds), g(t.BandwidthBoundSeconds), g(t.ReconfigBoundSeconds),
			g(safeRatio(t.CompletionSeconds, t.BandwidthBoundSeconds)), g(safeRatio(t.CompletionSeconds, t.ReconfigBoundSeconds)),
			g(t.Speedup), string(mode[t.Algorithm]), strconv.Itoa(t.Groups), strconv.Itoa(t.StateChanges)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeEmulateTotals is emulate --totals: one summary line per algorithm over every matrix
// (as nccl-tests ends), under a heading whose columns carry their units.
func writeEmulateTotals(w io.Writer, out *experiment.Outcome) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "ALGORITHM\tMATRICES\tCOMPLETION(ms)\t/BW_BOUND\t/RECONF_BOUND\tSPEEDUP_OVER_%s\tSTATE_CHANGES\t\n", out.Reference)
	for _, t := range out.Totals {
		fmt.Fprintf(tw, "%s\t%d\t%.4f\t%.3f\t%.3f\t%.3f\t%d\t\n", t.Algorithm, t.Matrices, t.CompletionSeconds*1e3,
			safeRatio(t.CompletionSeconds, t.BandwidthBoundSeconds), safeRatio(t.CompletionSeconds, t.ReconfigBoundSeconds),
			t.Speedup, t.StateChanges)
	}
	return tw.Flush()
}

func safeRatio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// writeJSONTo writes v as indented JSON (safefile.WriteJSON's bytes) to path, or to stdout for "-".
func writeJSONTo(stdout io.Writer, path string, v any) error {
	if path != "-" {
		return safefile.WriteJSON(path, v)
	}
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	_, err = stdout.Write(append(b, '\n'))
	return err
}

// writeCSVTo writes what write writes to path, or to stdout for "-".
func writeCSVTo(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(stdout)
	}
	return safefile.WriteStream(path, write)
}
