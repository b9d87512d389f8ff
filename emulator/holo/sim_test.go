package holo

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"strings"
	"testing"
)

var (
	// cliDefaults are the CLI's defaults: T_c = 5 ms, T_b = 1 µs, T_f = 10 ns, S = 1 KiB.
	cliDefaults = Params{TW: 5e-3, TB: 1e-6, TF: 10e-9, Size: 1024, Header: 1}
	// paperRegime has a configuration change worth ten forwards and T_b = 100·T_f, the
	// assumptions behind Er-El and Feitelson §3.2's inequalities.
	paperRegime = Params{TW: 5e-3, TB: 50e-6, TF: 0.5e-6, Size: 1000, Header: 1}
)

func withN(p Params, n int) Params { p.Nodes = n; return p }

func simulate(t testing.TB, algorithm string, p Params) *Result {
	t.Helper()
	r, err := Simulate(algorithm, p)
	if err != nil {
		t.Fatalf("%s at N = %d: %v", algorithm, p.Nodes, err)
	}
	return r
}

func closed(t testing.TB, algorithm string, p Params) float64 {
	t.Helper()
	v, err := ClosedForm(algorithm, p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Naive and ring: simulated = the paper's closed form over N = 2..2048, in both regimes (the
// paper regime at every eleventh N to keep the test short).
func TestNaiveAndRingEqualClosedForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Params
		step int
	}{{"cli-defaults", cliDefaults, 1}, {"paper-regime", paperRegime, 11}} {
		t.Run(tc.name, func(t *testing.T) {
			for n := 2; n <= 2048; n += tc.step {
				p := withN(tc.p, n)
				for _, a := range []string{Naive, Ring} {
					got, want := simulate(t, a, p).Seconds, closed(t, a, p)
					if !near(got, want) {
						t.Fatalf("%s N = %d: simulated %.17g, closed form %.17g", a, n, got, want)
					}
				}
			}
		})
	}
}

// Tree: simulated = ModelForm at every N, and at powers of two ModelForm = the paper's form less
// one H·T_d (stage 1's sender holds the message and lifts no header).
func TestTreeEqualsModelForm(t *testing.T) {
	for i, p0 := range []Params{cliDefaults, paperRegime, {TW: 1e-3, TB: 2e-6, TF: 1e-6, Size: 64, Header: 16}} {
		step := 1 // every N for the first, then a sample to keep the test short
		if i > 0 {
			step = 9
		}
		for n := 2; n <= 2048; n += step {
			p := withN(p0, n)
			got := simulate(t, Tree, p).Seconds
			model, ok := ModelForm(Tree, p)
			if !ok || !near(got, model) {
				t.Fatalf("%+v: simulated %.17g, model form %.17g (ok %v)", p, got, model, ok)
			}
			if lg := bits.Len(uint(n)) - 1; n&(n-1) == 0 || 1<<lg+step > n {
				p := withN(p0, 1<<lg)
				model, _ := ModelForm(Tree, p)
				if got := simulate(t, Tree, p).Seconds; !near(got, model) {
					t.Fatalf("N = %d: simulated %.17g, model form %.17g", 1<<lg, got, model)
				}
				if paper := closed(t, Tree, p); !near(model, paper-p.HeaderCost()) {
					t.Fatalf("N = %d: model form %.17g, paper %.17g − H·T_d %.17g", n, model, paper, p.HeaderCost())
				}
			}
		}
	}
}

// With H = 0 the header costs nothing and the tree's simulated time is the paper's form exactly.
func TestTreeWithoutHeaderIsPaperForm(t *testing.T) {
	p := cliDefaults
	p.Header = 0
	for n := 2; n <= 2048; n *= 2 {
		if got, want := simulate(t, Tree, withN(p, n)).Seconds, closed(t, Tree, withN(p, n)); !near(got, want) {
			t.Errorf("N = %d: simulated %.17g, closed form %.17g", n, got, want)
		}
	}
}

