package tetris

import (
	"cmp"
	"math"
	"slices"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// router is Algorithm 3 (Tetris §3.2): benes.Route decides the Beneš levels from the root down
// and asks it to orient each constraint component. For each of the two legal orientations it forms
// every affected connection's partial path (the ancestor traversals already fixed plus the entry and
// exit switches of this level), takes the time t that partial path becomes available against S, and
// costs both endpoints of the connection as t − α_r + W_e. The orientation whose costs, sorted in
// decreasing order, are lexicographically smaller wins; on a tie, the one with fewer switch state
// changes at this level; on a further tie, orientation 0. W stays fixed while a matching is routed.
type router struct {
	w     []float64 // W_e: transmitters 0..n−1, then receivers n..2n−1
	n     int
	alpha float64

	plan  *benesPlan
	conns []benes.Conn
	// anc[i] is the readiness of connection i's traversals on the levels below ancLevels[i], all
	// already decided: the ancestor part of its partial path, extended as routing descends. It
	// holds the time's bits, which order as the times do (allPairs), and is 0 before any level.
	anc       []uint64
	ancLevels []int
	ancBlock  []int // the block connection i is in at level ancLevels[i]
	// starts[2i+c] is connection i's Start(S, p) over its whole path when it takes child c at
	// the last level Route decides (k−2): choose computes both orientations' partial starts
	// through that level anyway, and the middle switch below each child is one more traversal.
	// Step 7 reads it for the child routing took (benesPlan.start), instead of walking the path
	// again; S does not change while a matching is routed, nor while its circuits are committed
	// (see benesPlan.start), so the value is the path's start then too.
	starts []uint64

	costs    [2][]float64
	rec      func(orientation)
	chooseFn benes.Chooser // r.choose, made once
	// charge, when not nil, is each switch's wear charge (wear.go): an orientation's costs
	// then include the charges of the switch states it changes at the level.
	charge []float64
}

// orientation records one component decision, for tests and explanations.
type orientation struct {
	Level, Block int
	Conns        []benes.Conn
	// Costs[q] are orientation q's endpoint costs in decreasing order; Changes[q] its switch state
	// changes at this level.
	Costs   [2][]float64
	Changes [2]int
	Flip    bool
}

func (r *router) bind(p *benesPlan, conns []benes.Conn) {
	r.plan, r.conns = p, conns
	if cap(r.anc) < r.n {
		// A matching has at most n connections, so a component at most 2n endpoint costs.
		ints, f64 := make([]int, 2*r.n), make([]float64, 4*r.n)
		r.anc, r.ancLevels, r.ancBlock = make([]uint64, 0, r.n), ints[:0:r.n], ints[r.n:r.n]
		r.costs[0], r.costs[1] = f64[:0:2*r.n], f64[2*r.n:]
		r.starts = make([]uint64, 2*r.n)
	}
	r.anc, r.ancLevels, r.ancBlock = r.anc[:0], r.ancLevels[:0], r.ancBlock[:0]
	for range conns {
		r.anc = append(r.anc, 0)
		r.ancLevels = append(r.ancLevels, 0)
		r.ancBlock = append(r.ancBlock, 0)
	}
}

// partialStart is Plan.PartialStart(src, dst, ch, level) for connection i: when its partial path
// through levels 0..level can be established. It reads the traversal readiness the path query
// computed for this iteration (S does not change while a matching is routed) and keeps the
// ancestor levels' maximum, so each call costs one level.
func (r *router) partialStart(i int, ch uint32, level int, choices []uint32) float64 {
	cn := r.conns[i]
	in, out := r.plan.f.LevelTraversals(cn.Src, cn.Dst, ch, level)
	return r.levelStart(i, in, out, level, choices)
}

// levelStart is partialStart with the traversals of this level already at hand.
func (r *router) levelStart(i int, in, out benes.Traversal, level int, choices []uint32) float64 {
	return max(math.Float64frombits(r.ancestors(i, level, choices)), r.ready(in), r.ready(out))
}

// ancestors is the readiness of connection i's traversals on the levels below level, extending
// what is kept from earlier levels.
func (r *router) ancestors(i, level int, choices []uint32) uint64 {
	f, cn := r.plan.f, r.conns[i]
	k, nh, ready := f.Levels(), f.Ports()/2, r.plan.all.ready
	for s := r.ancLevels[i]; s < level; s++ {
		// LevelTraversals of level s, from switch indices: the block b is kept as it descends.
		if s == k-1 {
			r.anc[i] = max(r.anc[i], math.Float64bits(ready[4*(s*nh+r.ancBlock[i])+(cn.Src>>s&1)<<1|cn.Dst>>s&1]))
			continue
		}
		b, half := r.ancBlock[i], f.Ports()>>(s+1)
		lin, lout, c := cn.Src>>s, cn.Dst>>s, int(choices[i]>>s)&1
		in := ready[4*(s*nh+b*half+lin>>1)+(lin&1)<<1|c]
		out := ready[4*((2*k-2-s)*nh+b*half+lout>>1)+c<<1|lout&1]
		r.anc[i] = max(r.anc[i], math.Float64bits(in), math.Float64bits(out))
		r.ancBlock[i] = 2*b + c
	}
	r.ancLevels[i] = max(r.ancLevels[i], level)
	return r.anc[i]
}

func (r *router) ready(t benes.Traversal) float64 {
	return r.plan.all.ready[4*r.plan.f.SwitchID(t.Stage, t.Switch)+t.In<<1|t.Out]
}

func (r *router) choose(c benes.Component, choices []uint32) bool {
	var changes [2]int
	// Sorted in decreasing order, two cost vectors of the same length compare as their largest
	// value with different multiplicities, so a connection whose partial start is the same under
	// both orientations adds the same two costs to both and cannot decide: only the others are
	// kept, and their maxima usually decide without sorting.
	d0, d1 := r.costs[0][:0], r.costs[1][:0]
	f, s := r.plan.f, c.Level
	nh, half := f.Ports()/2, f.Ports()>>(s+1)
	inStage, outStage := s, f.Stages()-1-s
	ready := r.plan.all.ready
	for k, i := range c.Conns {
		cn := r.conns[i]
		var t [2]float64
		if s >= f.Levels()-1 { // the middle level: Route does not ask, but be general
			for q := range 2 {
				ch := choices[i] | uint32(c.Child0[k]^uint8(q))<<s
				in, out := f.LevelTraversals(cn.Src, cn.Dst, ch, s)
				t[q] = r.levelStart(i, in, out, s, choices)
				changes[q] += r.changed(in)
			}
		} else {
			// The traversals LevelTraversals gives for child ch: input switch inSw from lane li
			// to lane ch, output switch outSw from lane ch to lane lo. Readiness is compared as
			// bits (see allPairs), which needs no NaN or signed-zero handling.
			var anc uint64
			if r.ancLevels[i] == s-1 {
				// The usual case: Route asks level by level, so one ancestor level is new.
				p := s - 1
				b, hp := r.ancBlock[i], half<<1
				pin, pout, pc := cn.Src>>p, cn.Dst>>p, int(choices[i]>>p)&1
				in := math.Float64bits(ready[4*(p*nh+b*hp+pin>>1)+(pin&1)<<1|pc])
				out := math.Float64bits(ready[4*((outStage+1)*nh+b*hp+pout>>1)+pc<<1|pout&1])
				anc = max(r.anc[i], in, out)
				r.anc[i], r.ancLevels[i], r.ancBlock[i] = anc, s, 2*b+pc
			} else {
				anc = r.ancestors(i, s, choices)
			}
			b := r.ancBlock[i]
			lin, lout := cn.Src>>s, cn.Dst>>s
			inSw, outSw, li, lo := b*half+lin>>1, b*half+lout>>1, lin&1, lout&1
			inID, outID := 4*(inStage*nh+inSw), 4*(outStage*nh+outSw)
			inState, outState := r.plan.p.StateOf(inID/4), r.plan.p.StateOf(outID/4)
			// Orientation 0 sends the connection to child c0, orientation 1 to the other; a
			// traversal from lane i to lane j changes a switch in state σ when σ ≠ i XOR j. The
			// counts are sums of bits, not branches, which the predictor could not foresee.
			c0 := int(c.Child0[k])
			t[0] = math.Float64frombits(max(anc, math.Float64bits(ready[inID+li<<1|c0]), math.Float64bits(ready[outID+c0<<1|lo])))
			t[1] = math.Float64frombits(max(anc, math.Float64bits(ready[inID+li<<1|c0^1]), math.Float64bits(ready[outID+(c0^1)<<1|lo])))
			if s == f.Levels()-2 {
				r.lastLevel(i, b, t, c0)
			}
			in0 := (int(inState) ^ li ^ c0) & 1
			out0 := (int(outState) ^ lo ^ c0) & 1
			changes[0] += in0 + out0
			changes[1] += 2 - in0 - out0
			if r.charge != nil {
				ci, co := r.charge[inID/4], r.charge[outID/4]
				t[0] += float64(in0)*ci + float64(out0)*co
				t[1] += float64(1-in0)*ci + float64(1-out0)*co
			}
		}
		// Written always, kept when the orientations differ: again no branch to mispredict.
		ws, wd := r.w[cn.Src], r.w[r.n+cn.Dst]
		m := len(d0)
		d0, d1 = d0[:m+2], d1[:m+2]
		d0[m], d0[m+1] = t[0]-r.alpha+ws, t[0]-r.alpha+wd
		d1[m], d1[m+1] = t[1]-r.alpha+ws, t[1]-r.alpha+wd
		keep := 2 * int(b2u(t[0] != t[1]))
		d0, d1 = d0[:m+keep], d1[:m+keep]
	}
	order := 0
	if len(d0) > 0 {
		if m0, m1 := slices.Max(d0), slices.Max(d1); m0 != m1 {
			order = cmp.Compare(m0, m1)
		} else {
			// Decreasing order compared from the front is increasing order compared from the back.
			slices.Sort(d0)
			slices.Sort(d1)
			for j := len(d0) - 1; j >= 0 && order == 0; j-- {
				order = cmp.Compare(d0[j], d1[j])
			}
		}
	}
	flip := false
	switch order {
	case 1:
		flip = true
	case 0:
		flip = changes[1] < changes[0]
	}
	if r.rec != nil {
		r.record(c, choices, changes, flip)
	}
	return flip
}

// lastLevel keeps connection i's whole-path starts (starts) from its partial starts t through
// the last decided level, in block b of it, where orientation q sends it to child c0^q: below
// child c is the middle level's switch of block 2b+c, traversed from lane src's bit k−1 to
// dst's. Start(S, p) is the maximum over the path's traversals, so this is pathReady's value.
func (r *router) lastLevel(i, b int, t [2]float64, c0 int) {
	f, cn := r.plan.f, r.conns[i]
	k, nh, ready := f.Levels(), f.Ports()/2, r.plan.all.ready
	x := (cn.Src>>(k-1)&1)<<1 | cn.Dst>>(k-1)&1
	for q := range 2 {
		c := c0 ^ q
		mid := math.Float64bits(ready[4*((k-1)*nh+2*b+c)+x])
		r.starts[2*i+c] = max(math.Float64bits(t[q]), mid)
	}
}

// record reports a decision with both orientations' whole cost vectors, for tests.
func (r *router) record(c benes.Component, choices []uint32, changes [2]int, flip bool) {
	o := orientation{Level: c.Level, Block: c.Block, Changes: changes, Flip: flip}
	for _, i := range c.Conns {
		o.Conns = append(o.Conns, r.conns[i])
	}
	for q := range 2 {
		for k, i := range c.Conns {
			cn := r.conns[i]
			ch := choices[i] | uint32(c.Child0[k]^uint8(q))<<c.Level
			t := r.partialStart(i, ch, c.Level, choices)
			o.Costs[q] = append(o.Costs[q], t-r.alpha+r.w[cn.Src], t-r.alpha+r.w[r.n+cn.Dst])
		}
		slices.SortFunc(o.Costs[q], func(a, b float64) int { return cmp.Compare(b, a) })
	}
	r.rec(o)
}

// changed is 1 when the traversal needs a state other than its switch's planned state σ_s.
func (r *router) changed(t benes.Traversal) int {
	st, _, _ := r.plan.p.SwitchState(t.Stage, t.Switch)
	if st != t.State() {
		return 1
	}
	return 0
}
