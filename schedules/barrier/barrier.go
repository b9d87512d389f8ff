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
	schedules.Register("bvn", "Birkhoff–von Neumann on the stuffed demand, any perfect matching per round (barrier)", schedules.SchedulerFunc(BvN))
	schedules.Register("bvn-maxmin", "Birkhoff–von Neumann on the stuffed demand, max-min perfect matching per round (barrier)", schedules.SchedulerFunc(BvNMaxMin))
	schedules.Register("maxweight", "repeated maximum-weight matching of the residual, each pair sends all it has (barrier)", schedules.SchedulerFunc(MaxWeight))
	schedules.Register("solstice", "Solstice: stuffing, then power-of-two threshold slices (barrier)", schedules.SchedulerFunc(Solstice))
	schedules.Register("bvn-sinkhorn", "Birkhoff–von Neumann on the Sinkhorn-scaled (doubly stochastic) demand, any perfect matching per round (barrier)", schedules.SchedulerFunc(BvNSinkhorn))
}

// BvN schedules d by Birkhoff–von Neumann decomposition with any perfect matching per round.
func BvN(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	return decomposed(ctx, "bvn", d, o, func(ctx context.Context, m [][]int64) ([]Slice, error) {
		return DecomposeBvN(ctx, m, false)
	})
}

// BvNMaxMin schedules d by Birkhoff–von Neumann decomposition with the max-min perfect matching
// per round.
func BvNMaxMin(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	return decomposed(ctx, "bvn-maxmin", d, o, func(ctx context.Context, m [][]int64) ([]Slice, error) {
		return DecomposeBvN(ctx, m, true)
	})
}

// Solstice schedules d by Solstice's stuffing and power-of-two threshold slicing.
func Solstice(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	return decomposed(ctx, "solstice", d, o, DecomposeSolstice)
}

// decomposed stuffs the demand, decomposes it, and lays the slices out as rounds.
func decomposed(ctx context.Context, algo string, d *schedules.Demand, o schedules.Options,
	decompose func(context.Context, [][]int64) ([]Slice, error)) (*schedules.Schedule, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", algo, err)
	}
	real, err := realMatrix(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", algo, err)
	}
	p, err := planOf(o, algo, real, func() (plan, error) {
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
		return fromSlices(real, slices, options), nil
	})
	if err != nil {
		return nil, err
	}
	return place(ctx, algo, d, o, p)
}

// MaxWeight schedules d by repeated maximum-weight matching of the residual demand: each round is
// a maximum-weight assignment (matching.MaxWeightAssignment, O(n³)) of what is left, and every
// pair in it with bytes left sends all of them. Each round empties at least one pair.
func MaxWeight(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("maxweight: %w", err)
	}
	res, err := realMatrix(d)
	if err != nil {
		return nil, fmt.Errorf("maxweight: %w", err)
	}
	// planOf keys the plan on res before build drains it.
	p, err := planOf(o, "maxweight", res, func() (plan, error) {
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
	if err != nil {
		return nil, err
	}
	return place(ctx, "maxweight", d, o, p)
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
