package benes

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// bruteStart computes Start(S,p) of Tetris §3.3 straight from its definition over the traversals
// PathFrom builds, reading S only through the accessors: max over (s,i,j) of {I_{s,i}, O_{s,j},
// q_{s,i,j}}, q = Q_s if σ_s = state(i,j) else F_s + α_r; and the number of state changes.
func bruteStart(p *Plan, src, dst int, choices uint32) (float64, int) {
	start, changes := math.Inf(-1), 0
	for _, t := range p.Fabric().PathFrom(src, dst, choices) {
		state, f, q := p.SwitchState(t.Stage, t.Switch)
		i, _ := p.LaneRelease(t.Stage, t.Switch, t.In)
		_, o := p.LaneRelease(t.Stage, t.Switch, t.Out)
		if state != t.State() {
			q = f + p.AlphaR()
			changes++
		}
		start = max(start, i, o, q)
	}
	return start, changes
}

// Hand-worked on a 4-port plan holding 0->0 on the upper child (all bar) over [0,10), α_r = 1.
func TestTraversalReady(t *testing.T) {
	f, _ := New(4)
	p := NewPlan(f, 1)
	p.Commit(0, 0, 0, 0, 10)
	cases := []struct {
		tr     Traversal
		ready  float64
		change bool
	}{
		{Traversal{0, 0, 0, 0}, 10, false}, // lanes busy until 10, state already bar
		{Traversal{0, 0, 1, 1}, 0, false},  // the other bar lanes are free
		{Traversal{0, 0, 1, 0}, 11, true},  // cross after the bar user ends: F + α_r
		{Traversal{0, 1, 0, 1}, 1, true},   // an unused switch: F = 0, so α_r
		{Traversal{2, 0, 1, 1}, 0, false},  // output switch 0, other lanes, bar
	}
	for _, c := range cases {
		if r, ch := p.TraversalReady(c.tr); r != c.ready || ch != c.change {
			t.Errorf("TraversalReady(%v) = (%v, %v), want (%v, %v)", c.tr, r, ch, c.ready, c.change)
		}
	}
}

// bruteQuery tries all n/2 paths: minimum start T*, then the fewest changes among the paths whose
// every traversal is ready by T*, then the smallest choices.
func bruteQuery(p *Plan, src, dst int) (uint32, float64, int) {
	f := p.Fabric()
	tStar := math.Inf(1)
	for c := range uint32(max(f.Ports()/2, 1)) {
		s, _ := bruteStart(p, src, dst, c)
		tStar = min(tStar, s)
	}
	best, bestChanges := uint32(0), math.MaxInt
	for c := range uint32(max(f.Ports()/2, 1)) {
		s, ch := bruteStart(p, src, dst, c)
		if s <= tStar && ch < bestChanges {
			best, bestChanges = c, ch
		}
	}
	return best, tStar, bestChanges
}

// Hand-worked on the 2-port fabric (one switch, α_r = 2): 0->0 runs over [0,5) in bar. Then
// 1->1 also needs bar: the state is already set (Q = 0) and its lanes are free, so it can start at
// 0 with no change. 1->0 needs cross: it must wait for output lane 0 (released at 5) and for the
// switch's last user to end before reconfiguring it: F + α_r = 5 + 2 = 7, one change.
func TestQueryTwoPortsHandWorked(t *testing.T) {
	f, _ := New(2)
	p := NewPlan(f, 2)
	p.Commit(0, 0, 0, 0, 5)
	cases := []struct {
		src, dst    int
		wantStart   float64
		wantChanges int
	}{
		{1, 1, 0, 0},
		{1, 0, 7, 1},
		{0, 1, 7, 1}, // input lane 0 is busy until 5 as well, the state change still dominates
		{0, 0, 5, 0},
	}
	for _, c := range cases {
		ch, start, changes := p.Query(c.src, c.dst)
		if ch != 0 || start != c.wantStart || changes != c.wantChanges {
			t.Errorf("Query(%d,%d) = (%b, %v, %d), want (0, %v, %d)", c.src, c.dst, ch, start, changes, c.wantStart, c.wantChanges)
		}
	}
	// Committing 1->0 at 7 reconfigures the switch: Q = F + α_r = 7, σ = cross, F = 9.
	p.Commit(1, 0, 0, 7, 9)
	if st, fs, q := p.SwitchState(0, 0); st != Cross || fs != 9 || q != 7 {
		t.Errorf("after 1->0: switch (%v, F=%v, Q=%v), want (cross, 9, 7)", st, fs, q)
	}
	// 0->1 is cross too: no change, ready when the reconfiguration is done and its lanes are free:
	// input lane 0 at 5, output lane 1 never used, Q = 7.
	if ch, start, changes := p.Query(0, 1); ch != 0 || start != 7 || changes != 0 {
		t.Errorf("Query(0,1) after reconfiguration = (%b, %v, %d), want (0, 7, 0)", ch, start, changes)
	}
	// After Reset every switch is bar again with F = 0: cross costs only α_r.
	p.Reset()
	if ch, start, changes := p.Query(1, 0); ch != 0 || start != 2 || changes != 1 {
		t.Errorf("Query(1,0) on the reset plan = (%b, %v, %d), want (0, 2, 1)", ch, start, changes)
	}
}

