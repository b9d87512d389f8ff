package tetris

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func cand(u, v int, cost float64) candidate {
	return candidate{u: int32(u), v: int32(v), bytes: 1, cost: cost}
}

// TestThreshold checks step 4 on graphs small enough to see the answer: H is the smallest value
// ≥ B at which the candidates costing at most H contain a matching covering C.
func TestThreshold(t *testing.T) {
	cases := []struct {
		name     string
		cands    []candidate
		b        float64
		cTx, cRx []int
		want     float64
	}{{
		// Tx0 is covered by (0,1) at cost 3 ≤ B: no need to admit (1,2) at 8, and H never drops
		// below B.
		name: "covered at B", cands: []candidate{cand(0, 1, 3), cand(1, 2, 8)}, b: 5, cTx: []int{0}, want: 5,
	}, {
		// Below 7 both required transmitters only reach Rx0; (1,2) at 7 frees it; (1,1) at 9 is
		// never needed.
		name:  "raised to the cheapest cost that covers",
		cands: []candidate{cand(0, 0, 2), cand(1, 0, 3), cand(1, 1, 9), cand(1, 2, 7)}, b: 4, cTx: []int{0, 1}, want: 7,
	}, {
		// Every candidate is already below B.
		name: "all costs below B", cands: []candidate{cand(0, 1, 1), cand(2, 1, 2)}, b: 10, cRx: []int{1}, want: 10,
	}, {
		// Receivers 0 and 1 both lean on Tx0 until (2,0) is admitted at 4.
		name:  "receiver side",
		cands: []candidate{cand(0, 0, 1), cand(0, 1, 1), cand(1, 1, 6), cand(2, 0, 4)}, b: 2, cRx: []int{0, 1}, want: 4,
	}, {
		// Tx0 is coverable from cost 1, Rx1 only from 3 (by (1,1)); at 3 each side can be covered
		// on its own, which is enough for one matching to cover both (Mendelsohn–Dulmage).
		name:  "both sides",
		cands: []candidate{cand(0, 0, 1), cand(0, 2, 3), cand(1, 1, 3), cand(2, 1, 5)}, b: 0, cTx: []int{0}, cRx: []int{1}, want: 3,
	}, {
		name:  "binary search over many costs",
		cands: []candidate{cand(0, 1, 10), cand(0, 2, 20), cand(0, 3, 30), cand(1, 0, 40), cand(2, 0, 50)}, b: 0, cTx: []int{0, 1}, want: 40,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSelector(4)
			h, err := s.threshold(c.cands, c.b, c.cTx, c.cRx)
			if err != nil {
				t.Fatal(err)
			}
			if h != c.want {
				t.Errorf("H = %g, want %g", h, c.want)
			}
		})
	}
}

// TestThresholdImpossibleCover: C must be the maximum-degree set for a cover to exist; a C that
// is not (two required transmitters with one receiver between them) is reported, not looped on.
func TestThresholdImpossibleCover(t *testing.T) {
	s := newSelector(2)
	if _, err := s.threshold([]candidate{cand(0, 0, 1), cand(1, 0, 1)}, 0, []int{0, 1}, nil); err == nil {
		t.Fatal("two transmitters covered through one receiver: want an error")
	}
}

