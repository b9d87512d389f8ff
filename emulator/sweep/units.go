package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// A unit is one matrix in one cell: every algorithm on it. Units are numbered cell-major (row,
// then column, then matrix), which is the order the CSV sums in; a shard is a contiguous range
// of them, so that an unsharded run and any sharding compute the same numbers.

// unitResult is what a unit contributes to the grid.
type unitResult struct {
	lowerBound  float64
	completions []float64 // by algorithm, in cfg.Algorithms order
}

// runUnits runs units [lo, hi) of the grid of cfg over demands (cfg already checked) and returns
// their results, indexed from lo. Consecutive cells that cover the same matrices go to one
// experiment.RunMany call (an unsharded run is a single call; a shard at most three), each on
// the one pool of cfg.Jobs workers.
func runUnits(ctx context.Context, demands []*schedules.Demand, cfg Config, lo, hi int) ([]unitResult, error) {
	nm, nr := len(demands), len(cfg.Reconfigs)
	if cfg.Plan.Plans == nil {
		// Every cell plans the same matrices: decompositions that depend on the demand alone
		// are computed once per matrix (schedules are the same without the cache).
		cfg.Plan.Plans = new(schedules.PlanCache)
	}
	ms := make([]experiment.Matrix, nm)
	for m, d := range demands {
		ms[m] = experiment.Matrix{Ref: emulator.MatrixRef{Index: m, Layer: -1}, Demand: d}
	}
	type group struct{ firstCell, lastCell, mlo, mhi int }
	var groups []group
	for u := lo; u < hi; {
		c := u / nm
		mlo, mhi := u%nm, min(nm, hi-c*nm)
		if k := len(groups) - 1; k >= 0 && groups[k].mlo == mlo && groups[k].mhi == mhi && groups[k].lastCell == c-1 {
			groups[k].lastCell = c
		} else {
			groups = append(groups, group{c, c, mlo, mhi})
		}
		u = c*nm + mhi
	}
	total := (hi - lo) * len(cfg.Algorithms)
	out := make([]unitResult, hi-lo)
	doneBefore := 0
	for _, g := range groups {
		var cells []experiment.Config
		for c := g.firstCell; c <= g.lastCell; c++ {
			cells = append(cells, cfg.cell(cfg.Bandwidths[c/nr], cfg.Reconfigs[c%nr]))
		}
		pool := experiment.Pool{Jobs: cfg.Jobs}
		if cfg.Progress != nil {
			base := doneBefore
			pool.Progress = func(done, _ int) { cfg.Progress(base+done, total) }
		}
		outs, err := experiment.RunMany(ctx, ms[g.mlo:g.mhi], cells, pool)
		if err != nil {
			var te *experiment.TaskError
			if errors.As(err, &te) {
				c := g.firstCell + te.Config
				bw, rc := cfg.Bandwidths[c/nr], cfg.Reconfigs[c%nr]
				return nil, fmt.Errorf("sweep: bandwidth %s, α_r %s, matrix %d, algorithm %s: %s: %w",
					units.FormatBandwidth(bw), units.FormatSeconds(rc), g.mlo+te.Position, te.Algorithm, te.Stage, te.Err)
			}
			return nil, fmt.Errorf("sweep: %w", err)
		}
		na := len(cfg.Algorithms)
		for k, o := range outs {
			c := g.firstCell + k
			for m := g.mlo; m < g.mhi; m++ {
				recs := o.Records[(m-g.mlo)*na : (m-g.mlo+1)*na]
				ur := unitResult{
					// Every algorithm's record of a matrix has the same bound (same demand, b and α_r).
					lowerBound:  recs[0].LowerBoundSeconds,
					completions: make([]float64, na),
				}
				for a := range recs {
					ur.completions[a] = recs[a].CompletionSeconds
				}
				out[c*nm+m-lo] = ur
			}
		}
		doneBefore += (g.lastCell - g.firstCell + 1) * (g.mhi - g.mlo) * na
	}
	return out, nil
}

// build arranges the results of every unit of the grid (us[u] is unit u) into a Result. Sums run
// in matrix order from zero, as experiment's totals do, so the numbers do not depend on how the
// units were computed.
func build(cfg Config, nm int, us []unitResult) *Result {
	nr, na := len(cfg.Reconfigs), len(cfg.Algorithms)
	r := &Result{
		Algorithms: slices.Clone(cfg.Algorithms),
		Reference:  cfg.Reference,
		Bandwidths: slices.Clone(cfg.Bandwidths),
		Reconfigs:  slices.Clone(cfg.Reconfigs),
		Matrices:   nm,
		Cells:      make([][]Cell, len(cfg.Bandwidths)),
	}
	ref := slices.Index(cfg.Algorithms, cfg.Reference)
	for i, bw := range cfg.Bandwidths {
		r.Cells[i] = make([]Cell, nr)
		for j, rc := range cfg.Reconfigs {
			cu := us[(i*nr+j)*nm : (i*nr+j+1)*nm]
			cell := &r.Cells[i][j]
			cell.Bandwidth, cell.Reconfig = bw, rc
			cell.LowerBounds = make([]float64, nm)
			for m := range nm {
				cell.LowerBounds[m] = cu[m].lowerBound
				cell.LowerBound += cell.LowerBounds[m]
			}
			cell.Algorithms = make([]AlgoResult, na)
			for a, name := range cfg.Algorithms {
				ar := &cell.Algorithms[a]
				ar.Algorithm = name
				ar.Completions = make([]float64, nm)
				for m := range nm {
					ar.Completions[m] = cu[m].completions[a]
					ar.Completion += ar.Completions[m]
				}
			}
			refSum := cell.Algorithms[ref].Completion
			for a := range cell.Algorithms {
				ar := &cell.Algorithms[a]
				switch {
				case refSum > 0:
					ar.Ratio = ar.Completion / refSum
				case ar.Completion == 0:
					ar.Ratio = 1 // nothing to send: every algorithm ties
				default:
					ar.Ratio = math.Inf(1)
				}
			}
		}
	}
	return r
}
