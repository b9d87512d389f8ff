// Package sweep runs the grids of Tetris Figures 8 and 10: for every (bandwidth, α_r) cell and
// every matrix of a trace, it schedules the matrix with each algorithm, executes the schedule in
// the emulator, and reports per cell and per algorithm the completion time summed over all matrices
// (one inference pass) and its ratio to the reference algorithm's sum (Tetris in the paper).
//
// Each cell is one experiment.Config (the schedulers plan at the cell's bandwidth and α_r, the
// emulator executes, lower bounds at the cell's bandwidth); all cells run through
// experiment.RunMany on one pool of workers, without verification. Results are stored by index
// and summed in matrix order, so they are bit-for-bit the same for any number of workers and any
// completion order.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// DefaultReference is the algorithm every other one is compared with.
const DefaultReference = "tetris"

// Config is one sweep.
type Config struct {
	// Algorithms are registered scheduler names (schedules.Lookup); they must include Reference.
	Algorithms []string
	// Reference is the algorithm in the denominator of every ratio; empty means DefaultReference.
	Reference string
	// Bandwidths are the per-port bandwidths in bytes per second: the grid's rows.
	Bandwidths []float64
	// Reconfigs are the reconfiguration delays α_r in seconds: the grid's columns.
	Reconfigs []float64
	// Transfer, when set, times every transfer in every cell instead of bytes/bandwidth: Tetris
	// Figure 10's hardware emulation, with measured (or α-β calibrated) GPU-to-GPU times and
	// injected α_r. The bandwidths then only feed the schedulers' planning and the lower bounds.
	// It must be safe for concurrent use (the emulator's models are).
	Transfer emulator.TransferModel
	// ReconfigModel, when set, times every reconfiguration in every cell instead of parallel
	// changes taking the cell's α_r (e.g. the controller model of Er-El and Feitelson §2.3.3);
	// the cell's α_r then only feeds the schedulers' planning, and lower bounds use the model's
	// nominal delay. It must be safe for concurrent use (the emulator's models are).
	ReconfigModel emulator.ReconfigModel
	// Fabric is passed to every scheduler; empty lets each plan for its natural fabric (the ideal
	// SNB reference runs on a crossbar, everything else on Beneš).
	Fabric schedules.FabricKind
	// Plan holds the other scheduler options (the Tetris ablations, Sunflow's order); its
	// Bandwidth, Reconfig, Fabric and RNBMapping are set from the cell and the fields here.
	Plan schedules.Options
	// RNBMapping is passed to every scheduler as schedules.Options.RNBMapping: how Sunflow's and
	// BFF's plans get Beneš paths ("" or "earliest", the default; "looping"; "avoid-live").
	RNBMapping string
	// WearWeights, when it holds more than one weight, is the wear-weight axis (switch wear,
	// Tetris §5): every algorithm plans at the first weight (as Plan.WearWeight alone would
	// have it), and the algorithms that weigh wear (WearAlgorithms) plan again at each further
	// weight w, as the variants "<name>@w<w>" (tetris@w4) beside the others in every cell, their
	// ratios taken against the reference at the first weight. One weight is Plan.WearWeight.
	WearWeights []float64
	// Tenants, when set, makes the sweep multi-tenant (Tetris §5): every demand matrix is the
	// joint demand of these tenants on one Beneš fabric of its size (each tenant's demand on
	// its block of ports, nothing between blocks), and every cell runs each algorithm under each
	// of Allocations (experiment.RunTenants) as the columns "<algorithm>@<allocation>"
	// (tetris@strict), with each tenant's completion; ratios are over Reference under the first
	// allocation. Not with a wear-weight axis, the crossbar or MaxMemory.
	Tenants     []schedules.Block
	Allocations []schedules.Allocation
	// Jobs is the number of workers; zero or less means runtime.GOMAXPROCS(0).
	Jobs int
	// MaxMemory, when positive, limits the estimated memory of the runs under way at once
	// (experiment.Config.MaxMemory): a run alone above it refuses the sweep before anything is
	// planned; otherwise fewer run at a time. It never changes a result.
	MaxMemory int64
	// Progress, when set, is called after every finished task (one algorithm on one matrix in one
	// cell) with the number done so far and the total. Calls never overlap.
	Progress func(done, total int)
}

// Result is a finished sweep.
type Result struct {
	Algorithms []string
	Reference  string
	// Tenants are a multi-tenant sweep's tenants' ports ("0-3"), nil otherwise.
	Tenants    []string
	Bandwidths []float64
	Reconfigs  []float64
	// Matrices is the number of demand matrices each cell summed over.
	Matrices int
	// Cells[r][c] is bandwidth r, reconfiguration delay c.
	Cells [][]Cell
}

// Cell is one (bandwidth, α_r) point of the grid.
type Cell struct {
	Bandwidth float64 // bytes per second
	Reconfig  float64 // seconds
	// LowerBounds[m] is matrix m's lower bound (the larger of the two of schedules.LowerBound).
	LowerBounds []float64
	// LowerBound is the sum of LowerBounds.
	LowerBound float64
	// Algorithms follows Result.Algorithms.
	Algorithms []AlgoResult
}