// TestGreedy checks step 5: A is walked by decreasing max(W_u, W_v), then decreasing R_uv, and an
// edge is kept only if the rest of A can still cover C.
func TestGreedy(t *testing.T) {
	type e struct {
		u, v  int
		bytes int64
	}
	cases := []struct {
		name     string
		edges    []e
		wTx, wRx []float64 // W_e per transmitter and receiver
		cTx, cRx []int
		want     [][2]int
	}{{
		// (2,0) has the most remaining work (key W_Tx2 = 10) but takes Rx0, leaving Tx0 and Tx1
		// to share Rx1: it is refused. Without the check Tx1 would be left uncovered.
		name:  "refuses an edge that blocks C",
		edges: []e{{2, 0, 1}, {0, 0, 1}, {0, 1, 1}, {1, 1, 1}},
		wTx:   []float64{5, 4, 10, 0}, wRx: []float64{0, 0, 0, 0},
		cTx: []int{0, 1}, want: [][2]int{{0, 0}, {1, 1}},
	}, {
		// Same key (W_Tx0 = 3): the longer demand first.
		name:  "ties by residual time",
		edges: []e{{0, 1, 1}, {0, 2, 7}, {1, 1, 1}},
		wTx:   []float64{3, 1, 0, 0}, wRx: []float64{0, 0, 0, 0},
		cTx: []int{0}, want: [][2]int{{0, 2}, {1, 1}},
	}, {
		// Equal W on two endpoints of different sides: their candidates are walked together, by
		// residual time: (1,3) (R 5, key W_Rx3 = 6) before (0,1) (R 2, key W_Tx0 = 6).
		name:  "equal keys across endpoints",
		edges: []e{{0, 1, 2}, {1, 3, 5}, {0, 3, 1}},
		wTx:   []float64{6, 1, 0, 0}, wRx: []float64{0, 1, 0, 6},
		want: [][2]int{{1, 3}, {0, 1}},
	}, {
		// Edges outside C are taken whenever C stays coverable: (3,3) first (key 9; Rx0 still has
		// Tx1 and Tx2), then (2,0) (key 8) covers Rx0, and (1,2) (key 1) fills in.
		name:  "fills beyond C",
		edges: []e{{3, 3, 1}, {1, 0, 1}, {2, 0, 1}, {1, 2, 1}},
		wTx:   []float64{0, 0, 8, 9}, wRx: []float64{2, 0, 1, 0},
		cRx: []int{0}, want: [][2]int{{3, 3}, {2, 0}, {1, 2}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := append(append([]float64(nil), c.wTx...), c.wRx...)
			var cands []candidate
			for _, x := range c.edges {
				cands = append(cands, candidate{u: int32(x.u), v: int32(x.v), bytes: x.bytes})
			}
			s := newSelector(4)
			var got [][2]int
			for _, i := range s.greedy(cands, 0, w, c.cTx, c.cRx, nil) {
				got = append(got, [2]int{int(cands[i].u), int(cands[i].v)})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("matching %v, want %v", got, c.want)
			}
		})
	}
}

// TestGreedyRespectsThreshold: candidates costing more than H are not in A.
func TestGreedyRespectsThreshold(t *testing.T) {
	cands := []candidate{{u: 0, v: 1, cost: 5, bytes: 1}, {u: 0, v: 2, cost: 2, bytes: 1}}
	s := newSelector(3)
	m := s.greedy(cands, 4, []float64{0, 0, 0, 0, 9, 1}, []int{0}, nil, nil)
	if len(m) != 1 || cands[m[0]].v != 2 {
		t.Fatalf("with H = 4 only (0,2) is in A, got %v", m)
	}
}

// TestGreedyByCost is the no-degree-coverage ablation: cheapest first, endpoints free.
func TestGreedyByCost(t *testing.T) {
	cands := []candidate{
		{u: 0, v: 0, cost: 3, bytes: 1},
		{u: 0, v: 1, cost: 1, bytes: 1},
		{u: 1, v: 1, cost: 2, bytes: 1},
		{u: 1, v: 0, cost: 4, bytes: 1},
	}
	s := newSelector(2)
	var got [][2]int
	for _, i := range s.greedyByCost(cands, nil) {
		got = append(got, [2]int{int(cands[i].u), int(cands[i].v)})
	}
	// (0,1) at 1, then (1,1) is blocked by Rx1, (0,0) by Tx0, and (1,0) at 4 completes it.
	if want := [][2]int{{0, 1}, {1, 0}}; !slices.Equal(got, want) {
		t.Errorf("matching %v, want %v", got, want)
	}
}

