package holo

import (
	"context"
	"fmt"
	"math"
	"math/bits"
)

// PaperStageOffset is the −3.3 of the tree embedded in a ring's stage count lg N − 3.3 (Er-El and
// Feitelson §3.1.4): lg(S·T_f/(T_d + T_c)) with a configuration change worth about ten forwards.
const PaperStageOffset = 3.3

// ClosedForm is the paper's running time of algorithm for p (Er-El and Feitelson §3.1), with the
// per-stage T_d read as the header cost H·T_d and T_c = T_r + T_w:
//
//	naive          (N−1)(T_c + S·T_b)
//	ring           T_c + (N−1)·S·T_f + 2·S·T_d
//	tree           lg N·(S·T_f + H·T_d + T_c) + 2·S·T_d
//	tree-ring      T_c + (lg N − 3.3)(2·S·T_f + H·T_d + T_c) + 2·S·T_d     (an approximation)
//	tree-ring-alt  T_c + (2/lg k)·lg N·(2·S·T_f + H·T_d + T_c) + 2·S·T_d   (its bound on the stages)
//
// The last is the paper's upper bound of 2·log_k N stages at the plain version's cost per stage;
// it is NaN where k < 2.
func ClosedForm(algorithm string, p Params) (float64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	n, s, lg := float64(p.Nodes), p.S(), math.Log2(float64(p.Nodes))
	tc, sd, hd := p.TC(), s*p.TD(), p.HeaderCost()
	switch algorithm {
	case Naive:
		return (n - 1) * (tc + s*p.TB), nil
	case Ring:
		return tc + (n-1)*s*p.TF + 2*sd, nil
	case Tree:
		return lg*(s*p.TF+hd+tc) + 2*sd, nil
	case TreeRing:
		return tc + (lg-PaperStageOffset)*(2*s*p.TF+hd+tc) + 2*sd, nil
	case TreeRingAlt:
		k := p.K()
		if k < 2 {
			return math.NaN(), nil
		}
		return tc + 2/math.Log2(float64(k))*lg*(2*s*p.TF+hd+tc) + 2*sd, nil
	}
	return 0, fmt.Errorf("algorithm %q: want one of %v", algorithm, Algorithms)
}

// ModelForm is the exact running time of algorithm in this package's model, where there is a
// closed form (ok false otherwise):
//
//   - naive: the paper's, for any T_r (its CSets never overlap);
//   - ring: the paper's, while T_r ≤ S·T_f (then no FU waits for its own link to settle);
//   - tree, T_r = 0: max over nodes x of (⌊lg x⌋+1)(T_c + S·T_f) + (popcount(x)−1)·H·T_d, plus
//     2·S·T_d. Node x hears from x − 2^⌊lg x⌋ in stage ⌊lg x⌋; every sender on its path but node
//     0 first lifts a header. At N = 2^n this is n(T_c + S·T_f) + (n−1)·H·T_d + 2·S·T_d: the
//     paper's form less one H·T_d, because node 0 holds the message in stage 1 and lifts none.
func ModelForm(algorithm string, p Params) (float64, bool) {
	if p.Validate() != nil {
		return 0, false
	}
	s := p.S()
	switch algorithm {
	case Naive:
		v, _ := ClosedForm(Naive, p)
		return v, true
	case Ring:
		if p.TR > s*p.TF {
			return 0, false
		}
		v, _ := ClosedForm(Ring, p)
		return v, true
	case Tree:
		if p.TR != 0 {
			return 0, false
		}
		best := 0.0
		for x := 1; x < p.Nodes; x++ {
			t := float64(bits.Len(uint(x)))*(p.TC()+s*p.TF) + float64(bits.OnesCount(uint(x))-1)*p.HeaderCost()
			best = math.Max(best, t)
		}
		return best + 2*s*p.TD(), true
	}
	return 0, false
}

// TcHalfClosed is T_c^0.5 from the closed form (Er-El and Feitelson §3.3): the configuration time
// at which the broadcast takes twice its T_c = 0 time, with T_r = 0. The naive, ring and tree forms
// are linear in T_c: T_c^0.5 = T(0)/(dT/dT_c). The tree-in-ring forms have none (NaN): their
// stage counts assume a configuration change worth about ten forwards, which T_c = 0 is not.
func TcHalfClosed(algorithm string, p Params) float64 {
	switch algorithm {
	case Naive, Ring, Tree:
	default:
		return math.NaN()
	}
	p.TR, p.TW = 0, 0
	t0, err := ClosedForm(algorithm, p)
	if err != nil {
		return math.NaN()
	}
	p.TW = 1
	t1, _ := ClosedForm(algorithm, p)
	if slope := t1 - t0; slope > 0 {
		return t0 / slope
	}
	return math.NaN()
}

// TcHalfSimulated is T_c^0.5 from the simulator: with T_r = 0, the T_c (bisected to a relative
// 1e-9) at which the simulated broadcast takes twice its simulated T_c = 0 time. The plans are
// rebuilt at every T_c, so the tree-in-ring k follows it; its time is then not strictly monotone
// in T_c (k steps), and the bisection finds one crossing, between the last T_c tried below twice
// the optimum and the first above it.
func TcHalfSimulated(ctx context.Context, algorithm string, p Params) (float64, error) {
	p.TR, p.TW = 0, 0
	sim := func(tc float64) (float64, error) {
		q := p
		q.TW = tc
		plan, err := NewPlan(algorithm, q)
		if err != nil {
			return 0, err
		}
		r, err := Run(ctx, q, plan)
		if err != nil {
			return 0, err
		}
		return r.Seconds, nil
	}
	t0, err := sim(0)
	if err != nil {
		return 0, err
	}
	lo, hi := 0.0, math.Max(t0, 1e-12)
	for {
		t, err := sim(hi)
		if err != nil {
			return 0, err
		}
		if t >= 2*t0 {
			break
		}
		lo, hi = hi, 2*hi
		if hi > 1e12 {
			return math.NaN(), nil
		}
	}
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		t, err := sim(mid)
		if err != nil {
			return 0, err
		}
		if t >= 2*t0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// Inequality is one of the paper's simplified crossover inequalities (Er-El and Feitelson §3.2):
// Holds(N) says whether the ring is still faster by it.
type Inequality struct {
	Text  string
	Holds func(n int) bool
}

// PaperInequalities are §3.2's simplified conditions for the ring to beat the tree and the tree
// embedded in a ring: T_c dropped on the left, T_d on the right, T_c ≈ 10·S·T_f.
var PaperInequalities = map[string]Inequality{
	Tree: {"(N−1)/lg N < 11", func(n int) bool {
		return float64(n-1)/math.Log2(float64(n)) < 11
	}},
	// The paper prints "(N−1)/lg N − 3.3 < 12": from (N−1)·S·T_f < (lg N − 3.3)·12·S·T_f, divided
	// through by lg N − 3.3, which is negative below N = 10: that is where it "holds".
	TreeRing: {"(N−1)/(lg N − 3.3) < 12", func(n int) bool {
		return float64(n-1)/(math.Log2(float64(n))-PaperStageOffset) < 12
	}},
}

// Below is the first N ≥ 2 at which the inequality fails (it holds for every 2 ≤ N < Below),
// searched up to MaxNodes; 0 if it never fails there.
func (q Inequality) Below() int {
	for n := 2; n <= MaxNodes; n++ {
		if !q.Holds(n) {
			return n
		}
	}
	return 0
}