// The tree embedded in a ring against the paper's approximation. In the paper's regime (a change
// worth ten forwards, where its −3.3 comes from) they agree within 3% from N = 32 on, and the
// alternating version is faster and under its stage bound. With the CLI defaults a change is
// worth 489 forwards, lg(S·T_f/(T_d+T_c)) is −8.9 rather than −3.3, and the approximation
// overestimates by more than half.
func TestTreeRingAgainstPaperApproximation(t *testing.T) {
	for n := 32; n <= 2048; n *= 2 {
		p := withN(paperRegime, n)
		plain, alt := simulate(t, TreeRing, p).Seconds, simulate(t, TreeRingAlt, p).Seconds
		cf := closed(t, TreeRing, p)
		if r := plain / cf; r < 0.97 || r > 1.03 {
			t.Errorf("paper regime N = %d: tree-ring simulated %.6g, approximation %.6g (ratio %.4f)", n, plain, cf, r)
		}
		if bound := closed(t, TreeRingAlt, p); alt > plain || alt > bound {
			t.Errorf("paper regime N = %d: alternating %.6g, plain %.6g, bound %.6g", n, alt, plain, bound)
		}
		q := withN(cliDefaults, n)
		if n > q.K()+1 {
			if s, c := simulate(t, TreeRing, q).Seconds, closed(t, TreeRing, q); s > 0.5*c {
				t.Errorf("defaults N = %d: simulated %.6g not below half the approximation %.6g", n, s, c)
			}
		}
	}
}

// While k ≥ N−1 the tree embedded in a ring never branches: it is the ring.
func TestTreeRingIsRingWhileKCoversAll(t *testing.T) {
	p := withN(cliDefaults, cliDefaults.K()+1)
	if p.K() != p.Nodes-1 {
		t.Fatalf("k %d, N %d", p.K(), p.Nodes)
	}
	ring := simulate(t, Ring, p).Seconds
	for _, a := range []string{TreeRing, TreeRingAlt} {
		if got := simulate(t, a, p).Seconds; got != ring {
			t.Errorf("%s at N = %d: %.17g, ring %.17g", a, p.Nodes, got, ring)
		}
	}
}

// Every node receives exactly once: the senders form a tree rooted at node 0, every node's copy
// arrives before it is delivered, and exactly N−1 configuration changes are made (one per edge).
func TestEveryNodeReceivesOnce(t *testing.T) {
	for _, a := range Algorithms {
		for _, n := range []int{2, 3, 7, 64, 100, 1000} {
			for _, p0 := range []Params{cliDefaults, paperRegime} {
				p := withN(p0, n)
				r := simulate(t, a, p)
				if r.ConfigChanges != n-1 {
					t.Errorf("%s N = %d: %d configuration changes, want %d", a, n, r.ConfigChanges, n-1)
				}
				for i := 1; i < n; i++ {
					hops := 0
					for v := i; v != 0; v = r.From[v] {
						if r.From[v] < 0 || hops > n {
							t.Fatalf("%s N = %d: node %d's chain of senders does not reach node 0", a, n, i)
						}
						hops++
					}
					if !(r.Arrived[i] > 0 && r.Delivered[i] >= r.Arrived[i] && r.Delivered[i] <= r.Seconds) {
						t.Fatalf("%s N = %d: node %d arrived %g, delivered %g, done %g", a, n, i, r.Arrived[i], r.Delivered[i], r.Seconds)
					}
				}
			}
		}
	}
}

// collidingPlan: node 0 sends to node 1 with TTL 2, so node 1's FU forwards to node 2, and at the
// same time node 0 re-points its link at node 2 and forwards there too: a_0 = a_1 = 2.
func collidingPlan() *Plan {
	return &Plan{Algorithm: "colliding", Nodes: 3,
		Setup: []SetLink{{Node: 0, To: 1}, {Node: 1, To: 2}},
		Sends: [][]Send{{{To: 1, TTL: 2, FromApp: true, Broadcast: true}, {To: 2, TTL: 1, Broadcast: true}}, nil, nil},
	}
}