// TestSideMatcherAugments: an alternating path moves an earlier choice to make room.
func TestSideMatcherAugments(t *testing.T) {
	m := newSideMatcher(3)
	m.adj[0].set(0)
	m.adj[1].set(0)
	m.adj[1].set(1)
	m.adj[2].set(1)
	for i := 0; i < 3; i++ {
		m.free.set(i)
	}
	m.clearMatching()
	if !m.saturate([]int{1, 0}) {
		t.Fatal("{0,1} can be saturated: 0–0, 1–1")
	}
	if m.matchL[0] != 0 || m.matchL[1] != 1 {
		t.Errorf("matching %v, want [0 1 -1]", m.matchL)
	}
	// Now 2 can only have 1, which 1 needs, and 1's alternative 0 is 0's only receiver.
	if m.saturate([]int{2}) {
		t.Error("three left vertices on two right vertices: want false")
	}
	if m.matchL[0] != 0 || m.matchL[1] != 1 {
		t.Errorf("a failed augmentation changed the matching: %v", m.matchL)
	}
}

// TestGreedyMatchesReference compares the greedy walk with a direct reading of step 5 — sort A,
// and before each take re-check from scratch that the free endpoints can still cover C — on random
// graphs with C the maximum-degree endpoints, and checks the result covers C. Dense graphs with few
// distinct W make refusals and ties common, which is what the walk's shortcuts (refusals foreseen
// per key endpoint, groups of equal W) must get right.
func TestGreedyMatchesReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(rt, "n")
		density := rapid.IntRange(3, 9).Draw(rt, "density") // edges in tenths
		var cands []candidate
		deg := make([]int, 2*n)
		w := make([]float64, 2*n)
		for e := range w {
			w[e] = float64(rapid.IntRange(0, 4).Draw(rt, "w"))
		}
		for u := 0; u < n; u++ {
			for v := 0; v < n; v++ {
				if rapid.IntRange(0, 9).Draw(rt, "edge") < density {
					cands = append(cands, candidate{u: int32(u), v: int32(v), bytes: int64(rapid.IntRange(1, 3).Draw(rt, "bytes"))})
					deg[u]++
					deg[n+v]++
				}
			}
		}
		delta := slices.Max(deg)
		var cTx, cRx []int
		for e, d := range deg {
			if d == delta && delta > 0 {
				if e < n {
					cTx = append(cTx, e)
				} else {
					cRx = append(cRx, e-n)
				}
			}
		}
		got := newSelector(n).greedy(cands, 0, w, cTx, cRx, nil)

		order := make([]int, len(cands))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(i, j int) int {
			a, b := cands[i], cands[j]
			ka, kb := max(w[a.u], w[n+int(a.v)]), max(w[b.u], w[n+int(b.v)])
			switch {
			case ka != kb:
				if ka > kb {
					return -1
				}
				return 1
			case a.bytes != b.bytes:
				return int(b.bytes - a.bytes)
			}
			return 0
		})
		usedTx, usedRx := make([]bool, n), make([]bool, n)
		coverable := func() bool {
			var rest []candidate
			for _, c := range cands {
				if !usedTx[c.u] && !usedRx[c.v] {
					rest = append(rest, c)
				}
			}
			var tx, rx []int
			for _, u := range cTx {
				if !usedTx[u] {
					tx = append(tx, u)
				}
			}
			for _, v := range cRx {
				if !usedRx[v] {
					rx = append(rx, v)
				}
			}
			return newSelector(n).covers(rest, 0, tx, rx)
		}
		var want []int
		for _, i := range order {
			c := cands[i]
			if usedTx[c.u] || usedRx[c.v] {
				continue
			}
			usedTx[c.u], usedRx[c.v] = true, true
			if coverable() {
				want = append(want, i)
			} else {
				usedTx[c.u], usedRx[c.v] = false, false
			}
		}
		if !slices.Equal(got, want) {
			rt.Fatalf("greedy took %v, the reference %v", got, want)
		}
		for _, u := range cTx {
			if !usedTx[u] {
				rt.Fatalf("transmitter %d of C left uncovered", u)
			}
		}
		for _, v := range cRx {
			if !usedRx[v] {
				rt.Fatalf("receiver %d of C left uncovered", v)
			}
		}
	})
}

