// Package barrier holds the baseline circuit schedulers that run in barrier rounds (Tetris §2.2,
// §4.1): every circuit of a round is set up together, and the next round starts only when the
// whole round has finished.
//
//   - bvn: Birkhoff–von Neumann decomposition of the stuffed demand (package stuffing), any
//     perfect matching per step (Hopcroft–Karp).
//   - bvn-maxmin: the same with the max-min (bottleneck) perfect matching per step, which empties
//     the matrix in fewer rounds.
//   - maxweight: repeatedly a maximum-weight matching of the residual demand, every matched pair
//     sending all it has left (as in ProjecToR and Helios); a round lasts until its longest
//     circuit ends, which is where the "scheduling bubbles" of §2.2 come from.
//   - solstice: the stuffed demand sliced by power-of-two thresholds, each slice lasting its smallest
//     matched entry (Liu et al., CoNEXT 2015).
//   - bvn-sinkhorn: Birkhoff–von Neumann of the demand's Sinkhorn scaling to a doubly stochastic
//     matrix instead of stuffing; each slice's share of every pair's bytes is λ_k / P_ij (see
//     BvNSinkhorn), and a round lasts its longest circuit.
//
// Stuffing may put idle time on the diagonal when the demand ignores it (see package stuffing):
// such a cell pairs port i with itself for a piece, which carries nothing and gets no circuit.
//
// A decomposition round lasts its stuffed duration even when its real bytes finish sooner: the
// stuffing is idle capacity that BvN and Solstice pay for (recorded as Round.PlannedDuration).
// Within a pair's pieces real bytes go first. Each round's partial permutation gets Beneš paths
// from the looping algorithm; on the crossbar circuits have no path.
//
// A blank import registers all five with package schedules.
package barrier

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/matching"
	"github.com/tetris-hil/tetris-hil/schedules/stuffing"
)

func init() {
	register := func(name, summary string, whole schedules.SchedulerFunc, rounds roundsFunc) {
		schedules.Register(name, summary, roundScheduler{whole, rounds})
	}
	register("bvn", "Birkhoff–von Neumann on the stuffed demand, any perfect matching per round (barrier)", BvN, BvNRounds)
	register("bvn-maxmin", "Birkhoff–von Neumann on the stuffed demand, max-min perfect matching per round (barrier)", BvNMaxMin, BvNMaxMinRounds)
	register("maxweight", "repeated maximum-weight matching of the residual, each pair sends all it has (barrier)", MaxWeight, MaxWeightRounds)
	register("solstice", "Solstice: stuffing, then power-of-two threshold slices (barrier)", Solstice, SolsticeRounds)
	register("bvn-sinkhorn", "Birkhoff–von Neumann on the Sinkhorn-scaled (doubly stochastic) demand, any perfect matching per round (barrier)", BvNSinkhorn, BvNSinkhornRounds)
}

// roundsFunc plans a barrier schedule round by round.
type roundsFunc func(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.RoundStream, error)

// roundScheduler is a barrier scheduler that plans whole (Schedule) or round by round
// (schedules.RoundScheduler): the same rounds either way.
type roundScheduler struct {
	whole  schedules.SchedulerFunc
	rounds roundsFunc
}

func (r roundScheduler) Schedule(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	return r.whole(ctx, d, o)
}

func (r roundScheduler) ScheduleRounds(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.RoundStream, error) {
	return r.rounds(ctx, d, o)
}

// BvN schedules d by Birkhoff–von Neumann decomposition with any perfect matching per round.
func BvN(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	return wholePlan(ctx, "bvn", d, o, decomposeBvN)
}

// BvNRounds is BvN round by round (schedules.RoundStream).
func BvNRounds(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.RoundStream, error) {
	return roundPlan(ctx, "bvn", d, o, decomposeBvN)
}

// BvNMaxMin schedules d by Birkhoff–von Neumann decomposition with the max-min perfect matching
// per round.
func BvNMaxMin(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	return wholePlan(ctx, "bvn-maxmin", d, o, decomposeMaxMin)
}

// BvNMaxMinRounds is BvNMaxMin round by round (schedules.RoundStream).
func BvNMaxMinRounds(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.RoundStream, error) {
	return roundPlan(ctx, "bvn-maxmin", d, o, decomposeMaxMin)
}

// Solstice schedules d by Solstice's stuffing and power-of-two threshold slicing.
func Solstice(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	return wholePlan(ctx, "solstice", d, o, DecomposeSolstice)
}

// SolsticeRounds is Solstice round by round (schedules.RoundStream).
func SolsticeRounds(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.RoundStream, error) {
	return roundPlan(ctx, "solstice", d, o, DecomposeSolstice)
}

// decomposer writes a stuffed matrix as slices.
type decomposer func(context.Context, [][]int64) ([]Slice, error)

func decomposeBvN(ctx context.Context, m [][]int64) ([]Slice, error) {
	return DecomposeBvN(ctx, m, false)
}

func decomposeMaxMin(ctx context.Context, m [][]int64) ([]Slice, error) {
	return DecomposeBvN(ctx, m, true)
}

// wholePlan is a decomposition's schedule, whole.
func wholePlan(ctx context.Context, algo string, d *schedules.Demand, o schedules.Options, decompose decomposer) (*schedules.Schedule, error) {
	p, err := decomposed(ctx, algo, d, o, decompose, false)
	if err != nil {
		return nil, err
	}
	return place(ctx, algo, d, o, p)
}