// AlgoResult is one algorithm in one cell.
type AlgoResult struct {
	Algorithm string
	// Completions[m] is the emulated completion time of matrix m, in seconds.
	Completions []float64
	// Completion is the sum of Completions: the pass's All-to-All time.
	Completion float64
	// Ratio is Completion over the reference algorithm's Completion in the same cell: above 1 the
	// reference finishes the pass faster (Tetris Figure 8's cell value).
	Ratio float64
	// HasStateChanges says whether every matrix's switch state changes are known (shard and
	// partial files written before they were recorded hold none). StateChanges is then their
	// sum over the matrices (switch wear, Tetris §5), and StateChangesMax the most-changed
	// switch's changes over the pass: per-switch counts summed over the matrices, the largest.
	HasStateChanges bool
	StateChanges    int
	StateChangesMax int
	// Tenants are, in a multi-tenant sweep, each tenant's completion summed over the matrices
	// (Result.Tenants order); nil otherwise.
	Tenants []float64
}

// WearAlgorithms are the registered algorithms whose plans depend on the wear weight: the ones
// a wear-weight axis runs again at each further weight.
var WearAlgorithms = []string{"tetris", "tetris-wear"}

// VariantName is algorithm name planned at wear weight w on a wear-weight axis: "tetris@w4".
func VariantName(name string, w float64) string {
	return name + "@w" + strconv.FormatFloat(w, 'g', -1, 64)
}

// variant is one planning of an algorithm in a cell: its name in results, the registered
// scheduler, the wear weight it plans at and, in a multi-tenant sweep, the allocation.
type variant struct {
	name, algo string
	weight     float64
	alloc      schedules.Allocation
}

// variants are the columns of every cell: each of cfg.Algorithms at the first wear weight, then,
// per further weight of the axis, each of cfg.Algorithms among WearAlgorithms.
func (cfg *Config) variants() []variant {
	w0 := cfg.Plan.WearWeight
	if len(cfg.WearWeights) > 0 {
		w0 = cfg.WearWeights[0]
	}
	var vs []variant
	if len(cfg.Tenants) > 0 {
		for _, al := range cfg.Allocations {
			for _, a := range cfg.Algorithms {
				vs = append(vs, variant{a + "@" + string(al), a, w0, al})
			}
		}
		return vs
	}
	for _, a := range cfg.Algorithms {
		vs = append(vs, variant{a, a, w0, ""})
	}
	for k := 1; k < len(cfg.WearWeights); k++ {
		for _, a := range cfg.Algorithms {
			if slices.Contains(WearAlgorithms, a) {
				vs = append(vs, variant{VariantName(a, cfg.WearWeights[k]), a, cfg.WearWeights[k], ""})
			}
		}
	}
	return vs
}

// refColumn is the column ratios are taken over: Reference, under the first allocation in a
// multi-tenant sweep.
func (cfg *Config) refColumn() string {
	if len(cfg.Tenants) > 0 && len(cfg.Allocations) > 0 {
		return cfg.Reference + "@" + string(cfg.Allocations[0])
	}
	return cfg.Reference
}

// Names are the columns of every cell (Result.Algorithms): the algorithms, then the variants of
// a wear-weight axis.
func (cfg *Config) Names() []string {
	var ns []string
	for _, v := range cfg.variants() {
		ns = append(ns, v.name)
	}
	return ns
}

// BoundRatios is, per matrix, completion over lower bound (Tetris Figure 7(b)'s samples); a
// matrix with nothing to send has no bound and is left out.
func (c *Cell) BoundRatios(algo int) []float64 {
	var rs []float64
	for m, lb := range c.LowerBounds {
		if lb > 0 {
			rs = append(rs, emulator.BoundRatio(c.Algorithms[algo].Completions[m], lb))
		}
	}
	return rs
}

// AlgoIndex is the position of name in r.Algorithms, or −1.
func (r *Result) AlgoIndex(name string) int { return slices.Index(r.Algorithms, name) }

// RatioGrid is algorithm name's ratio to the reference in every cell, rows bandwidth and columns α_r.
func (r *Result) RatioGrid(name string) ([][]float64, error) {
	a := r.AlgoIndex(name)
	if a < 0 {
		return nil, fmt.Errorf("sweep: algorithm %q was not swept (swept: %v)", name, r.Algorithms)
	}
	g := make([][]float64, len(r.Cells))
	for i, row := range r.Cells {
		g[i] = make([]float64, len(row))
		for j := range row {
			g[i][j] = row[j].Algorithms[a].Ratio
		}
	}
	return g, nil
}