// Hand-worked RNB conflict on the 4-port fabric (α_r = 1). 0->0 takes the upper child (all three
// switches bar: input switch 0 lane 0->0, upper middle switch 0 lane 0->0, output switch 0 lane
// 0->0) and 3->3 the lower child (input switch 1 lane 1->1, lower middle switch 1 lane 1->1,
// output switch 1 lane 1->1), both over [0,10). Input port 1 and output port 2 are idle, yet 1->2
// cannot start before 11 on either path. At level 1 its local ports are 1>>1 = 0 and 2>>1 = 1.
//   - upper: input switch 0 lane 1->0 and upper middle switch 0 lane 0->1 must both go cross
//     while 0->0 holds them in bar until 10, so F + α_r = 11; output switch 1 lane 0->0 is bar
//     already and free. Two changes.
//   - lower: input switch 0 lane 1->1 is bar and free, but lower middle switch 1 lane 0->1 and
//     output switch 1 lane 1->0 must both go cross while 3->3 holds them until 10: start 11,
//     two changes.
//
// Both start at 11 with two changes: the smaller choices (upper) wins. On a crossbar 1->2 would
// start at 0.
func TestQueryRNBConflictHandWorked(t *testing.T) {
	f, _ := New(4)
	p := NewPlan(f, 1)
	p.Commit(0, 0, 0, 0, 10)
	p.Commit(3, 3, 1, 0, 10)
	ch, start, changes := p.Query(1, 2)
	if ch != 0 || start != 11 || changes != 2 {
		t.Fatalf("Query(1,2) = (%b, %v, %d), want (0, 11, 2)", ch, start, changes)
	}
	for c, want := range []struct {
		start   float64
		changes int
	}{{11, 2}, {11, 2}} {
		if s, n := p.Start(1, 2, uint32(c)); s != want.start || n != want.changes {
			t.Errorf("Start(1,2,%d) = (%v, %d), want (%v, %d)", c, s, n, want.start, want.changes)
		}
	}
	// Level 0 alone (input switch 0 and output switch 1) already costs both paths 11: the upper
	// one through input switch 0, the lower one through output switch 1 (lane 1 -> 0, cross).
	for c := range uint32(2) {
		if s := p.PartialStart(1, 2, c, 0); s != 11 {
			t.Errorf("PartialStart(1,2,%d,0) = %v, want 11", c, s)
		}
	}
	// Commit the upper path over [11, 20): input switch 0 goes cross with Q = F + α_r = 11.
	p.Commit(1, 2, 0, 11, 20)
	if st, fs, q := p.SwitchState(0, 0); st != Cross || fs != 20 || q != 11 {
		t.Errorf("input switch 0 = (%v, F=%v, Q=%v), want (cross, 20, 11)", st, fs, q)
	}
	if st, fs, q := p.SwitchState(1, 0); st != Cross || fs != 20 || q != 11 {
		t.Errorf("middle switch 0 = (%v, F=%v, Q=%v), want (cross, 20, 11)", st, fs, q)
	}
	// Output switch 1 kept its bar state: Q stays 0 and F becomes 20.
	if st, fs, q := p.SwitchState(2, 1); st != Bar || fs != 20 || q != 0 {
		t.Errorf("output switch 1 = (%v, F=%v, Q=%v), want (bar, 20, 0)", st, fs, q)
	}
	// 1->2 entered on lane 1 and left on lane 0 (0->0 used lane 0 -> 0 before it); lane 1 out
	// was never used.
	if in, out := p.LaneRelease(0, 0, 1); in != 20 || out != 0 {
		t.Errorf("input switch 0 lane 1 released at (in %v, out %v), want (20, 0)", in, out)
	}
	if in, out := p.LaneRelease(0, 0, 0); in != 10 || out != 20 {
		t.Errorf("input switch 0 lane 0 released at (in %v, out %v), want (10, 20)", in, out)
	}
}

