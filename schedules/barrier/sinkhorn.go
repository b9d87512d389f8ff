package barrier

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/stuffing"
)

// SinkhornScale is the common line sum of the integer matrix that BvNSinkhorn decomposes: 2^40
// units, so that n·scale stays far inside int64 for every fabric this project builds and an entry
// keeps about twelve significant digits.
const SinkhornScale = int64(1) << 40

// Sinkhorn's iteration stops when every row sum is within sinkhornTol of 1 after a column
// normalisation (columns are then exact), or after sinkhornMaxIter sweeps.
const (
	sinkhornTol     = 1e-12
	sinkhornMaxIter = 10000
)

// BvNSinkhorn schedules d by Birkhoff–von Neumann decomposition of its Sinkhorn scaling, the other
// normalisation Tetris §2.2 names for an asymmetric demand (its reference [51]) besides stuffing.
//
// Sinkhorn–Knopp alternately divides every row and every column of the demand by its sum until
// the matrix is doubly stochastic: P = diag(r)·D·diag(c), with the support of D (the positive
// entries) and no entry added. It is scaled to SinkhornScale units per line and rounded; every
// demand entry keeps at least one unit, and the few units the rounding (or a demand without total
// support, such as one with an idle port, where Sinkhorn cannot converge) leaves short are made up
// by stuffing (package stuffing; recorded as "repair_units"). The integer matrix is then
// decomposed as bvn does (any perfect matching per step, Hopcroft–Karp): Σ λ_k·Perm_k.
//
// How slices map back to bytes: P_ij and D_ij are proportional along each entry but with a
// different factor r_i·c_j per entry, so a slice's λ_k is no duration. Slice k gives pair (i, j)
// the share λ_k / P_ij of D_ij, which over the slices that contain (i, j) adds up to D_ij exactly
// (cumulative shares, rounded down at each boundary, so the pieces are integers summing to
// D_ij). Each slice with any real byte becomes one barrier round that lasts until its longest
// circuit ends, as MaxWeight's rounds do; a slice that carries no byte (repair units only) is
// dropped, since executing it would move nothing.
func BvNSinkhorn(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	pl, err := sinkhornPlan(ctx, d, o, false)
	if err != nil {
		return nil, err
	}
	return place(ctx, "bvn-sinkhorn", d, o, pl)
}

// BvNSinkhornRounds is BvNSinkhorn round by round (schedules.RoundStream): without a plan cache,
// each round's pieces are made from the decomposition only when the stream is asked for it.
func BvNSinkhornRounds(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.RoundStream, error) {
	pl, err := sinkhornPlan(ctx, d, o, o.Plans == nil)
	if err != nil {
		return nil, err
	}
	return placeRounds("bvn-sinkhorn", d, o, pl)
}

// sinkhornPlan is bvn-sinkhorn's plan of d; lazy makes its rounds one at a time (plan.next, its
// options complete once the last is made) and keeps it in no cache.
func sinkhornPlan(ctx context.Context, d *schedules.Demand, o schedules.Options, lazy bool) (plan, error) {
	const algo = "bvn-sinkhorn"
	if err := o.Check(); err != nil {
		return plan{}, fmt.Errorf("%s: %w", algo, err)
	}
	real, err := realMatrix(d)
	if err != nil {
		return plan{}, fmt.Errorf("%s: %w", algo, err)
	}
	build := func() (plan, error) {
		n := len(real)
		if n > 0 && int64(n) > math.MaxInt64/(2*SinkhornScale) {
			return plan{}, fmt.Errorf("%s: %d ports overflow the scaled matrix's int64 totals", algo, n)
		}
		p, iters := sinkhorn(real)
		scaled := make([][]int64, n)
		for i := range n {
			scaled[i] = make([]int64, n)
			for j := range n {
				if real[i][j] > 0 {
					scaled[i][j] = max(1, int64(math.Round(p[i][j]*float64(SinkhornScale))))
				}
			}
		}
		stuffed, norm, err := stuffing.Stuff(scaled)
		if err != nil {
			return plan{}, fmt.Errorf("%s: %w", algo, err)
		}
		var repair int64
		for i := range stuffed {
			for j := range stuffed[i] {
				repair += stuffed[i][j] - scaled[i][j]
			}
		}
		sl, err := DecomposeBvN(ctx, stuffed, false)
		if err != nil {
			return plan{}, fmt.Errorf("%s: %w", algo, err)
		}
		options := map[string]string{
			"slices":              strconv.Itoa(len(sl)),
			"sinkhorn_iterations": strconv.Itoa(iters),
			"norm_units":          strconv.FormatInt(norm, 10),
			"repair_units":        strconv.FormatInt(repair, 10),
		}
		finish := func(rounds, dropped int) {
			options["rounds"] = strconv.Itoa(rounds)
			options["dropped_slices"] = strconv.Itoa(dropped)
		}
		if !lazy {
			pl, dropped := fromScaledSlices(real, stuffed, sl)
			finish(len(pl.rounds), dropped)
			pl.options = options
			return pl, nil
		}
		pl, dropped := scaledPlan(real, stuffed, sl)
		next, rounds := pl.next, 0
		pl.next = func() ([]piece, bool) {
			round, ok := next()
			if ok {
				rounds++
			} else {
				finish(rounds, *dropped)
			}
			return round, ok
		}
		pl.options = options
		return pl, nil
	}
	if lazy {
		return build()
	}
	return planOf(o, algo, real, build)
}