// check validates cfg against the demands.
func (cfg *Config) check(demands []*schedules.Demand) error {
	if len(demands) == 0 {
		return errors.New("sweep: no demand matrices")
	}
	for m, d := range demands {
		if d == nil || d.N() == 0 {
			return fmt.Errorf("sweep: demand matrix %d is empty", m)
		}
	}
	if len(cfg.Bandwidths) == 0 || len(cfg.Reconfigs) == 0 {
		return fmt.Errorf("sweep: the grid has %d bandwidths and %d reconfiguration delays; both must be positive",
			len(cfg.Bandwidths), len(cfg.Reconfigs))
	}
	for _, b := range cfg.Bandwidths {
		if !(b > 0) || math.IsInf(b, 0) {
			return fmt.Errorf("sweep: bandwidth %g bytes/s is not a positive finite rate", b)
		}
	}
	for _, a := range cfg.Reconfigs {
		if !(a >= 0) || math.IsInf(a, 0) {
			return fmt.Errorf("sweep: reconfiguration delay %g s is not a non-negative finite time", a)
		}
	}
	if cfg.Reference == "" {
		cfg.Reference = DefaultReference
	}
	if !slices.Contains(cfg.Algorithms, cfg.Reference) {
		return fmt.Errorf("sweep: algorithms %v do not include the reference %q that ratios are taken against",
			cfg.Algorithms, cfg.Reference)
	}
	for i, name := range cfg.Algorithms {
		if slices.Index(cfg.Algorithms, name) != i {
			return fmt.Errorf("sweep: algorithm %q is listed twice", name)
		}
		if _, err := schedules.Lookup(name); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	for i, w := range cfg.WearWeights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return fmt.Errorf("sweep: wear weight %g is not a non-negative finite weight", w)
		}
		if slices.Index(cfg.WearWeights, w) != i {
			return fmt.Errorf("sweep: wear weight %g is listed twice", w)
		}
	}
	if err := cfg.checkTenants(demands); err != nil {
		return err
	}
	if len(cfg.WearWeights) > 1 && !slices.ContainsFunc(cfg.Algorithms, func(a string) bool { return slices.Contains(WearAlgorithms, a) }) {
		return fmt.Errorf("sweep: the wear weights %v need an algorithm that weighs wear (%v) among %v", cfg.WearWeights, WearAlgorithms, cfg.Algorithms)
	}
	return nil
}

// Run sweeps the grid of cfg over demands: one experiment.Config per cell, all run on one pool
// of workers by experiment.RunMany (without verification: every scheduler's output is verified
// by the tests). On the first failure, or when ctx is cancelled, the workers stop taking tasks
// and Run returns the error; no partial result is returned.
func Run(ctx context.Context, demands []*schedules.Demand, cfg Config) (*Result, error) {
	if err := cfg.check(demands); err != nil {
		return nil, err
	}
	us, err := runUnits(ctx, demands, cfg, 0, cfg.units(len(demands)))
	if err != nil {
		return nil, err
	}
	return build(cfg, len(demands), us), nil
}

// units is the number of units (one matrix in one cell) of the grid.
func (cfg *Config) units(matrices int) int {
	return len(cfg.Bandwidths) * len(cfg.Reconfigs) * matrices
}

// cell is the experiment of one (bandwidth, α_r) cell: the schedulers plan for bw and rc (on
// cfg's fabric, with cfg's ablations and RNB mapping); transfers take cfg.Transfer (bytes/bw when
// nil) and reconfiguration cfg.ReconfigModel (parallel, rc per change, when nil); lower bounds
// use bw.
func (cfg *Config) cell(bw, rc float64) experiment.Config {
	o := cfg.Plan
	o.Bandwidth, o.Reconfig, o.Fabric, o.RNBMapping = bw, rc, cfg.Fabric, cfg.RNBMapping
	if len(cfg.WearWeights) > 0 {
		o.WearWeight = cfg.WearWeights[0]
	}
	tm, rm := cfg.Transfer, cfg.ReconfigModel
	if tm == nil {
		tm = emulator.BandwidthModel(bw)
	}
	if rm == nil {
		rm = emulator.ParallelReconfig(rc)
	}
	return experiment.Config{Algorithms: cfg.Algorithms, Options: o, Reference: cfg.Reference, SkipVerify: true,
		MaxMemory: cfg.MaxMemory, Exec: emulator.Config{Transfer: tm, Reconfig: rm}}
}

// Nearest is the cell closest to (bandwidth, reconfig) on logarithmic scales, the way the grid's
// axes are spaced; a zero delay counts as 1 ps. Ties go to the earlier row or column.
func (r *Result) Nearest(bandwidth, reconfig float64) (row, col int) {
	logDist := func(a, b float64) float64 {
		const floor = 1e-12
		return math.Abs(math.Log(math.Max(a, floor)) - math.Log(math.Max(b, floor)))
	}
	closest := func(vs []float64, want float64) int {
		best := 0
		for i, v := range vs {
			if logDist(v, want) < logDist(vs[best], want) {
				best = i
			}
		}
		return best
	}
	return closest(r.Bandwidths, bandwidth), closest(r.Reconfigs, reconfig)
}
