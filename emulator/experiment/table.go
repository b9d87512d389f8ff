package experiment

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// WriteTable prints the outcome as an aligned table: per matrix and algorithm the completion,
// its ratios to the bandwidth and the reconfiguration-aware lower bounds, the speedup over the
// reference (headed TETRIS SPEEDUP, its usual reference), the rounds or planning groups and the
// switch state changes; over several matrices, a total row per algorithm.
func (out *Outcome) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MATRIX\tALGORITHM\tCOMPLETION\t/BW BOUND\t/RECONF BOUND\tTETRIS SPEEDUP\tGROUPS\tSTATE CHANGES\t")
	for _, r := range out.Records {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t\n", matrixLabel(r.Matrix), r.Algorithm, units.FormatSeconds(r.CompletionSeconds),
			ratio(r.Result.RatioBandwidth), ratio(r.Result.RatioReconfig), ratio(r.Speedup), r.Result.Groups, r.Result.StateChanges)
	}
	if out.Matrices() > 1 {
		for _, t := range out.Totals {
			fmt.Fprintf(tw, "total (%d)\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t\n", t.Matrices, t.Algorithm, units.FormatSeconds(t.CompletionSeconds),
				ratio(safeDiv(t.CompletionSeconds, t.BandwidthBoundSeconds)), ratio(safeDiv(t.CompletionSeconds, t.ReconfigBoundSeconds)),
				ratio(t.Speedup), t.Groups, t.StateChanges)
		}
	}
	return tw.Flush()
}

// matrixLabel is a matrix's table cell: its index, and its layer, phase and dataset where known.
func matrixLabel(m emulator.MatrixRef) string {
	if m.Index < 0 {
		return "-"
	}
	s := strconv.Itoa(m.Index)
	if m.Layer >= 0 {
		s += fmt.Sprintf(" (L%d %s", m.Layer, m.Phase)
		if m.Dataset != "" {
			s += " " + m.Dataset
		}
		s += ")"
	}
	return s
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