// sinkhorn returns the Sinkhorn–Knopp scaling of m (rows, then columns, normalised to sum 1 in
// turn) and the number of sweeps it took. A line with no positive entry is left at zero.
func sinkhorn(m [][]int64) ([][]float64, int) {
	n := len(m)
	p := make([][]float64, n)
	var total float64
	for i := range n {
		p[i] = make([]float64, n)
		for j := range n {
			p[i][j] = float64(m[i][j])
			total += p[i][j]
		}
	}
	if total == 0 {
		return p, 0
	}
	col := make([]float64, n)
	it := 0
	for it < sinkhornMaxIter {
		it++
		for i := range n {
			var s float64
			for _, v := range p[i] {
				s += v
			}
			if s > 0 {
				for j := range p[i] {
					p[i][j] /= s
				}
			}
		}
		clear(col)
		for i := range n {
			for j, v := range p[i] {
				col[j] += v
			}
		}
		for i := range n {
			for j := range p[i] {
				if col[j] > 0 {
					p[i][j] /= col[j]
				}
			}
		}
		worst := 0.0
		for i := range n {
			var s float64
			for _, v := range p[i] {
				s += v
			}
			if s > 0 {
				worst = max(worst, math.Abs(s-1))
			}
		}
		if worst <= sinkhornTol {
			break
		}
	}
	return p, it
}

// fromScaledSlices maps a decomposition of the scaled matrix p back to real bytes (see
// BvNSinkhorn): pair (i, j) gets, in slice k, floor(D·C_k/P) − floor(D·C_{k−1}/P) bytes, C_k the
// units of (i, j) in slices up to k. Rounds keep the slices' order; slices with no byte are
// dropped and counted.
func fromScaledSlices(real, p [][]int64, sl []Slice) (plan, int) {
	lazy, dropped := scaledPlan(real, p, sl)
	var pl plan
	for {
		round, ok := lazy.next()
		if !ok {
			break
		}
		// Kept at their exact size: grown by append, a plan of millions of pieces (n = 256,
		// dense) would hold up to twice its size.
		pl.rounds = append(pl.rounds, slices.Clone(round))
	}
	return pl, *dropped
}

// scaledPlan is fromScaledSlices made one round at a time (plan.next, each round in a buffer the
// next call reuses); the count of dropped slices is final once next has reported the end.
func scaledPlan(real, p [][]int64, sl []Slice) (plan, *int) {
	n := len(real)
	cum := make([][]int64, n)
	for i := range cum {
		cum[i] = make([]int64, n)
	}
	dropped, k := new(int), 0
	buf := make([]piece, 0, n)
	next := func() ([]piece, bool) {
		for k < len(sl) {
			s := sl[k]
			sl[k].Perm = nil // made into pieces: the permutation can go
			k++
			round := buf[:0]
			for i, j := range s.Perm {
				before := cum[i][j]
				cum[i][j] += s.Duration
				if real[i][j] == 0 {
					continue
				}
				if b := share(real[i][j], cum[i][j], p[i][j]) - share(real[i][j], before, p[i][j]); b > 0 {
					round = append(round, piece{i, j, b})
				}
			}
			buf = round
			if len(round) == 0 {
				*dropped++
				continue
			}
			return round, true
		}
		return nil, false
	}
	return plan{next: next}, dropped
}

// share is floor(d·c/p) for 0 ≤ c ≤ p, p > 0, exact in 128 bits: it is at most d.
func share(d, c, p int64) int64 {
	hi, lo := bits.Mul64(uint64(d), uint64(c))
	q, _ := bits.Div64(hi, lo, uint64(p))
	return int64(q)
}