// TestRefusalsForeseeTake checks the walk's shortcut against take itself: after some takes on a
// random graph with C its maximum-degree endpoints, one classification of a key endpoint must
// say, for every partner at once, exactly what take would answer for that pair.
func TestRefusalsForeseeTake(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 10).Draw(rt, "n")
		// Mostly near-regular graphs (a few permutations, some pairs added or dropped): there
		// nearly every endpoint is in C and many takes are refused.
		edge := make([]bool, n*n)
		ports := make([]int, n)
		for i := range ports {
			ports[i] = i
		}
		for range rapid.IntRange(1, 3).Draw(rt, "permutations") {
			for u, v := range rapid.Permutation(ports).Draw(rt, "perm") {
				edge[u*n+v] = true
			}
		}
		for range rapid.IntRange(0, n).Draw(rt, "flips") {
			i := rapid.IntRange(0, n*n-1).Draw(rt, "flip")
			edge[i] = !edge[i]
		}
		var cands []candidate
		deg := make([]int, 2*n)
		for i, ok := range edge {
			if u, v := i/n, i%n; ok {
				cands = append(cands, candidate{u: int32(u), v: int32(v), bytes: 1})
				deg[u]++
				deg[n+v]++
			}
		}
		if len(cands) == 0 {
			return
		}
		delta := slices.Max(deg)
		var cTx, cRx []int
		for e, d := range deg {
			if d == delta {
				if e < n {
					cTx = append(cTx, e)
				} else {
					cRx = append(cRx, e-n)
				}
			}
		}
		pre := rapid.SliceOfN(rapid.IntRange(0, len(cands)-1), 0, n).Draw(rt, "takes")
		// state builds the same selector state every time: the graph, its covering matchings and
		// the takes in pre that are possible.
		state := func() *selector {
			s := newSelector(n)
			if !s.covers(cands, 0, cTx, cRx) {
				rt.Fatalf("C is the maximum-degree set, so it can be covered")
			}
			for _, i := range pre {
				if c := cands[i]; !s.usedTx[c.u] && !s.usedRx[c.v] {
					s.take(int(c.u), int(c.v))
				}
			}
			return s
		}
		for key := range 2 * n {
			checkKey(rt, state, cands, n, key)
		}
	})
}

// checkKey compares one classification of key endpoint key with take on every live candidate of
// that endpoint, each on a fresh copy of the state.
func checkKey(rt *rapid.T, state func() *selector, cands []candidate, n, key int) {
	s := state()
	s.classify(s.ref, key)
	for _, c := range cands {
		u, v := int(c.u), int(c.v)
		if s.usedTx[u] || s.usedRx[v] {
			continue
		}
		var p int
		switch key {
		case u:
			p = v
		case n + v:
			p = u
		default:
			continue
		}
		want := !state().take(u, v)
		if got := s.refuses(s.ref, p); got != want {
			rt.Fatalf("key endpoint %d, candidate (%d,%d): classification says refused=%v, take says %v", key, c.u, c.v, got, want)
		}
	}
}

// TestSortByW checks the walk's endpoint order against a stable sort by decreasing W: from index
// order and from the order a previous call left, with many ties, and −0 equal to +0.
func TestSortByW(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 150).Draw(rt, "n")
		m := 2 * n // the walk sorts every endpoint: n transmitters, then n receivers
		values := []float64{0, math.Copysign(0, -1), 1e-9, 0.5, 1, 1 + 1e-15, 3, 1e300, math.Inf(1)}
		s := newSelector(n)
		for call := range 3 {
			w := make([]float64, m)
			for e := range w {
				if rapid.Bool().Draw(rt, "tie") {
					w[e] = values[rapid.IntRange(0, len(values)-1).Draw(rt, "value")]
				} else {
					w[e] = rapid.Float64Range(0, 1e6).Draw(rt, "w")
				}
			}
			want := make([]int32, m)
			for e := range want {
				want[e] = int32(e)
			}
			slices.SortStableFunc(want, func(a, b int32) int {
				switch {
				case w[a] > w[b]:
					return -1
				case w[a] < w[b]:
					return 1
				}
				return 0
			})
			if got := s.sortByW(w); !slices.Equal(got, want) {
				rt.Fatalf("call %d: sortByW(%v) = %v, want %v", call, w, got, want)
			}
		}
	})
}