// Hand-worked tie on start broken by fewer state changes, against the smaller choices (α_r = 1,
// 4 ports). X = 1->1 upper over [0,10): input switch 0 lane 1->0 (cross, Q = 0 + α_r = 1),
// middle switch 0 lane 0->0 (bar), output switch 0 lane 0->1 (cross). Y = 0->3 lower, ready at 1
// (input switch 0 is cross since Q = 1; middle switch 1 goes cross at F + α_r = 1), over [1,3):
// input switch 0 lane 0->1 (cross, shared with X), middle switch 1 lane 0->1 (cross, Q = 1),
// output switch 1 lane 1->1 (bar).
// Query 1->3 (local ports 0 and 1 at level 1):
//   - upper: input switch 0 lane 1->0 cross, no change, lanes busy until 10; middle switch 0 lane
//     0->1 must go cross after X: 11; output switch 1 lane 0->1 must go cross after Y: 4.
//     Start 11, two changes.
//   - lower: input switch 0 lane 1->1 must go bar after X: 11; middle switch 1 lane 0->1 is
//     cross already (ready at 3); output switch 1 lane 1->1 is bar already (ready at 3).
//     Start 11, one change: it wins although its choices (1) are larger.
func TestQueryFewerChangesBreakTies(t *testing.T) {
	f, _ := New(4)
	p := NewPlan(f, 1)
	p.Commit(1, 1, 0, 0, 10)
	if s, _ := p.Start(0, 3, 1); s != 1 {
		t.Fatalf("Start(0,3,lower) = %v, want 1", s)
	}
	p.Commit(0, 3, 1, 1, 3)
	if ch, start, changes := p.Query(1, 3); ch != 1 || start != 11 || changes != 1 {
		t.Fatalf("Query(1,3) = (%b, %v, %d), want (1, 11, 1)", ch, start, changes)
	}
	if s, n := p.Start(1, 3, 0); s != 11 || n != 2 {
		t.Errorf("Start(1,3,upper) = (%v, %d), want (11, 2)", s, n)
	}
}

func TestQueryDoesNotAllocate(t *testing.T) {
	f, _ := New(64)
	p := NewPlan(f, 1)
	p.Commit(0, 5, 3, 0, 4)
	allocs := testing.AllocsPerRun(100, func() { p.Query(7, 9) })
	if allocs != 0 {
		t.Errorf("Query allocates %v times per call", allocs)
	}
}