func TestFaultsAreReported(t *testing.T) {
	p := withN(cliDefaults, 3)
	instant := p
	instant.TW = 0
	ring := ringPlan(3)
	short := ringPlan(3)
	short.Sends[0][0].TTL = 1
	dark := ringPlan(3)
	dark.Setup = dark.Setup[:1]
	for _, tc := range []struct {
		name string
		p    Params
		plan *Plan
		want error
	}{
		{"collision: both a_0 and a_1 point at node 2 while both transmit", instant, collidingPlan(), ErrCollision},
		{"the same plan with T_c > 0: node 0's copy comes second", p, collidingPlan(), ErrDuplicate},
		{"TTL one short", p, short, ErrUnreached},
		{"node 1 forwards on a link never set", p, dark, ErrDarkLink},
		{"a send to the source", p, &Plan{Algorithm: "back", Nodes: 3, Setup: append(ring.Setup, SetLink{Node: 2, To: 0}),
			Sends: [][]Send{{{To: 1, TTL: 3, FromApp: true, Broadcast: true}}, nil, nil}}, ErrDuplicate},
	} {
		_, err := Run(context.Background(), tc.p, tc.plan)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

func TestBadPlansAndParams(t *testing.T) {
	p := withN(cliDefaults, 4)
	for _, plan := range []*Plan{
		{Algorithm: "size", Nodes: 3, Sends: make([][]Send, 3)},
		{Algorithm: "self", Nodes: 4, Sends: [][]Send{{{To: 0, TTL: 1}}, nil, nil, nil}},
		{Algorithm: "ttl", Nodes: 4, Sends: [][]Send{{{To: 1, TTL: 0}}, nil, nil, nil}},
		{Algorithm: "setup", Nodes: 4, Setup: []SetLink{{Node: 2, To: 9}}, Sends: make([][]Send, 4)},
	} {
		if _, err := Run(context.Background(), p, plan); err == nil {
			t.Errorf("plan %s accepted", plan.Algorithm)
		}
	}
	for _, bad := range []Params{
		withN(cliDefaults, 1), {Nodes: 4, TW: -1, TB: 1, TF: 1, Size: 1},
		{Nodes: 4, TB: 1e-9, TF: 1e-8, Size: 1}, {Nodes: 4, TB: 1, TF: 0, Size: 1},
		{Nodes: 4, TB: 1, TF: 1, Size: 0}, {Nodes: 4, TB: 1, TF: 1, Size: 4, Header: 5},
		{Nodes: 4, TB: 1, TF: 1, Size: 4, TR: math.NaN()},
		{Nodes: 4, TB: 1, TF: 1, Size: 4, Multicast: 4}, {Nodes: 4, TB: 1, TF: 1, Size: 4, Multicast: -1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// The FU has priority over the NIC: with both waiting when the link becomes free, the FU's packet
// goes first.
func TestFUPriorityOverNIC(t *testing.T) {
	p := withN(cliDefaults, 2)
	s := &sim{p: p, plan: newPlan("priority", 2), nodes: make([]node, 2), res: &Result{}}
	s.nodes[0] = node{dest: dests{1}, nicQueue: []packet{{fromApp: true, ttl: 1}}, fuQueue: []packet{{ttl: 1, broadcast: true}}}
	s.tryStart(0)
	if b := s.nodes[0].busy; b == nil || b.pkt.fromApp || len(s.nodes[0].nicQueue) != 1 {
		t.Fatalf("link carries %+v, NIC queue %d: want the FU's packet first", b, len(s.nodes[0].nicQueue))
	}
}

// Requests are serialised at the control station and settle times overlap: k changes requested at
// once are done after k·T_r + T_w. With T_r well above a forward, the ring's chain waits for each
// link: the last of N−1 requests settles at (N−1)·T_r + T_w, then one forward and the stack.
func TestControlStationSerialisesRequests(t *testing.T) {
	p := Params{Nodes: 8, TR: 1e-3, TW: 5e-3, TB: 100e-9, TF: 10e-9, Size: 1024, Header: 1}
	want := 7*p.TR + p.TW + p.S()*p.TF + p.S()*p.TD()
	if got := simulate(t, Ring, p).Seconds; !near(got, want) {
		t.Errorf("ring with T_r = 1 ms: %.17g, want 7·T_r + T_w + S·T_f + S·T_d = %.17g", got, want)
	}
	if _, ok := ModelForm(Ring, p); ok {
		t.Error("ModelForm claims the ring's form while T_r > S·T_f")
	}
	// The naive algorithm's changes never overlap: exact for any T_r.
	if got, want := simulate(t, Naive, p).Seconds, closed(t, Naive, p); !near(got, want) {
		t.Errorf("naive with T_r = 1 ms: %.17g, closed form %.17g", got, want)
	}
	// A small T_r (below one forward) leaves the ring exact.
	p.TR = 5e-9
	if got, want := simulate(t, Ring, p).Seconds, closed(t, Ring, p); !near(got, want) {
		t.Errorf("ring with T_r = 5 ns: %.17g, closed form %.17g", got, want)
	}
}

func TestTcHalf(t *testing.T) {
	p := withN(cliDefaults, 1024)
	s, sd, sf := p.S(), p.S()*p.TD(), p.S()*p.TF
	lg := float64(bits.Len(uint(p.Nodes - 1)))
	for _, tc := range []struct {
		algorithm     string
		closed, model float64
	}{
		{Naive, s * p.TB, s * p.TB},
		{Ring, 1023*sf + 2*sd, 1023*sf + 2*sd},
		{Tree, (lg*(sf+p.HeaderCost()) + 2*sd) / lg, (lg*sf + (lg-1)*p.HeaderCost() + 2*sd) / lg},
	} {
		if got := TcHalfClosed(tc.algorithm, p); !near(got, tc.closed) {
			t.Errorf("%s closed T_c^0.5 %.17g, want %.17g", tc.algorithm, got, tc.closed)
		}
		got, err := TcHalfSimulated(context.Background(), tc.algorithm, p)
		if err != nil || math.Abs(got-tc.model) > 2e-9*tc.model {
			t.Errorf("%s simulated T_c^0.5 %.17g (%v), want %.17g", tc.algorithm, got, err, tc.model)
		}
	}
	for _, a := range []string{TreeRing, TreeRingAlt} {
		if v := TcHalfClosed(a, p); !math.IsNaN(v) {
			t.Errorf("%s closed T_c^0.5 %g, want none", a, v)
		}
		got, err := TcHalfSimulated(context.Background(), a, p)
		if err != nil || !(got > 0) {
			t.Fatalf("%s simulated T_c^0.5 %g, %v", a, got, err)
		}
		q := p
		q.TW = got
		t0, t1 := simulate(t, a, withN(Params{TW: 0, TB: p.TB, TF: p.TF, Size: p.Size, Header: p.Header}, p.Nodes)).Seconds, simulate(t, a, q).Seconds
		if t1 < 2*t0 || t1 > 2*t0*1.01 {
			t.Errorf("%s at T_c^0.5 = %g: %g, twice the optimum is %g", a, got, t1, 2*t0)
		}
	}
}

// The paper's simplified inequalities give its crossovers: (N−1)/lg N < 11 holds for N < 68, and
// (N−1)/(lg N − 3.3) < 12 for N < 10 (Er-El and Feitelson §3.2).
func TestPaperInequalities(t *testing.T) {
	if got := PaperInequalities[Tree].Below(); got != 68 {
		t.Errorf("ring vs tree: below %d, the paper says 68", got)
	}
	if got := PaperInequalities[TreeRing].Below(); got != 10 {
		t.Errorf("ring vs tree-in-ring: below %d, the paper says 10", got)
	}
}

// The crossovers found by the scan are where the simulator says they are.
func TestCrossovers(t *testing.T) {
	p := paperRegime
	cs, err := Crossovers(context.Background(), p, 2, 128)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		t.Logf("%s: paper %q below %d; closed %+v; simulated %+v", c.Versus, c.Paper, c.PaperBelow, c.Closed, c.Simulated)
		f := c.Simulated.First
		if f < 3 {
			t.Fatalf("%s: simulated crossover at %d", c.Versus, f)
		}
		before, at := withN(p, f-1), withN(p, f)
		if simulate(t, c.Versus, before).Seconds < simulate(t, Ring, before).Seconds || simulate(t, c.Versus, at).Seconds >= simulate(t, Ring, at).Seconds {
			t.Errorf("%s: simulated crossover %d is not where the ring stops winning", c.Versus, f)
		}
	}
	if _, err := Crossovers(context.Background(), p, 1, 10); err == nil {
		t.Error("range from 1 accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Crossovers(ctx, p, 2, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled scan: %v", err)
	}
}

func TestParseAlgorithms(t *testing.T) {
	if got, err := ParseAlgorithms("all"); err != nil || len(got) != len(Algorithms) {
		t.Errorf("all: %v %v", got, err)
	}
	if got, err := ParseAlgorithms("ring, tree,ring"); err != nil || len(got) != 2 || got[0] != Ring || got[1] != Tree {
		t.Errorf("list: %v %v", got, err)
	}
	if _, err := ParseAlgorithms("ring,bus"); err == nil {
		t.Error("bus accepted")
	}
}

// The alternating planner reaches, stage by stage, the nodes the paper's recurrences count while
// the ring is large enough; the plain one reaches k + 2 in the first stage and then less than
// doubles its branches.
func TestAlternatingFollowsRecurrence(t *testing.T) {
	for _, k := range []int{3, 11} {
		// H = 0 and T_c = (k−1)·S·T_f give exactly this k.
		p := Params{Nodes: MaxNodes, TB: 2e-9, TF: 1e-9, Size: 100, Header: 0}
		p.TW = float64(k-1) * p.S() * p.TF
		if p.K() != k {
			t.Fatalf("k = %d, want %d", p.K(), k)
		}
		plan, err := NewPlan(TreeRingAlt, p)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; AlternatingReached(k, i) < MaxNodes/8; i++ {
			if got, want := plan.Reached[i-1], AlternatingReached(k, i); got != want {
				t.Errorf("k = %d stage %d: planned %d nodes, recurrence e(i)+o(i) = %d", k, i, got, want)
			}
		}
		plain, _ := NewPlan(TreeRing, p)
		if plain.Reached[0] != k+2 || plain.Stages <= plan.Stages {
			t.Errorf("k = %d: plain reaches %v in %d stages, alternating %d stages", k, plain.Reached[:3], plain.Stages, plan.Stages)
		}
		if _, err := Run(context.Background(), p, plan); err != nil {
			t.Error(err)
		}
	}
	if got := AlternatingReached(10, 2); got != 44 {
		t.Errorf("e(2)+o(2) at k = 10: %d, want 4k+4 = 44", got)
	}
}

// Forward only, deliver only: node 0 sends without the broadcast bit and TTL 2 through node 1,
// whose FU passes it on to node 2 without delivering it; then node 0's FU sends it again with TTL
// 1, which node 1 delivers. Every node receives once, and the times follow the FU's rules.
func TestForwardOnlyAndDeliverOnly(t *testing.T) {
	p := withN(cliDefaults, 3)
	plan := &Plan{Algorithm: "relay", Nodes: 3,
		Setup: []SetLink{{Node: 0, To: 1}, {Node: 1, To: 2}},
		Sends: [][]Send{{{To: 1, TTL: 2, FromApp: true}, {To: 1, TTL: 1}}, nil, nil},
	}
	r, err := Run(context.Background(), p, plan)
	if err != nil {
		t.Fatal(err)
	}
	sb := p.S() * p.TB
	// Node 2: the hop from node 1's FU starts at T_c + S·T_b; deliver only takes S·T_b from then.
	// Node 1: node 0's FU re-sends at T_c + S·T_b (its link still points there): arrives S·T_f later
	// and is in the application S·T_b after the hop began.
	if want := p.TC() + sb + sb; r.From[2] != 1 || !near(r.Delivered[2], want) {
		t.Errorf("node 2: from %d, delivered %.17g, want %.17g", r.From[2], r.Delivered[2], want)
	}
	if want := p.TC() + sb + sb; r.From[1] != 0 || !near(r.Delivered[1], want) {
		t.Errorf("node 1: from %d, delivered %.17g, want %.17g", r.From[1], r.Delivered[1], want)
	}
	if r.Passed != 1 || r.Forwards != 2 || r.AppSends != 1 || r.ConfigChanges != 2 {
		t.Errorf("passed %d, forwards %d, app sends %d, changes %d; want 1, 2, 1, 2", r.Passed, r.Forwards, r.AppSends, r.ConfigChanges)
	}
}

// Multicast (§2.3.1, m > 1): one send reaches every destination of the entry at once, and a
// second sender reaching one of them meanwhile is a collision. Entries above m are refused.
func TestMulticast(t *testing.T) {
	p := withN(cliDefaults, 4)
	p.Multicast = 3
	star := &Plan{Algorithm: "star", Nodes: 4, Sends: [][]Send{{{To: 1, Also: []int{2, 3}, TTL: 1, FromApp: true, Broadcast: true}}, nil, nil, nil}}
	r, err := Run(context.Background(), p, star)
	if err != nil {
		t.Fatal(err)
	}
	want := p.TC() + p.S()*p.TB + p.S()*p.TD()
	if !near(r.Seconds, want) || r.ConfigChanges != 1 || r.AppSends != 1 {
		t.Errorf("star: %.17g (want T_c + S·T_b + S·T_d = %.17g), %d changes, %d sends", r.Seconds, want, r.ConfigChanges, r.AppSends)
	}
	p.TW = 0
	// a_1 = (2, 3): node 1's FU forwards node 0's packet to both while node 0 re-points at node 3
	// (T_c = 0) and forwards there too: two senders reach node 3 at once, a collision.
	both := &Plan{Algorithm: "two-senders", Nodes: 4, Setup: []SetLink{{Node: 1, To: 2, Also: []int{3}}},
		Sends: [][]Send{{{To: 1, TTL: 2, FromApp: true, Broadcast: true}, {To: 3, TTL: 1, Broadcast: true}}, nil, nil, nil}}
	if _, err := Run(context.Background(), p, both); !errors.Is(err, ErrCollision) {
		t.Errorf("two senders: %v, want a collision", err)
	}
	p.Multicast = 2
	if _, err := Run(context.Background(), p, star); err == nil || !strings.Contains(err.Error(), "multicast size m = 2") {
		t.Errorf("three destinations at m = 2: %v", err)
	}
}
