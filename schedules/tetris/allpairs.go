package tetris

import (
	"math"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// allPairs answers step 3's path query for every (src, dst) at once: the earliest Start(S, p) over
// all n/2 paths p from src to dst, the same minimum benes.Plan.Query finds one pair at a time.
// Tetris asks it for every residual demand in every iteration, and in dense demands every endpoint
// gets a new circuit each iteration, so every answer changes; one dynamic programme over the
// recursive structure costs O(n²) per iteration where n² separate queries cost O(n³).
//
// The programme rests on two facts of the wiring convention (benes package doc): at recursion level
// s a path from src to dst is at local input port src>>s and local output port dst>>s of whichever
// block it is in, and its choice c at that level fixes the lanes of that level's input and output
// switch and sends it to child block 2b+c. So the best start of the rest of a path depends only on
// (s, b, src>>s, dst>>s):
//
//	best(s, b, i, j) = min over c of max(ready(in switch, i&1 → c), ready(out switch, c → j&1), best(s+1, 2b+c, i>>1, j>>1))
//
// with the middle level (blocks of one switch) as the base case. Start is a maximum and the query a
// minimum of maxima, so the values are exactly those of Plan.Query, with no rounding.
//
// The tables hold the times' IEEE-754 bit patterns as uint64. Every time here is a sum or maximum
// of non-negative numbers, so never negative (not even −0) nor NaN, and the bit patterns of such
// floats are ordered exactly as the floats are: integer min and max give the same values, with no
// branches (the float builtins must also handle NaN and signed zeros), in the loop that is most of
// the planner's work.
type allPairs struct {
	p    *benes.Plan
	n, k int
	// ready holds, per switch (SwitchID), the readiness of its four traversals, index in<<1|out.
	ready []float64
	// tab[s] holds best(s, b, i, j) at b·m² + i·m + j, m = n>>s, as bits (see above).
	tab [][]uint64
	// Scratch rows of refresh.
	o0, o1 []uint64
	// charge, when not nil, is the wear term (wear.go): each switch's charge for a change of
	// state, which the table then adds to its paths' starts (refreshWear).
	charge []float64
}

func newAllPairs(p *benes.Plan) *allPairs {
	f := p.Fabric()
	a := &allPairs{p: p, n: f.Ports(), k: f.Levels(), ready: make([]float64, 4*f.NumSwitches())}
	scratch := make([]uint64, 2*a.n)
	a.o0, a.o1 = scratch[:a.n], scratch[a.n:]
	// The levels' tables in one allocation (n² + n²/2 + … words).
	a.tab = make([][]uint64, a.k)
	size := 0
	for s := range a.tab {
		size += a.n * a.n >> s
	}
	words := make([]uint64, size)
	for s := range a.tab {
		m := a.n * a.n >> s
		a.tab[s], words = words[:m:m], words[m:]
	}
	return a
}

// refresh recomputes every pair's earliest start against the plan as it is now.
func (a *allPairs) refresh() {
	a.p.AllTraversalReady(a.ready)
	if a.charge != nil {
		a.refreshWear()
		return
	}
	n, k, nh := a.n, a.k, a.n/2
	mid := a.tab[k-1]
	for b := 0; b < n/2; b++ {
		r := a.ready[4*((k-1)*nh+b):][:4]
		for x := range 4 {
			mid[4*b+x] = math.Float64bits(r[x])
		}
	}
	for s := k - 2; s >= 0; s-- {
		m, half := n>>s, n>>(s+1)
		cur, next := a.tab[s], a.tab[s+1]
		inStage, outStage := s, 2*k-2-s
		for b := 0; b < 1<<s; b++ {
			child0 := next[(2*b)*half*half:][:half*half]
			child1 := next[(2*b+1)*half*half:][:half*half]
			// This block's output switches, laid out per local output port j: lane 0 and lane 1
			// (from the upper and the lower child) to out-lane j&1.
			outs := a.ready[4*(outStage*nh+b*half):][:2*m]
			o0, o1 := a.o0[:m], a.o1[:m]
			for j := range m {
				o0[j], o1[j] = math.Float64bits(outs[(j>>1)<<2|j&1]), math.Float64bits(outs[(j>>1)<<2|2|j&1])
			}
			// Local input ports 2p and 2p+1 share input switch p and, in each child, the row of
			// local input port p: the output side and the child tables combine once per pair.
			for p := range half {
				rin := a.ready[4*(inStage*nh+b*half+p):][:4]
				rows := cur[b*m*m+2*p*m:][:2*m]
				bestRows(rows[:m], rows[m:], o0, o1, child0[p*half:][:half], child1[p*half:][:half],
					math.Float64bits(rin[0]), math.Float64bits(rin[1]), math.Float64bits(rin[2]), math.Float64bits(rin[3]))
			}
		}
	}
}

// bestRows fills the rows of the two local input ports of one input switch. row0 enters on lane
// 0, whose traversals to the upper and lower child are ready at r00 and r01, row1 on lane 1 (r10,
// r11); o0[j] and o1[j] are the output switch's traversals from the upper and the lower child to
// local output port j, and c0, c1 the children's rows of this input switch, shared by the output
// ports 2q and 2q+1 of output switch q. It is the programme's inner loop, kept apart so that what
// it touches stays in registers.
//
// On amd64 it runs as bestRowsSSE2 (bestrows_amd64.s), two output ports per instruction; this is
// the definition that one is tested against, and the version elsewhere.
//
//go:noinline
func bestRowsGo(row0, row1, o0, o1, c0, c1 []uint64, r00, r01, r10, r11 uint64) {
	m := 2 * len(c0)
	row0, row1, o0, o1, c1 = row0[:m], row1[:m], o0[:m], o1[:m], c1[:len(c0)]
	for q, x := range c0 {
		y := c1[q]
		a0, a1, b0, b1 := max(r00, x), max(r01, y), max(r10, x), max(r11, y)
		j := 2 * q
		u0, u1, v0, v1 := o0[j], o1[j], o0[j+1], o1[j+1]
		row0[j], row0[j+1] = min(max(a0, u0), max(a1, u1)), min(max(a0, v0), max(a1, v1))
		row1[j], row1[j+1] = min(max(b0, u0), max(b1, u1)), min(max(b0, v0), max(b1, v1))
	}
}

// pathReady is Start(S, p) of the path (src, dst, choices) as of the last refresh: the latest
// readiness of its traversals.
func (a *allPairs) pathReady(src, dst int, choices uint32) float64 {
	n, k, nh := a.n, a.k, a.n/2
	ready := a.ready
	t := math.Inf(-1)
	b := 0
	for s := 0; s < k-1; s++ {
		lin, lout := src>>s, dst>>s
		c := int(choices>>s) & 1
		half := n >> (s + 1)
		in := ready[4*(s*nh+b*half+lin>>1)+(lin&1)<<1|c]
		out := ready[4*((2*k-2-s)*nh+b*half+lout>>1)+c<<1|lout&1]
		t = max(t, in, out)
		b = 2*b + c
	}
	return max(t, ready[4*((k-1)*nh+b)+((src>>(k-1))&1)<<1|(dst>>(k-1))&1])
}

// start is the earliest Start(S, p) over all paths from src to dst as of the last refresh.
func (a *allPairs) start(src, dst int) float64 { return math.Float64frombits(a.tab[0][src*a.n+dst]) }
