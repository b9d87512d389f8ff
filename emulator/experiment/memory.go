package experiment

import (
	"cmp"
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// Memory estimates. A run's memory grows with its circuits: each holds its schedule entry (64
// bytes with its compact Beneš path, plus 16 of planned times), its timeline entry (48 bytes),
// its share of the timeline's switch changes (32 bytes each, plus the emulator's 8-byte epoch
// record and the verifier's 4-byte index while they run), the emulator's walk state (about 52
// bytes a circuit in barrier mode) and, in partial mode, the dependency order's per-hop lists.
// A barrier run whose timeline is not kept (no timeline files, no chart) holds no circuit at
// all beyond the round under way: it is planned, checked and executed round by round
// (streamedBytes). What decides the count is the algorithm:
//
//   - the Birkhoff–von Neumann family (bvn, bvn-maxmin, solstice, bvn-sinkhorn) takes at most
//     n² − 2n + 2 slices of up to n circuits each (Birkhoff's bound on a stuffed n×n matrix):
//     n³ circuits at worst, which bvn-sinkhorn reaches on dense demand (every pair gets a share of
//     every slice) and plain bvn on a dense random one;
//   - every other scheduler makes about one circuit per nonzero pair.
//
// Switch changes are counted at a quarter of the stages per circuit: between two unrelated
// rounds of n circuits every switch of the fabric (stages·n/2 of them) changes with probability
// ½. Measured (bvn-sinkhorn, dense) 1.25, 1.76 and 2.24 changes a circuit at n = 64, 128 and 256
// against 2.75, 3.25 and 3.75 here.
//
// The estimate is of the live heap at its peak: the --max-memory limit is also the runtime's
// soft memory limit, so the collector keeps the heap near what is live instead of letting it
// grow to twice that. It takes the worst case, so that a run it lets through does not run out of
// memory. Measured live peaks (the largest live heap the collector reported), dense random
// 256-port demand (16.6 M circuits, 37.2 M changes), bvn-sinkhorn: 3.99 GiB with its timeline
// kept (estimate 5.36 GiB); on dense 512-port demand Tetris 116 MB (estimate 183 MB).
// bvn-sinkhorn on dense 64-port demand (254 080 circuits) peaks at 73 MiB kept, its live heap
// plus what lies outside the heap (estimate 105 MiB), and streamed round by round at what the
// process holds outside its heap and a few MiB (TestEmulateEstimateTight).

// perCircuitBytes is the peak live memory per circuit on a fabric with the given number of
// stages (0: crossbar); partial says the schedule runs in partial mode (per-hop dependency lists,
// and a timeline entry per circuit), kept that its timeline is kept to the end (a barrier run's
// that is not is streamedBytes).
func perCircuitBytes(stages int, partial, kept bool) int64 {
	s := int64(stages)
	b := 64 + 16 + 48 + 52 + (s*(32+8+4)+3)/4
	if partial {
		b += 12 * s
	}
	return b
}

// baseBytes is what a process needs whatever it runs: the runtime, the binary, the demand.
// Measured: 22 MiB resident for a tiny run, 23 MiB outside the live heap at n = 64.
const baseBytes = 32 << 20

// decompositions are the schedulers whose circuit count is bounded by Birkhoff's n³.
var decompositions = []string{"bvn", "bvn-maxmin", "bvn-sinkhorn", "solstice"}

// barrierAlgorithms are the schedulers that plan barrier rounds (the rest plan partial-mode
// groups, whose dependency order keeps lists per hop).
var barrierAlgorithms = append([]string{"maxweight"}, decompositions...)

// RunEstimate is the memory estimate of one algorithm on one matrix.
type RunEstimate struct {
	Algorithm string
	// Ports is the matrix's size n; Circuits the most circuits the estimate allows for.
	Ports    int
	Circuits int64
	// Bytes is the estimated peak memory of planning and executing it, the process's base
	// excluded.
	Bytes int64
}

// EstimateRun estimates the peak memory of planning d with algo and executing it on fabric
// (empty: Beneš, except for snb's crossbar); keep says its timeline is kept (Config.KeepRuns).
// It assumes no plan cache (schedules.Options.Plans), as emulate runs.
func EstimateRun(algo string, d *schedules.Demand, fabric schedules.FabricKind, keep bool) RunEstimate {
	return estimateRun(algo, d, fabric, keep, false)
}

// streamedBytes is the peak memory of a barrier run whose timeline is not kept, which is
// planned, checked and executed round by round (schedules.RoundStream): it holds no circuit
// beyond the round under way, only its plan's pieces where it is made whole (MaxWeight; any
// plan kept in a cache: 24 bytes each) and, for a decomposition, its slices until each is made
// into a round (a permutation of n ints and 32 bytes each, at most n² − 2n + 2 of them).
// Measured: bvn-sinkhorn on dense 256-port demand, 91 MiB live at the peak (estimate 135 MiB
// and the matrices'). Its timeline check (schedules.RoundTimelineVerifier) holds up to
// schedules.MaxPendingRounds rounds of at most n circuits back (never more than the schedule
// has), each as a timeline entry (48 bytes) and its decoded path (8 bytes a stage).
func streamedBytes(algo string, n, circuits int64, stages int, cached bool) int64 {
	held := min(schedules.MaxPendingRounds*n, circuits) * (48 + 8*int64(stages))
	if !slices.Contains(decompositions, algo) {
		return 24*circuits + held
	}
	b := max(n*n-2*n+2, 1)*(8*n+32) + held
	if cached {
		b += 24 * circuits
	}
	return b
}

// estimateRun is EstimateRun; cached says the plans go into a plan cache.
func estimateRun(algo string, d *schedules.Demand, fabric schedules.FabricKind, keep, cached bool) RunEstimate {
	n := d.N()
	nnz := int64(0)
	for i := range n {
		for j := range d.Bytes[i] {
			if d.At(i, j) > 0 {
				nnz++
			}
		}
	}
	circuits := nnz + int64(n)
	if slices.Contains(decompositions, algo) {
		nn := int64(n)
		circuits = max(nn*nn-2*nn+2, 1) * nn
	}
	stages := 0
	if fabric == schedules.Benes || fabric == "" && algo != "snb" {
		size := 2
		for size < n {
			size <<= 1
		}
		stages = 2*(bits.Len(uint(size))-1) - 1
	}
	// The demand's own copies (stuffing, residuals, cost matrices): a few n×n int64 matrices.
	matrices := 16 * int64(n) * int64(n) * 8
	barrier := slices.Contains(barrierAlgorithms, algo)
	if barrier && !keep {
		return RunEstimate{Algorithm: algo, Ports: n, Circuits: circuits, Bytes: streamedBytes(algo, int64(n), circuits, stages, cached) + matrices}
	}
	per := perCircuitBytes(stages, !barrier, keep)
	if algo == "tetris+" {
		per *= 2 // it keeps the best of its plans while making the next
	}
	return RunEstimate{Algorithm: algo, Ports: n, Circuits: circuits, Bytes: circuits*per + matrices}
}

// Estimate is the memory estimate of an experiment: every run's, and the peak of the process.
type Estimate struct {
	Runs []RunEstimate
	// Peak is the process's estimated peak: its base, plus the runs kept to the end (KeepRuns
	// without Stream) or the largest runs that may be under way at once (one per worker).
	Peak int64
}

// EstimateMemory estimates the memory of running cfg on ms with jobs workers (≤ 0: one).
func EstimateMemory(ms []Matrix, cfg Config, jobs int) Estimate {
	var e Estimate
	for _, m := range ms {
		for _, a := range cfg.Algorithms {
			e.Runs = append(e.Runs, estimateRun(a, m.Demand, cfg.Options.Fabric, cfg.KeepRuns, cfg.Options.Plans != nil))
		}
	}
	sizes := make([]int64, len(e.Runs))
	for i, r := range e.Runs {
		sizes[i] = r.Bytes
	}
	slices.Sort(sizes)
	slices.Reverse(sizes)
	k := max(jobs, 1)
	if cfg.KeepRuns && cfg.Stream == nil {
		k = len(sizes)
	}
	e.Peak = baseBytes
	for _, b := range sizes[:min(k, len(sizes))] {
		e.Peak += b
	}
	return e
}

// MemoryError is an experiment refused before planning: its estimated peak memory is above
// the limit.
type MemoryError struct {
	Limit, Peak int64
	// Over are the runs that alone would pass the limit (largest first; may be empty when only
	// runs together do).
	Over []RunEstimate
}

func (e *MemoryError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "estimated peak memory %s is above the limit of %s", units.FormatBytes(e.Peak), units.FormatBytes(e.Limit))
	if len(e.Over) > 0 {
		parts := make([]string, len(e.Over))
		for i, r := range e.Over {
			parts[i] = fmt.Sprintf("%s on n = %d needs about %s (up to %d circuits)", r.Algorithm, r.Ports, units.FormatBytes(r.Bytes), r.Circuits)
		}
		b.WriteString(": " + strings.Join(parts, "; "))
	}
	return b.String()
}

