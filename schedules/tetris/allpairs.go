package tetris

import "github.com/tetris-hil/tetris-hil/schedules/benes"

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
type allPairs struct {
	p    *benes.Plan
	n, k int
	// ready holds, per switch (SwitchID), the readiness of its four traversals, index in<<1|out.
	ready []float64
	// tab[s] holds best(s, b, i, j) at b·m² + i·m + j, m = n>>s.
	tab [][]float64
	// Scratch rows of refresh.
	o0, o1, t0, t1 []float64
}

func newAllPairs(p *benes.Plan) *allPairs {
	f := p.Fabric()
	a := &allPairs{p: p, n: f.Ports(), k: f.Levels(), ready: make([]float64, 4*f.NumSwitches())}
	a.o0, a.o1, a.t0, a.t1 = make([]float64, a.n), make([]float64, a.n), make([]float64, a.n), make([]float64, a.n)
	a.tab = make([][]float64, a.k)
	for s := range a.tab {
		a.tab[s] = make([]float64, a.n*a.n>>s)
	}
	return a
}

// refresh recomputes every pair's earliest start against the plan as it is now.
func (a *allPairs) refresh() {
	a.p.AllTraversalReady(a.ready)
	n, k, nh := a.n, a.k, a.n/2
	mid := a.tab[k-1]
	for b := 0; b < n/2; b++ {
		r := a.ready[4*((k-1)*nh+b):][:4]
		copy(mid[4*b:4*b+4], r)
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
				o0[j], o1[j] = outs[(j>>1)<<2|j&1], outs[(j>>1)<<2|2|j&1]
			}
			// Local input ports 2p and 2p+1 share input switch p and, in each child, the row of
			// local input port p: the output side and the child tables combine once per pair.
			t0, t1 := a.t0[:m], a.t1[:m]
			for p := range half {
				c0 := child0[p*half:][:half]
				c1 := child1[p*half:][:half]
				for q := range half {
					t0[2*q], t0[2*q+1] = max(o0[2*q], c0[q]), max(o0[2*q+1], c0[q])
					t1[2*q], t1[2*q+1] = max(o1[2*q], c1[q]), max(o1[2*q+1], c1[q])
				}
				rin := a.ready[4*(inStage*nh+b*half+p):][:4]
				for lane := range 2 {
					in0, in1 := rin[lane<<1], rin[lane<<1|1]
					row := cur[b*m*m+(2*p+lane)*m:][:m]
					for j := range row {
						row[j] = min(max(in0, t0[j]), max(in1, t1[j]))
					}
				}
			}
		}
	}
}

// start is the earliest Start(S, p) over all paths from src to dst as of the last refresh.
func (a *allPairs) start(src, dst int) float64 { return a.tab[0][src*a.n+dst] }
