package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/plot"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// ParetoPoint is one scheduler (or Tetris at one wear weight) on a whole pass at one α_r: its
// completion over the lower bound against its switch state changes, in total and on the
// most-changed switch (Tetris §5's switch-wear objective against completion time).
type ParetoPoint struct {
	Reconfig  float64 `json:"reconfig_seconds"`
	Algorithm string  `json:"algorithm"`
	// Weight is the wear weight Tetris planned with; −1 for a baseline (which has none).
	Weight     float64 `json:"wear_weight"`
	Completion float64 `json:"completion_seconds"`
	LowerBound float64 `json:"lower_bound_seconds"`
	Ratio      float64 `json:"ratio_lower_bound"`
	Changes    int     `json:"state_changes"`
	MaxChanges int     `json:"state_changes_max"`
}

// ParetoSpec is what Pareto runs: the matrices of one pass, the base Config (models, options;
// its Algorithms are the baselines), the α_r values (each both planned and executed with), and
// the wear weights Tetris runs at (0 is Tetris as published). Reconfiguration executes under the
// parallel model (α_r per change, all concurrent: the paper's) at each α_r; Base.Exec gives the
// transfer model, which the bounds follow.
type ParetoSpec struct {
	Matrices []Matrix
	Base     Config
	Reconfig []float64
	Weights  []float64
}

// Pareto runs the spec on one pool: per α_r, Tetris at every weight and every baseline once,
// each summed over the pass. Points come α_r by α_r, Tetris's weights first, then the baselines
// in Base.Algorithms order ("tetris" among them is skipped: it is weight 0).
func Pareto(ctx context.Context, spec ParetoSpec, pool Pool) ([]ParetoPoint, error) {
	var cfgs []Config
	type which struct {
		alpha, weight float64
	}
	var tags []which
	for _, a := range spec.Reconfig {
		for _, w := range spec.Weights {
			c := spec.Base
			c.Algorithms = []string{"tetris"}
			c.Options.Reconfig, c.Options.WearWeight = a, w
			c.Exec.Reconfig = emulator.ParallelReconfig(a)
			cfgs, tags = append(cfgs, c), append(tags, which{a, w})
		}
		var base []string
		for _, name := range spec.Base.Algorithms {
			if name != "tetris" {
				base = append(base, name)
			}
		}
		if len(base) > 0 {
			c := spec.Base
			c.Algorithms = base
			c.Options.Reconfig, c.Options.WearWeight = a, 0
			c.Exec.Reconfig = emulator.ParallelReconfig(a)
			cfgs, tags = append(cfgs, c), append(tags, which{a, -1})
		}
	}
	outs, err := RunMany(ctx, spec.Matrices, cfgs, pool)
	if err != nil {
		return nil, err
	}
	var pts []ParetoPoint
	for k, o := range outs {
		wear := o.Wear()
		for i, t := range o.Totals {
			p := ParetoPoint{Reconfig: tags[k].alpha, Algorithm: t.Algorithm, Weight: tags[k].weight,
				Completion: t.CompletionSeconds, LowerBound: t.LowerBoundSeconds,
				Changes: wear[i].Total, MaxChanges: wear[i].Most.Count}
			if p.LowerBound > 0 {
				p.Ratio = p.Completion / p.LowerBound
			}
			pts = append(pts, p)
		}
	}
	return pts, nil
}

// WriteParetoTable prints the points as an aligned table: α_r, the algorithm (Tetris with its
// weight), completion over the lower bound, and the total and most-changed switch's changes.
func WriteParetoTable(w io.Writer, pts []ParetoPoint) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "α_r\tALGORITHM\tWEAR WEIGHT\tCOMPLETION/BOUND\tSTATE CHANGES\tMOST ON ONE SWITCH\t")
	for _, p := range pts {
		weight := "-"
		if p.Weight >= 0 {
			weight = strconv.FormatFloat(p.Weight, 'g', -1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.5f\t%d\t%d\t\n", units.FormatSeconds(p.Reconfig), p.Algorithm, weight, p.Ratio, p.Changes, p.MaxChanges)
	}
	return tw.Flush()
}

// ParetoPlot draws the points of one α_r: completion over the lower bound against total state
// changes (maxPerSwitch false) or the most-changed switch's, Tetris's weights as one line and
// every baseline as a point.
func ParetoPlot(w io.Writer, format string, pts []ParetoPoint, alpha float64, maxPerSwitch bool) error {
	x := func(p ParetoPoint) float64 {
		if maxPerSwitch {
			return float64(p.MaxChanges)
		}
		return float64(p.Changes)
	}
	curve := plot.Line{Name: "tetris, wear weight 0 …"}
	var points []plot.Line
	for _, p := range pts {
		if p.Reconfig != alpha || math.IsNaN(p.Ratio) {
			continue
		}
		if p.Weight >= 0 {
			curve.X, curve.Y = append(curve.X, x(p)), append(curve.Y, p.Ratio)
			continue
		}
		points = append(points, plot.Line{Name: p.Algorithm, X: []float64{x(p)}, Y: []float64{p.Ratio}})
	}
	xl := "switch state changes over the pass"
	if maxPerSwitch {
		xl = "state changes of the most-changed switch over the pass"
	}
	return plot.LinePlot(w, format, plot.Lines{
		Title:  "switch wear against completion, α_r = " + units.FormatSeconds(alpha),
		XLabel: xl, YLabel: "completion / lower bound",
		Series: append([]plot.Line{curve}, points...),
	})
}
