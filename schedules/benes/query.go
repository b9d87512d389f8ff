package benes

import "math"

// Plan is the schedule-so-far state S of Tetris §3.3, kept per switch: its planned state σ_s
// (Bar before anything is committed), F_s (the end of its latest user), Q_s (the completion time
// of the reconfiguration that set σ_s, 0 initially), and the release time of each of its input
// lanes (I_{s,i}) and output lanes (O_{s,j}). Query, Start and PartialStart only read it, so they
// may run concurrently with each other but not with Commit or Reset.
type Plan struct {
	f     *Fabric
	alpha float64
	sw    []switchPlan // indexed by SwitchID
}

// switchPlan keeps one switch's state together so a traversal's readiness costs one cache line.
type switchPlan struct {
	in, out [2]float64 // I_{s,i} and O_{s,j}
	f, q    float64
	state   State
}

// NewPlan returns the empty plan of fabric f with reconfiguration delay alphaR seconds.
func NewPlan(f *Fabric, alphaR float64) *Plan {
	return &Plan{f: f, alpha: alphaR, sw: make([]switchPlan, f.NumSwitches())}
}

// Reset forgets every committed circuit.
func (p *Plan) Reset() { clear(p.sw) }

// Fabric is the fabric the plan is for.
func (p *Plan) Fabric() *Fabric { return p.f }

// AlphaR is the reconfiguration delay α_r.
func (p *Plan) AlphaR() float64 { return p.alpha }

// SwitchState returns σ_s, F_s and Q_s of switch sw of stage stage.
func (p *Plan) SwitchState(stage, sw int) (state State, f, q float64) {
	s := &p.sw[p.f.SwitchID(stage, sw)]
	return s.state, s.f, s.q
}

// StateOf is σ_s of the switch with SwitchID id, for loops that hold switch indices.
func (p *Plan) StateOf(id int) State { return p.sw[id].state }

// LaneRelease returns the planned release times I_{s,lane} and O_{s,lane} of the input and output
// lane lane of switch sw of stage stage.
func (p *Plan) LaneRelease(stage, sw, lane int) (in, out float64) {
	s := &p.sw[p.f.SwitchID(stage, sw)]
	return s.in[lane], s.out[lane]
}

// ready is max{I_{s,i}, O_{s,j}, q_{s,i,j}} for the traversal of switch id from lane in to lane
// out, and whether it needs a state change. A switch already in the needed state is usable once the
// reconfiguration that set it completes (Q_s); otherwise it can only be reconfigured after its last
// user ends, which takes α_r (F_s + α_r).
func (p *Plan) ready(id, in, out int) (float64, int) {
	return p.reach(&p.sw[id], in, out, math.Inf(-1), 0)
}

// TraversalReady is max{I_{s,i}, O_{s,j}, q_{s,i,j}} for one traversal and whether it changes the
// switch's planned state; Start is the maximum of it over a path. Tetris uses it to cost the
// switches a component's orientation decides.
func (p *Plan) TraversalReady(t Traversal) (ready float64, change bool) {
	r, c := p.ready(p.f.SwitchID(t.Stage, t.Switch), t.In, t.Out)
	return r, c == 1
}

// AllTraversalReady writes TraversalReady of every traversal into dst: switch id's (SwitchID)
// traversal from in-lane i to out-lane j at dst[4·id + 2i + j]. dst must have 4·NumSwitches()
// entries. It is the same value as TraversalReady, for callers that need every switch at once.
func (p *Plan) AllTraversalReady(dst []float64) {
	dst = dst[:4*len(p.sw)]
	for id := range p.sw {
		sw := &p.sw[id]
		r := dst[4*id : 4*id+4 : 4*id+4]
		// Bar is (0,0) and (1,1); Cross is (0,1) and (1,0). The traversals of the planned state
		// are ready at Q_s, the others at F_s + α_r: swapped by the state without a branch,
		// since states are coin flips to the branch predictor and this runs over every switch.
		q, fa := math.Float64bits(sw.q), math.Float64bits(sw.f+p.alpha)
		swap := (q ^ fa) & -uint64(sw.state&1)
		bar, cross := math.Float64frombits(q^swap), math.Float64frombits(fa^swap)
		r[0] = max(sw.in[0], sw.out[0], bar)
		r[1] = max(sw.in[0], sw.out[1], cross)
		r[2] = max(sw.in[1], sw.out[0], cross)
		r[3] = max(sw.in[1], sw.out[1], bar)
	}
}