// roundPlan is a decomposition's schedule round by round: without a plan cache, each round's
// pieces are made from the slices only when the stream is asked for it.
func roundPlan(ctx context.Context, algo string, d *schedules.Demand, o schedules.Options, decompose decomposer) (*schedules.RoundStream, error) {
	p, err := decomposed(ctx, algo, d, o, decompose, o.Plans == nil)
	if err != nil {
		return nil, err
	}
	return placeRounds(algo, d, o, p)
}

// decomposed stuffs the demand, decomposes it, and lays the slices out as rounds: all of them
// (kept in o.Plans when set), or with lazy one at a time (plan.next), kept nowhere.
func decomposed(ctx context.Context, algo string, d *schedules.Demand, o schedules.Options, decompose decomposer, lazy bool) (plan, error) {
	if err := o.Check(); err != nil {
		return plan{}, fmt.Errorf("%s: %w", algo, err)
	}
	real, err := realMatrix(d)
	if err != nil {
		return plan{}, fmt.Errorf("%s: %w", algo, err)
	}
	build := func() (plan, error) {
		stuffed, norm, err := stuffing.Stuff(real)
		if err != nil {
			return plan{}, fmt.Errorf("%s: %w", algo, err)
		}
		if n := int64(len(real)); n > 0 && norm > math.MaxInt64/n {
			// The stuffed matrix holds n·norm bytes in all; its sums must stay exact.
			return plan{}, fmt.Errorf("%s: %d ports with %d bytes on the busiest line overflow int64 totals", algo, n, norm)
		}
		var added int64
		for i := range stuffed {
			for j := range stuffed[i] {
				added += stuffed[i][j] - real[i][j]
			}
		}
		slices, err := decompose(ctx, stuffed)
		if err != nil {
			return plan{}, fmt.Errorf("%s: %w", algo, err)
		}
		options := map[string]string{
			"norm_bytes":    strconv.FormatInt(norm, 10),
			"stuffed_bytes": strconv.FormatInt(added, 10),
		}
		if lazy {
			return slicePlan(real, slices, options), nil
		}
		return fromSlices(real, slices, options), nil
	}
	if lazy {
		return build()
	}
	return planOf(o, algo, real, build)
}

// MaxWeight schedules d by repeated maximum-weight matching of the residual demand: each round is
// a maximum-weight assignment (matching.MaxWeightAssignment, O(n³)) of what is left, and every
// pair in it with bytes left sends all of them. Each round empties at least one pair.
func MaxWeight(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	p, err := maxWeightPlan(ctx, d, o)
	if err != nil {
		return nil, err
	}
	return place(ctx, "maxweight", d, o, p)
}

// MaxWeightRounds is MaxWeight round by round (schedules.RoundStream); its plan, at most one
// round per nonzero pair, is made whole first.
func MaxWeightRounds(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.RoundStream, error) {
	p, err := maxWeightPlan(ctx, d, o)
	if err != nil {
		return nil, err
	}
	return placeRounds("maxweight", d, o, p)
}

// maxWeightPlan is MaxWeight's plan of d.
func maxWeightPlan(ctx context.Context, d *schedules.Demand, o schedules.Options) (plan, error) {
	if err := o.Check(); err != nil {
		return plan{}, fmt.Errorf("maxweight: %w", err)
	}
	res, err := realMatrix(d)
	if err != nil {
		return plan{}, fmt.Errorf("maxweight: %w", err)
	}
	// planOf keys the plan on res before build drains it.
	return planOf(o, "maxweight", res, func() (plan, error) {
		left := 0
		for _, row := range res {
			for _, v := range row {
				if v > 0 {
					left++
				}
			}
		}
		p := plan{options: map[string]string{}}
		for left > 0 {
			if err := ctx.Err(); err != nil {
				return plan{}, err
			}
			rows, cols, w := active(res)
			perm, _, err := matching.MaxWeightAssignment(w)
			if err != nil {
				return plan{}, fmt.Errorf("maxweight: %w", err)
			}
			var round []piece
			for a, b := range perm {
				if a >= len(rows) || b >= len(cols) {
					continue // padding
				}
				if i, j := rows[a], cols[b]; res[i][j] > 0 {
					round = append(round, piece{i, j, res[i][j]})
					res[i][j] = 0
					left--
				}
			}
			slices.SortFunc(round, func(x, y piece) int { return x.src - y.src })
			if len(round) == 0 {
				return plan{}, fmt.Errorf("maxweight: round %d: the assignment matched no pair with bytes left", len(p.rounds))
			}
			p.rounds = append(p.rounds, round)
		}
		p.options["rounds"] = strconv.Itoa(len(p.rounds))
		return p, nil
	})
}

// active is the residual cut down to the rows and columns that still have bytes, padded with
// zeros to a square: lines without bytes add nothing to any matching's weight, and dropping them
// makes the O(n³) assignment cheaper as the residual drains.
func active(res [][]int64) (rows, cols []int, w [][]int64) {
	n := len(res)
	colLive := make([]bool, n)
	for i, row := range res {
		live := false
		for j, v := range row {
			if v > 0 {
				live, colLive[j] = true, true
			}
		}
		if live {
			rows = append(rows, i)
		}
	}
	for j, live := range colLive {
		if live {
			cols = append(cols, j)
		}
	}
	k := max(len(rows), len(cols))
	w = make([][]int64, k)
	cells := make([]int64, k*k)
	for a := range w {
		w[a] = cells[a*k : (a+1)*k : (a+1)*k]
		if a < len(rows) {
			for b, j := range cols {
				w[a][b] = res[rows[a]][j]
			}
		}
	}
	return rows, cols, w
}