// Property: on random committed plans (times on a small integer grid, so that ties are common),
// Query agrees with trying all n/2 paths, Start, PartialStart and AllTraversalReady agree with
// the definition, and Commit leaves the state §3.3 prescribes.
func TestQueryMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 6).Draw(t, "k")
		n := 1 << k
		f, _ := New(n)
		alpha := rapid.SampledFrom([]float64{0, 1, 2.5}).Draw(t, "alpha")
		p := NewPlan(f, alpha)
		port := rapid.IntRange(0, n-1)
		path := rapid.Uint32Range(0, uint32(max(n/2, 1))-1)
		commits := rapid.IntRange(0, 3*n).Draw(t, "commits")
		for range commits {
			src, dst, c := port.Draw(t, "src"), port.Draw(t, "dst"), path.Draw(t, "choices")
			start, _ := p.Start(src, dst, c)
			start += float64(rapid.IntRange(0, 2).Draw(t, "gap"))
			end := start + float64(rapid.IntRange(0, 3).Draw(t, "duration"))
			before := snapshot(p, src, dst, c)
			p.Commit(src, dst, c, start, end)
			checkCommit(t, p, src, dst, c, end, before)
		}
		all := make([]float64, 4*f.NumSwitches())
		p.AllTraversalReady(all)
		for stage := range f.Stages() {
			for sw := range f.SwitchesPerStage() {
				for lanes := range 4 {
					tr := Traversal{Stage: stage, Switch: sw, In: lanes >> 1, Out: lanes & 1}
					if r, _ := p.TraversalReady(tr); all[4*f.SwitchID(stage, sw)+lanes] != r {
						t.Fatalf("AllTraversalReady for %v = %v, TraversalReady %v", tr, all[4*f.SwitchID(stage, sw)+lanes], r)
					}
				}
			}
		}
		for range 8 {
			src, dst := port.Draw(t, "qsrc"), port.Draw(t, "qdst")
			gc, gs, gn := p.Query(src, dst)
			wc, ws, wn := bruteQuery(p, src, dst)
			if gc != wc || gs != ws || gn != wn {
				t.Fatalf("Query(%d,%d) = (%b, %v, %d), brute force (%b, %v, %d)", src, dst, gc, gs, gn, wc, ws, wn)
			}
			c := path.Draw(t, "pchoices")
			s, ch := p.Start(src, dst, c)
			bs, bch := bruteStart(p, src, dst, c)
			if s != bs || ch != bch {
				t.Fatalf("Start(%d,%d,%b) = (%v, %d), definition (%v, %d)", src, dst, c, s, ch, bs, bch)
			}
			ts, tch := math.Inf(-1), 0
			for _, tr := range f.PathFrom(src, dst, c) {
				r, change := p.TraversalReady(tr)
				ts = max(ts, r)
				if change {
					tch++
				}
			}
			if ts != bs || tch != bch {
				t.Fatalf("TraversalReady over %d->%d (%b) gives (%v, %d), definition (%v, %d)", src, dst, c, ts, tch, bs, bch)
			}
			level := rapid.IntRange(0, k-1).Draw(t, "level")
			if got, want := p.PartialStart(src, dst, c, level), brutePartial(p, src, dst, c, level); got != want {
				t.Fatalf("PartialStart(%d,%d,%b,%d) = %v, definition %v", src, dst, c, level, got, want)
			}
		}
	})
}

// brutePartial is Start over the traversals of stages 0..level and 2k−2−level..2k−2.
func brutePartial(p *Plan, src, dst int, choices uint32, level int) float64 {
	f := p.Fabric()
	start := math.Inf(-1)
	for _, t := range f.PathFrom(src, dst, choices) {
		if t.Stage > level && t.Stage < f.Stages()-1-level {
			continue
		}
		state, fs, q := p.SwitchState(t.Stage, t.Switch)
		i, _ := p.LaneRelease(t.Stage, t.Switch, t.In)
		_, o := p.LaneRelease(t.Stage, t.Switch, t.Out)
		if state != t.State() {
			q = fs + p.AlphaR()
		}
		start = max(start, i, o, q)
	}
	return start
}

type switchSnap struct {
	state State
	f, q  float64
}

func snapshot(p *Plan, src, dst int, c uint32) []switchSnap {
	var s []switchSnap
	for _, t := range p.Fabric().PathFrom(src, dst, c) {
		st, f, q := p.SwitchState(t.Stage, t.Switch)
		s = append(s, switchSnap{st, f, q})
	}
	return s
}

// checkCommit checks §3.3's update on every traversed switch: a state change sets σ and
// Q = F_before + α_r, an unchanged state keeps Q; F becomes max(F, end); the lanes used are
// released at end (they were released no later than the committed start, so end is the max).
func checkCommit(t *rapid.T, p *Plan, src, dst int, c uint32, end float64, before []switchSnap) {
	for k, tr := range p.Fabric().PathFrom(src, dst, c) {
		st, f, q := p.SwitchState(tr.Stage, tr.Switch)
		b := before[k]
		wantQ := b.q
		if b.state != tr.State() {
			wantQ = b.f + p.AlphaR()
		}
		if st != tr.State() || f != max(b.f, end) || q != wantQ {
			t.Fatalf("after commit %d->%d (%b) end %v: stage %d switch %d = (%v, F=%v, Q=%v), want (%v, %v, %v)",
				src, dst, c, end, tr.Stage, tr.Switch, st, f, q, tr.State(), max(b.f, end), wantQ)
		}
		in, _ := p.LaneRelease(tr.Stage, tr.Switch, tr.In)
		_, out := p.LaneRelease(tr.Stage, tr.Switch, tr.Out)
		if in != end || out != end {
			t.Fatalf("after commit %d->%d end %v: stage %d switch %d lanes released at %v, %v", src, dst, end, tr.Stage, tr.Switch, in, out)
		}
	}
}