// Query returns the path from src to dst with the earliest Start(S,p) (Tetris §3.3) over all
// n/2 paths, with that start and its number of switch state changes. Among paths with the minimum
// start it returns one with the fewest state changes, and among those the smallest choices. Ports
// must lie in [0, n). It allocates nothing and, in the worst case, visits each of the n−2 edges and
// n/2 leaves of the tree of choices once.
//
// The minimum is found in one depth-first pass that carries each path's (start, changes) down the
// tree: a path's start is the maximum and its changes the sum over its traversals, both monotone
// along the path, so a subtree can be skipped once its prefix is lexicographically worse than the
// best complete path, or ties it and cannot yield smaller choices. Ranking complete paths by (start, changes, choices) is exactly "minimum
// start T*, then fewest changes among the paths whose every traversal is ready by T*": such paths
// are precisely the ones whose start is T*.
func (p *Plan) Query(src, dst int) (choices uint32, start float64, changes int) {
	q := query{p: p, src: src, dst: dst, nh: p.f.n / 2, mid: p.f.k - 1,
		bestStart: math.Inf(1), bestChanges: math.MaxInt}
	q.search(0, 0, math.Inf(-1), 0, 0)
	return q.bestChoices, q.bestStart, q.bestChanges
}

// query is one Query's search state; it lives on Query's stack.
type query struct {
	p           *Plan
	src, dst    int
	nh, mid     int
	bestStart   float64
	bestChanges int
	bestChoices uint32
}

// search extends a path prefix that has fixed the choices below level s (bits) and reached block b
// of level s, with readiness acc and chg state changes so far.
func (q *query) search(s, b int, acc float64, chg int, bits uint32) {
	p := q.p
	if s == q.mid {
		acc, chg = p.reach(&p.sw[q.mid*q.nh+b], (q.src>>s)&1, (q.dst>>s)&1, acc, chg)
		if q.better(acc, chg) || acc == q.bestStart && chg == q.bestChanges && bits < q.bestChoices {
			q.bestStart, q.bestChanges, q.bestChoices = acc, chg, bits
		}
		return
	}
	half := p.f.n >> (s + 1)
	in := &p.sw[s*q.nh+b*half+q.src>>(s+1)]
	out := &p.sw[(2*q.mid-s)*q.nh+b*half+q.dst>>(s+1)]
	inLane, outLane := (q.src>>s)&1, (q.dst>>s)&1
	a0, c0 := p.reach(in, inLane, 0, acc, chg)
	a0, c0 = p.reach(out, 0, outLane, a0, c0)
	a1, c1 := p.reach(in, inLane, 1, acc, chg)
	a1, c1 = p.reach(out, 1, outLane, a1, c1)
	b0, b1 := bits, bits|1<<s
	// The more promising child first, so that the bound tightens early; on a tie the upper one,
	// whose choices are smaller.
	if a1 < a0 || a1 == a0 && c1 < c0 {
		if !q.worse(a1, c1, b1) {
			q.search(s+1, 2*b+1, a1, c1, b1)
		}
		if !q.worse(a0, c0, b0) {
			q.search(s+1, 2*b, a0, c0, b0)
		}
		return
	}
	if !q.worse(a0, c0, b0) {
		q.search(s+1, 2*b, a0, c0, b0)
	}
	if !q.worse(a1, c1, b1) {
		q.search(s+1, 2*b+1, a1, c1, b1)
	}
}

// reach extends a prefix's (acc, chg) by the traversal of sw from lane in to lane out, as ready
// does, with plain comparisons (no NaN can occur) because this is Query's inner loop.
func (p *Plan) reach(sw *switchPlan, in, out int, acc float64, chg int) (float64, int) {
	if t := sw.in[in]; t > acc {
		acc = t
	}
	if t := sw.out[out]; t > acc {
		acc = t
	}
	t := sw.q
	if sw.state != State(in^out) {
		t = sw.f + p.alpha
		chg++
	}
	if t > acc {
		acc = t
	}
	return acc, chg
}