// checkMemory refuses cfg on ms when one of its runs alone is estimated above cfg.MaxMemory (0:
// no limit), or, when the runs are kept to the end (Config.KeepRuns without Config.Stream), when
// all of them together are: a kept run's schedule and timeline stay until the end, beyond what
// RunMany's memory gate sees; a streamed one leaves with the gate's share. Runs
// that are not kept and fit alone but not together are not refused: the gate holds them back
// until enough of the others have finished (see gate).
// e is EstimateMemory(ms, cfg, 1): with KeepRuns and no Stream, the peak is every run's, whatever
// the workers.
func checkMemory(e Estimate, cfg Config) error {
	if cfg.MaxMemory <= 0 {
		return nil
	}
	me := &MemoryError{Limit: cfg.MaxMemory}
	seen := map[string]bool{}
	for _, r := range e.Runs {
		key := fmt.Sprint(r.Algorithm, r.Ports)
		if baseBytes+r.Bytes > cfg.MaxMemory && !seen[key] {
			seen[key] = true
			me.Over = append(me.Over, r)
		}
	}
	slices.SortStableFunc(me.Over, func(a, b RunEstimate) int { return cmp.Compare(b.Bytes, a.Bytes) })
	switch {
	case cfg.KeepRuns && cfg.Stream == nil && e.Peak > cfg.MaxMemory:
		me.Peak = e.Peak
	case len(me.Over) > 0:
		// The peak reported is what the runs over the limit need, each alone: the gate never
		// lets anything run beside them.
		me.Peak = baseBytes + me.Over[0].Bytes
	default:
		return nil
	}
	return me
}

// gate admits runs while the sum of their estimates fits a budget, so that workers never hold
// more than the limit between them: a run that would pass it waits for others to finish. A run
// is always admitted when nothing else holds the gate (checkMemory has refused any that alone
// is above the limit), so the gate cannot deadlock.
type gate struct {
	mu      sync.Mutex
	cond    *sync.Cond
	budget  int64 // ≤ 0: no limit
	inUse   int64
	holders int
}

func newGate(budget int64) *gate {
	g := &gate{budget: budget}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// acquire waits until bytes fit beside the runs under way, or ctx is done.
func (g *gate) acquire(ctx context.Context, bytes int64) error {
	if g.budget <= 0 {
		return nil
	}
	stop := context.AfterFunc(ctx, func() {
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	})
	defer stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.holders > 0 && g.inUse+bytes > g.budget {
		if err := ctx.Err(); err != nil {
			return err
		}
		g.cond.Wait()
	}
	g.inUse += bytes
	g.holders++
	return nil
}

// release returns what acquire took.
func (g *gate) release(bytes int64) {
	if g.budget <= 0 {
		return
	}
	g.mu.Lock()
	g.inUse -= bytes
	g.holders--
	g.cond.Broadcast()
	g.mu.Unlock()
}
