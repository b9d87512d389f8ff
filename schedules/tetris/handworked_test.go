package tetris

import (
	"context"
	"slices"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// The cases below were worked by hand from Tetris §3.1–§3.3 (with b = 1 byte/s, so a demand's
// bytes are its transmission time, and α_r = 1 s) before the code ran; the comments carry the
// arithmetic so a reader can follow each step of the algorithm.
//
// Path notation on an n = 4 fabric (k = 2, stages 0..2, one routing level): the path (src, dst, c)
// goes through input switch src>>1 on lane src&1 out lane c, middle switch c from lane src>>1 to
// lane dst>>1, and output switch dst>>1 from lane c to lane dst&1. A switch is Bar when its in and
// out lanes are equal. All switches start Bar, so a traversal needing Cross is ready at F + α_r = 1.

type pair struct{ u, v int }

type wantOrientation struct {
	level, block int
	conns        []pair
	costs        [2][]float64
	changes      [2]int
	flip         bool
}

type wantStep struct {
	delta    int
	cTx, cRx []int
	w        map[schedules.Endpoint]float64 // endpoints not listed have W = 0
	b, h     float64
	start    map[pair]float64 // s_uv of every candidate
	cost     map[pair]float64 // c_uv of every candidate
	matching []pair
	orient   []wantOrientation
	starts   []float64
}

func traceSteps(t *testing.T, d *schedules.Demand, o schedules.Options) ([]*step, *schedules.Schedule) {
	t.Helper()
	var steps []*step
	s, err := plan(context.Background(), d, o, func(st *step) { steps = append(steps, st) })
	if err != nil {
		t.Fatal(err)
	}
	if vs := schedules.Verify(s, d); len(vs) > 0 {
		t.Fatal(schedules.ViolationsError(vs))
	}
	return steps, s
}

func checkStep(t *testing.T, i int, n int, got *step, want wantStep) {
	t.Helper()
	if got.delta != want.delta || !slices.Equal(got.cTx, want.cTx) || !slices.Equal(got.cRx, want.cRx) {
		t.Errorf("matching %d: δ = %d, C = Tx%v Rx%v; want δ = %d, C = Tx%v Rx%v", i, got.delta, got.cTx, got.cRx, want.delta, want.cTx, want.cRx)
	}
	for e := 0; e < 2*n; e++ {
		ep := schedules.Endpoint{Port: e % n, Rx: e >= n}
		if got.w[e] != want.w[ep] {
			t.Errorf("matching %d: W_%v = %g, want %g", i, ep, got.w[e], want.w[ep])
		}
	}
	if got.b != want.b || got.h != want.h {
		t.Errorf("matching %d: B = %g, H = %g; want B = %g, H = %g", i, got.b, got.h, want.b, want.h)
	}
	if len(got.cands) != len(want.cost) {
		t.Errorf("matching %d: %d candidates, want %d", i, len(got.cands), len(want.cost))
	}
	for _, c := range got.cands {
		p := pair{c.u, c.v}
		if c.start != want.start[p] || c.cost != want.cost[p] {
			t.Errorf("matching %d: candidate %d→%d: s = %g, c = %g; want s = %g, c = %g", i, c.u, c.v, c.start, c.cost, want.start[p], want.cost[p])
		}
	}
	var m []pair
	for _, c := range got.matching {
		m = append(m, pair{c.u, c.v})
	}
	if !slices.Equal(m, want.matching) {
		t.Errorf("matching %d: selected %v, want %v", i, m, want.matching)
	}
	if len(got.orient) != len(want.orient) {
		t.Fatalf("matching %d: %d orientation decisions %+v, want %d", i, len(got.orient), got.orient, len(want.orient))
	}
	for j, o := range got.orient {
		w := want.orient[j]
		var conns []pair
		for _, c := range o.Conns {
			conns = append(conns, pair{c.Src, c.Dst})
		}
		if o.Level != w.level || o.Block != w.block || !slices.Equal(conns, w.conns) ||
			!slices.Equal(o.Costs[0], w.costs[0]) || !slices.Equal(o.Costs[1], w.costs[1]) ||
			o.Changes != w.changes || o.Flip != w.flip {
			t.Errorf("matching %d decision %d: level %d block %d conns %v costs %v changes %v flip %v;\n want level %d block %d conns %v costs %v changes %v flip %v",
				i, j, o.Level, o.Block, conns, o.Costs, o.Changes, o.Flip, w.level, w.block, w.conns, w.costs, w.changes, w.flip)
		}
	}
	if !slices.Equal(got.starts, want.starts) {
		t.Errorf("matching %d: planned starts %v, want %v", i, got.starts, want.starts)
	}
}

func tx(p int) schedules.Endpoint { return schedules.Endpoint{Port: p} }
func rx(p int) schedules.Endpoint { return schedules.Endpoint{Port: p, Rx: true} }

func demandOf(n int, entries map[pair]int64) *schedules.Demand {
	d := schedules.NewDemand(n)
	for p, x := range entries {
		d.Bytes[p.u][p.v] = x
	}
	return d
}

// TestHandWorked4x4 follows two planning matchings on a 4-port Beneš network.
func TestHandWorked4x4(t *testing.T) {
	d := demandOf(4, map[pair]int64{{0, 1}: 4, {0, 2}: 2, {1, 0}: 3, {2, 1}: 1, {3, 2}: 5})
	o := schedules.Options{Bandwidth: 1, Reconfig: 1}
	steps, s := traceSteps(t, d, o)
	want := []wantStep{{
		// Degrees: Tx0 2 (to Rx1, Rx2), Rx1 2 (from Tx0, Tx2), Rx2 2 (from Tx0, Tx3), the rest 1.
		delta: 2, cTx: []int{0}, cRx: []int{1, 2},
		// W_e = residual time + d_e·α_r: Tx0 = 4+2 + 2, Rx2 = 2+5 + 2, Rx1 = 4+1 + 2, ...
		w: map[schedules.Endpoint]float64{tx(0): 8, tx(1): 4, tx(2): 2, tx(3): 6, rx(0): 4, rx(1): 7, rx(2): 9},
		// Nothing is planned yet (a_e = 0), so B = max W = W_Rx2 = 9. Every path of an off-diagonal
		// pair needs some switch in Cross, so every s_uv = α_r = 1 and c_uv = max(W_u, W_v) ≤ B:
		// H = B and A holds every candidate.
		b: 9, h: 9,
		start: map[pair]float64{{0, 1}: 1, {0, 2}: 1, {1, 0}: 1, {2, 1}: 1, {3, 2}: 1},
		cost:  map[pair]float64{{0, 1}: 8, {0, 2}: 9, {1, 0}: 4, {2, 1}: 7, {3, 2}: 9},
		// Greedy by max(W_u, W_v): (3,2) and (0,2) tie at 9, R breaks it for (3,2) (5 > 2); then
		// (0,2) finds Rx2 taken; (0,1) (8) covers Tx0 and Rx1; (2,1) finds Rx1 taken; (1,0) is free.
		matching: []pair{{3, 2}, {0, 1}, {1, 0}},
		// Level 0: ports 0 and 1 share input switch 0 and outputs 0 and 1 share output switch 0,
		// so (0,1) and (1,0) form one component; (3,2) is alone. Every orientation needs one Cross
		// per connection at this level, so every partial path is ready at 1 and costs W_e: the
		// cost vectors tie, the change counts tie, orientation 0 stays.
		orient: []wantOrientation{
			{level: 0, block: 0, conns: []pair{{0, 1}, {1, 0}}, costs: [2][]float64{{8, 7, 4, 4}, {8, 7, 4, 4}}, changes: [2]int{2, 2}},
			{level: 0, block: 0, conns: []pair{{3, 2}}, costs: [2][]float64{{9, 6}, {9, 6}}, changes: [2]int{1, 1}},
		},
		// (3,2) upper: input switch 1 Cross (ready 1). (0,1) upper: output switch 0 Cross (1).
		// (1,0) lower: output switch 0 already planned Cross by (0,1), ready at Q = 1.
		starts: []float64{1, 1, 1},
	}, {
		// Ends so far: (3,2) 1..6, (0,1) 1..5, (1,0) 1..4. Left: (0,2) 2 and (2,1) 1.
		delta: 1, cTx: []int{0, 2}, cRx: []int{1, 2},
		w: map[schedules.Endpoint]float64{tx(0): 3, tx(2): 2, rx(1): 2, rx(2): 3},
		// B = a_Rx2 + W_Rx2 = 6 + 3.
		b: 9, h: 9,
		// (0,2): upper needs middle switch 0 (Bar, last user (3,2) until 6) in Cross: 6+1 = 7;
		// lower needs input switch 0 Cross after (0,1) ends at 5 (6) and output switch 1 Cross
		// after (3,2) at 6 (7): both 7, c = 7 − 1 + 3 = 9.
		// (2,1): upper needs input switch 1 back to Bar after (3,2): 7; lower is ready at 6
		// (output switch 0 back to Bar after (0,1) ends at 5): c = 6 − 1 + 2 = 7.
		start:    map[pair]float64{{0, 2}: 7, {2, 1}: 6},
		cost:     map[pair]float64{{0, 2}: 9, {2, 1}: 7},
		matching: []pair{{0, 2}, {2, 1}},
		orient: []wantOrientation{
			// (0,2) upper: input switch 0 Bar free at 5, output switch 1 Bar free at 6: t = 6,
			// costs 6−1+3 twice. Lower: both Cross, 6 and 7: t = 7. Orientation 0 wins on cost,
			// although the whole upper path will wait for the middle switch until 7.
			{level: 0, block: 0, conns: []pair{{0, 2}}, costs: [2][]float64{{8, 8}, {9, 9}}, changes: [2]int{0, 2}},
			// (2,1) upper: input switch 1 must go back to Bar (7): costs 7−1+2. Lower: input switch
			// 1 is already Cross (ready 1), output switch 0 back to Bar at 6: costs 6−1+2. Flip.
			{level: 0, block: 0, conns: []pair{{2, 1}}, costs: [2][]float64{{8, 8}, {7, 7}}, changes: [2]int{1, 1}, flip: true},
		},
		starts: []float64{7, 6},
	}}
	if len(steps) != len(want) {
		t.Fatalf("%d planning matchings, want %d (Δ)", len(steps), len(want))
	}
	for i := range want {
		checkStep(t, i, 4, steps[i], want[i])
	}
	if got := completion(s); got != 9 {
		t.Errorf("completion %g, want 9 ((0,2) runs 7..9)", got)
	}
	// With plain looping, (2,1) keeps orientation 0: input switch 1 back to Bar and the middle
	// switch 0 that (0,2) has just planned Cross (Q = 7): it starts at 7, not 6.
	naive := o
	naive.NaiveRouting = true
	_, ns := traceSteps(t, d, naive)
	if c := ns.Circuits[4]; c.Src != 2 || c.Dst != 1 || *c.PlannedStart != 7 {
		t.Errorf("naive routing: last circuit %d→%d starts at %g, want 2→1 at 7", c.Src, c.Dst, *c.PlannedStart)
	}
}

// TestHandWorked8x8 follows both planning matchings on an 8-port Beneš network (k = 3: stages
// 0..4, routing levels 0 and 1). At level 0 a path (src, dst, c0) uses input switch src>>1 (stage 0)
// and output switch dst>>1 (stage 4); at level 1 it is in block c0 with local ports src>>1, dst>>1,
// using stage-1 switch 2·c0 + src>>2 and stage-3 switch 2·c0 + dst>>2; the middle switch (stage 2)
// is 2·c0 + c1 from lane (src>>2)&1 to lane (dst>>2)&1.
func TestHandWorked8x8(t *testing.T) {
	d := demandOf(8, map[pair]int64{{6, 4}: 9, {7, 5}: 8, {1, 4}: 1, {1, 5}: 1, {2, 0}: 3, {4, 6}: 2})
	o := schedules.Options{Bandwidth: 1, Reconfig: 1}
	steps, s := traceSteps(t, d, o)
	want := []wantStep{{
		// Tx1, Rx4 and Rx5 have two partners each; everyone else one.
		delta: 2, cTx: []int{1}, cRx: []int{4, 5},
		w: map[schedules.Endpoint]float64{tx(1): 4, tx(2): 4, tx(4): 3, tx(6): 10, tx(7): 9,
			rx(0): 4, rx(4): 12, rx(5): 11, rx(6): 3},
		b: 12, h: 12,
		start: map[pair]float64{{6, 4}: 1, {7, 5}: 1, {1, 4}: 1, {1, 5}: 1, {2, 0}: 1, {4, 6}: 1},
		cost:  map[pair]float64{{6, 4}: 12, {7, 5}: 11, {1, 4}: 12, {1, 5}: 11, {2, 0}: 4, {4, 6}: 3},
		// Walk: (6,4) [key 12, R 9] taken, covering Rx4; (1,4) Rx4 taken; (7,5) [11, R 8] is
		// refused: Tx1's only other receiver is Rx5, so Tx1 could no longer be covered; (1,5)
		// covers Tx1 and Rx5; (2,0) and (4,6) are free.
		matching: []pair{{6, 4}, {1, 5}, {2, 0}, {4, 6}},
		orient: []wantOrientation{
			// (1,5) and (6,4) share output switch 2. Orientation 0 sends (1,5) upper and (6,4)
			// lower: all four level-0 traversals Cross, t = 1, costs t−1+W: Rx4 12, Rx5 11, Tx6 10,
			// Tx1 4. Orientation 1 keeps them all Bar: t = 0, every cost one less. Flip.
			{level: 0, block: 0, conns: []pair{{1, 5}, {6, 4}}, costs: [2][]float64{{12, 11, 10, 4}, {11, 10, 9, 3}}, changes: [2]int{4, 0}, flip: true},
			{level: 0, block: 0, conns: []pair{{2, 0}}, costs: [2][]float64{{3, 3}, {4, 4}}, changes: [2]int{0, 2}},
			{level: 0, block: 0, conns: []pair{{4, 6}}, costs: [2][]float64{{2, 2}, {3, 3}}, changes: [2]int{0, 2}},
			// Level 1, upper block: (2,0) enters stage-1 switch 0 on lane 1 and leaves stage-3
			// switch 0 on lane 0, so either child needs one Cross: tie, orientation 0.
			{level: 1, block: 0, conns: []pair{{2, 0}}, costs: [2][]float64{{4, 4}, {4, 4}}, changes: [2]int{1, 1}},
			// (4,6) and (6,4) share stage-1 switch 1 (lanes 0, 1) and stage-3 switch 1: one Cross
			// each way round: tie, orientation 0 ((4,6) upper, (6,4) lower).
			{level: 1, block: 0, conns: []pair{{4, 6}, {6, 4}}, costs: [2][]float64{{12, 10, 3, 3}, {12, 10, 3, 3}}, changes: [2]int{2, 2}},
			// Lower block: (1,5) local 0→2: upper child all Bar (t = 0), lower child two Cross.
			{level: 1, block: 1, conns: []pair{{1, 5}}, costs: [2][]float64{{10, 3}, {11, 4}}, changes: [2]int{0, 2}},
		},
		// Every path needs at least one Cross: (6,4) at stage-3 switch 1, (1,5) at middle switch 2,
		// (2,0) at stage-1 switch 0, (4,6) at stage-3 switch 1 already planned Cross by (6,4) (Q=1).
		starts: []float64{1, 1, 1, 1},
	}, {
		// Ends: (6,4) 10, (1,5) 2, (2,0) 4, (4,6) 3. Left: (7,5) 8 and (1,4) 1.
		delta: 1, cTx: []int{1, 7}, cRx: []int{4, 5},
		w: map[schedules.Endpoint]float64{tx(1): 2, tx(7): 9, rx(4): 2, rx(5): 9},
		// B = a_Rx4 + W_Rx4 = 10 + 2.
		b: 12, h: 12,
		// (1,4): Rx4's output switch 2 is Bar with lane 0 busy until 10; every path waits for it,
		// the best reach it at 11 (e.g. the lower path, which only changes output switch 2 to
		// Cross after 10): c = 11 − 1 + 2. (7,5): the lower paths leave Tx7 in Bar; the best wait
		// for a Cross change after (1,5) ends at 2: s = 3, c = 3 − 1 + 9.
		start:    map[pair]float64{{7, 5}: 3, {1, 4}: 11},
		cost:     map[pair]float64{{7, 5}: 11, {1, 4}: 12},
		matching: []pair{{7, 5}, {1, 4}},
		orient: []wantOrientation{
			// (1,4) upper, (7,5) lower: (1,4)'s partial path waits for Rx4's lane (10): costs
			// 10−1+2; (7,5) Bar all the way, lanes free at 2: 2−1+9. The flip would put (1,4) on
			// output switch 2 Cross (11) and (7,5) on two Cross changes after 10: much worse.
			{level: 0, block: 0, conns: []pair{{1, 4}, {7, 5}}, costs: [2][]float64{{11, 11, 10, 10}, {19, 19, 12, 12}}, changes: [2]int{1, 3}},
			// (1,4) in the upper block, local 0→2: child 0 needs stage-1 switch 0 back to Bar (5)
			// and stage-3 switch 1 back to Bar after (6,4) ends at 10 (11); child 1 uses both in
			// their planned Cross, ready at 10. Flip.
			{level: 1, block: 0, conns: []pair{{1, 4}}, costs: [2][]float64{{12, 12}, {11, 11}}, changes: [2]int{2, 0}, flip: true},
			// (7,5) in the lower block, local 3→2: child 0 changes the unused stage-1 switch 3
			// (ready 1) and finds stage-3 switch 3 Bar, free at 2: t = 2. Child 1 changes stage-3
			// switch 3 after (1,5) ends at 2: t = 3.
			{level: 1, block: 1, conns: []pair{{7, 5}}, costs: [2][]float64{{10, 10}, {11, 11}}, changes: [2]int{1, 1}},
		},
		// (7,5) on choices c0=1, c1=0 meets middle switch 2, planned Cross by (1,5), which must go
		// back to Bar after 2: starts 3. (1,4) waits for middle switch 1 (Bar, (6,4) until 10) to
		// change: 11.
		starts: []float64{3, 11},
	}}
	if len(steps) != len(want) {
		t.Fatalf("%d planning matchings, want %d (Δ)", len(steps), len(want))
	}
	for i := range want {
		checkStep(t, i, 8, steps[i], want[i])
	}
	if got := completion(s); got != 12 {
		t.Errorf("completion %g, want 12", got)
	}
	// The paths, as the schedule file records them, for the first matching's (6,4): level 0 upper
	// (after the flip), level 1 lower (orientation 0 sends (6,4) opposite to (4,6)).
	if got, want := s.Circuits[0].Path, mustFabric(t, 8).NewPath(6, 4, 0b10); !got.Equal(want) {
		t.Errorf("(6,4) path %v, want %v", got, want)
	}
}

func completion(s *schedules.Schedule) float64 {
	c := 0.0
	for _, x := range s.Circuits {
		c = max(c, *x.PlannedEnd)
	}
	return c
}

func mustFabric(t *testing.T, n int) *benes.Fabric {
	t.Helper()
	f, err := benes.New(n)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