// better reports whether (acc, chg) ranks strictly before the best path found so far.
func (q *query) better(acc float64, chg int) bool {
	return acc < q.bestStart || acc == q.bestStart && chg < q.bestChanges
}

// worse reports whether no path through a prefix with (acc, chg) and choices bits (the bits up
// to the current level) can rank before the best path found so far. Its completions have higher
// bits only, so on a tie in (acc, chg) they lose to the best unless the best has higher bits set
// or lower bits that exceed the prefix's: both fail exactly when bestChoices ≤ bits.
func (q *query) worse(acc float64, chg int, bits uint32) bool {
	return acc > q.bestStart || acc == q.bestStart && (chg > q.bestChanges || chg == q.bestChanges && q.bestChoices <= bits)
}

// Start evaluates Start(S,p) = max over the traversals (s,i,j) of p of {I_{s,i}, O_{s,j}, q_{s,i,j}}
// for the path (src, dst, choices), and the number of switches on it whose planned state changes.
func (p *Plan) Start(src, dst int, choices uint32) (start float64, changes int) {
	return p.partial(src, dst, choices, p.f.k-1)
}

// PartialStart is Start over only the traversals of levels 0..level, both the input-side and the
// output-side ones; the choices above level are ignored. Tetris uses it to cost partially routed
// paths. A level at or above the middle level covers the whole path.
func (p *Plan) PartialStart(src, dst int, choices uint32, level int) float64 {
	t, _ := p.partial(src, dst, choices, min(level, p.f.k-1))
	return t
}

func (p *Plan) partial(src, dst int, choices uint32, level int) (start float64, changes int) {
	start = math.Inf(-1)
	k, nh := p.f.k, p.f.n/2
	// The walk of LevelTraversals, level by level: b is the block at level s.
	b := 0
	for s := 0; s <= level; s++ {
		lin, lout := src>>s, dst>>s
		if s == k-1 {
			r, c := p.ready(s*nh+b, lin&1, lout&1)
			return max(start, r), changes + c
		}
		c := int(choices>>s) & 1
		half := p.f.n >> (s + 1)
		r, ch := p.ready(s*nh+b*half+lin>>1, lin&1, c)
		start, changes = max(start, r), changes+ch
		r, ch = p.ready((2*k-2-s)*nh+b*half+lout>>1, c, lout&1)
		start, changes = max(start, r), changes+ch
		b = 2*b + c
	}
	return start, changes
}

// Commit records a circuit on the path (src, dst, choices) transmitting over [start, end). Every
// switch whose planned state differs takes the new state, with its reconfiguration completing α_r
// after its latest user ends (Q_s = F_s + α_r); then every traversed lane is released at end and
// F_s becomes max(F_s, end). The caller guarantees start ≥ Start(S,p) (so start is not needed to
// update S) and end ≥ start.
func (p *Plan) Commit(src, dst int, choices uint32, start, end float64) {
	k, nh := p.f.k, p.f.n/2
	b := 0
	for s := 0; s < k-1; s++ {
		lin, lout := src>>s, dst>>s
		c := int(choices>>s) & 1
		half := p.f.n >> (s + 1)
		p.commit(s*nh+b*half+lin>>1, lin&1, c, end)
		p.commit((2*k-2-s)*nh+b*half+lout>>1, c, lout&1, end)
		b = 2*b + c
	}
	p.commit((k-1)*nh+b, (src>>(k-1))&1, (dst>>(k-1))&1, end)
}

func (p *Plan) commit(id, in, out int, end float64) {
	s := &p.sw[id]
	// A changed state completes its reconfiguration at F_s + α_r; without a branch, since
	// whether a switch changes is a coin flip to the branch predictor (lanes are 0 or 1, so the
	// state StateOf gives is in XOR out).
	st := State((in ^ out) & 1)
	q, fa := math.Float64bits(s.q), math.Float64bits(s.f+p.alpha)
	s.state, s.q = st, math.Float64frombits(q^(q^fa)&-uint64(s.state^st))
	s.in[in] = max(s.in[in], end)
	s.out[out] = max(s.out[out], end)
	s.f = max(s.f, end)
}
