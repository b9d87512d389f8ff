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
	completions []float64 // by algorithm, in cfg.Names() order
	// changes and perSwitch are each algorithm's switch state changes, in total and per switch
	// (by stage then index, only those that changed); nil in a unit read from a file written
	// before they were recorded.
	changes   []int
	perSwitch [][]emulator.SwitchCount
	// tenants are, in a multi-tenant sweep, each algorithm's tenants' completions.
	tenants [][]float64
}

// cellConfigs are the experiments of one cell: every algorithm at the first wear weight
// (cfg.cell), then, per further weight of the axis, the algorithms that weigh wear at it; their
// records, matrix by matrix, follow cfg.variants().
func (cfg *Config) cellConfigs(bw, rc float64) []experiment.Config {
	base := cfg.cell(bw, rc)
	out := []experiment.Config{base}
	for k := 1; k < len(cfg.WearWeights); k++ {
		c := base
		c.Algorithms = nil
		for _, a := range cfg.Algorithms {
			if slices.Contains(WearAlgorithms, a) {
				c.Algorithms = append(c.Algorithms, a)
			}
		}
		c.Options.WearWeight = cfg.WearWeights[k]
		out = append(out, c)
	}
	return out
}

// runUnits runs units [lo, hi) of the grid of cfg over demands (cfg already checked) and returns
// their results, indexed from lo. Consecutive cells that cover the same matrices go to one
// experiment.RunMany call (an unsharded run is a single call; a shard at most three), each on
// the one pool of cfg.Jobs workers.
func runUnits(ctx context.Context, demands []*schedules.Demand, cfg Config, lo, hi int) ([]unitResult, error) {
	if len(cfg.Tenants) > 0 {
		return runTenantUnits(ctx, demands, cfg, lo, hi)
	}
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
	na := len(cfg.variants())
	total := (hi - lo) * na
	out := make([]unitResult, hi-lo)
	doneBefore := 0
	for _, g := range groups {
		var cells []experiment.Config
		perCell := 0
		for c := g.firstCell; c <= g.lastCell; c++ {
			cc := cfg.cellConfigs(cfg.Bandwidths[c/nr], cfg.Reconfigs[c%nr])
			perCell = len(cc)
			cells = append(cells, cc...)
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
				c := g.firstCell + te.Config/perCell
				bw, rc := cfg.Bandwidths[c/nr], cfg.Reconfigs[c%nr]
				algo := te.Algorithm
				if k := te.Config % perCell; k > 0 {
					algo = VariantName(algo, cfg.WearWeights[k])
				}
				return nil, fmt.Errorf("sweep: bandwidth %s, α_r %s, matrix %d, algorithm %s: %s: %w",
					units.FormatBandwidth(bw), units.FormatSeconds(rc), g.mlo+te.Position, algo, te.Stage, te.Err)
			}
			return nil, fmt.Errorf("sweep: %w", err)
		}
		for k := 0; k < len(outs); k += perCell {
			c := g.firstCell + k/perCell
			for m := g.mlo; m < g.mhi; m++ {
				var recs []experiment.Record
				for _, o := range outs[k : k+perCell] {
					per := len(o.Records) / (g.mhi - g.mlo)
					recs = append(recs, o.Records[(m-g.mlo)*per:(m-g.mlo+1)*per]...)
				}
				out[c*nm+m-lo] = unitOf(recs)
			}
		}
		doneBefore += (g.lastCell - g.firstCell + 1) * (g.mhi - g.mlo) * na
	}
	return out, nil
}

// unitOf is a unit from its records, one per variant in order.
func unitOf(recs []experiment.Record) unitResult {
	na := len(recs)
	ur := unitResult{
		// Every algorithm's record of a matrix has the same bound (same demand, b and α_r).
		lowerBound:  recs[0].LowerBoundSeconds,
		completions: make([]float64, na),
		changes:     make([]int, na),
		perSwitch:   make([][]emulator.SwitchCount, na),
	}
	for a := range recs {
		ur.completions[a] = recs[a].CompletionSeconds
		ur.changes[a] = recs[a].StateChanges
		ur.perSwitch[a] = recs[a].StateChangesPerSwitch
		if ur.perSwitch[a] == nil {
			ur.perSwitch[a] = []emulator.SwitchCount{}
		}
	}
	return ur
}

// build arranges the results of every unit of the grid (us[u] is unit u) into a Result. Sums run
// in matrix order from zero, as experiment's totals do, so the numbers do not depend on how the
// units were computed.
func build(cfg Config, nm int, us []unitResult) *Result {
	var tenants []string
	for _, b := range cfg.Tenants {
		tenants = append(tenants, b.String())
	}
	return buildAs(cfg, cfg.Names(), cfg.refColumn(), tenants, nm, us)
}

// skeleton is the Result of cfg over nm matrices without its cells, for the manifest.
func (cfg *Config) skeleton(nm int) *Result {
	r := &Result{Algorithms: cfg.Names(), Reference: cfg.refColumn(), Bandwidths: cfg.Bandwidths, Reconfigs: cfg.Reconfigs, Matrices: nm}
	for _, b := range cfg.Tenants {
		r.Tenants = append(r.Tenants, b.String())
	}
	return r
}

// buildAs is build with the columns, the reference column and the tenants' ports given (sweep
// merge takes them from the manifest).
func buildAs(cfg Config, names []string, refName string, tenants []string, nm int, us []unitResult) *Result {
	nr, na := len(cfg.Reconfigs), len(names)
	r := &Result{
		Algorithms: names,
		Reference:  refName,
		Tenants:    tenants,
		Bandwidths: slices.Clone(cfg.Bandwidths),
		Reconfigs:  slices.Clone(cfg.Reconfigs),
		Matrices:   nm,
		Cells:      make([][]Cell, len(cfg.Bandwidths)),
	}
	ref := slices.Index(names, refName)
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
			for a, name := range names {
				ar := &cell.Algorithms[a]
				ar.Algorithm = name
				ar.Completions = make([]float64, nm)
				for m := range nm {
					ar.Completions[m] = cu[m].completions[a]
					ar.Completion += ar.Completions[m]
				}
				sumChanges(ar, cu, a)
				sumTenants(ar, cu, a, len(tenants))
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

// sumChanges fills algorithm a's state changes over the units of its cell, when every unit has
// them: the total, and the most-changed switch of the per-switch counts summed over the units.
func sumChanges(ar *AlgoResult, cu []unitResult, a int) {
	per := map[[2]int]int{}
	for _, u := range cu {
		if u.changes == nil {
			return
		}
		ar.StateChanges += u.changes[a]
		for _, c := range u.perSwitch[a] {
			per[[2]int{c.Stage, c.Index}] += c.Count
		}
	}
	ar.HasStateChanges = true
	for _, c := range per {
		ar.StateChangesMax = max(ar.StateChangesMax, c)
	}
}
