package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// WriteCSV writes one row per (bandwidth, α_r, algorithm), in grid order: the human-readable
// bandwidth and delay, their exact values, the completion sum over all matrices, the lower-bound
// sum, the ratio to the reference algorithm, the ratio to the lower bound, and the switch state
// changes over the matrices (switch wear, Tetris §5): in total, and of the most-changed switch
// (empty where the results were read from files that did not record them), and in a
// multi-tenant sweep each tenant's completion sum (tenant_0-3_completion_sum_seconds; the
// algorithm column is then algorithm@allocation). Numbers are written
// in the shortest form that reads back to the same float64.
func (r *Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := []string{"bandwidth", "bandwidth_bytes_per_second", "reconfig", "reconfig_seconds",
		"algorithm", "matrices", "completion_sum_seconds", "lower_bound_sum_seconds",
		"ratio_vs_" + r.Reference, "completion_over_lower_bound", "state_changes", "state_changes_max"}
	for _, t := range r.Tenants {
		header = append(header, "tenant_"+t+"_completion_sum_seconds")
	}
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("writing sweep CSV: %w", err)
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, row := range r.Cells {
		for _, c := range row {
			for _, a := range c.Algorithms {
				overLB := ""
				if c.LowerBound > 0 {
					overLB = g(emulator.BoundRatio(a.Completion, c.LowerBound))
				}
				changes, most := "", ""
				if a.HasStateChanges {
					changes, most = strconv.Itoa(a.StateChanges), strconv.Itoa(a.StateChangesMax)
				}
				rec := []string{units.FormatBandwidth(c.Bandwidth), g(c.Bandwidth),
					units.FormatSeconds(c.Reconfig), g(c.Reconfig), a.Algorithm,
					strconv.Itoa(r.Matrices), g(a.Completion), g(c.LowerBound), g(a.Ratio), overLB, changes, most}
				for _, t := range a.Tenants {
					rec = append(rec, g(t))
				}
				if err := cw.Write(rec); err != nil {
					return fmt.Errorf("writing sweep CSV: %w", err)
				}
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing sweep CSV: %w", err)
	}
	return nil
}
