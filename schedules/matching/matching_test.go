package matching

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// isMatching reports why mate is not a matching of g, or "" if it is one.
func isMatching(g Graph, mate []int) string {
	if len(mate) != len(g.Adj) {
		return fmt.Sprintf("mate has %d entries for %d left vertices", len(mate), len(g.Adj))
	}
	taken := map[int]int{}
	for u, v := range mate {
		if v == unmatched {
			continue
		}
		if !slices.Contains(g.Adj[u], v) {
			return fmt.Sprintf("pair (%d,%d) is not an edge", u, v)
		}
		if w, dup := taken[v]; dup {
			return fmt.Sprintf("right vertex %d matched to %d and %d", v, w, u)
		}
		taken[v] = u
	}
	return ""
}

// bruteMaxMatching tries every choice (each left vertex takes a free neighbour or nothing).
func bruteMaxMatching(g Graph) int {
	used := make([]bool, g.Right)
	var rec func(u int) int
	rec = func(u int) int {
		if u == len(g.Adj) {
			return 0
		}
		best := rec(u + 1)
		for _, v := range g.Adj[u] {
			if !used[v] {
				used[v] = true
				best = max(best, 1+rec(u+1))
				used[v] = false
			}
		}
		return best
	}
	return rec(0)
}

// permutations calls f with every permutation of 0..n-1.
func permutations(n int, f func([]int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			f(p)
			return
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			rec(k + 1)
			p[k], p[i] = p[i], p[k]
		}
	}
	rec(0)
}

func isPermutation(p []int, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, j := range p {
		if j < 0 || j >= n || seen[j] {
			return false
		}
		seen[j] = true
	}
	return true
}

func TestMaxMatchingHandWorked(t *testing.T) {
	tests := []struct {
		name string
		g    Graph
		warm []int
		size int
	}{
		// Greedy in row order would give 0 the column 0 and leave 1 unmatched; the augmenting path
		// 1→0→0→1 fixes that.
		{"needs augmenting path", Graph{Adj: [][]int{{0, 1}, {0}}, Right: 2}, nil, 2},
		{"warm start is kept and completed", Graph{Adj: [][]int{{0, 1}, {0}}, Right: 2}, []int{0, unmatched}, 2},
		{"warm start with a non-edge is repaired", Graph{Adj: [][]int{{1}, {0}}, Right: 2}, []int{0, 1}, 2},
		// Rows 0,1,2 all only reach columns 0,1: Hall's condition fails, at most 2 of them match.
		{"Hall violation", Graph{Adj: [][]int{{0, 1}, {0, 1}, {1, 0}, {2, 3}}, Right: 4}, nil, 3},
		{"no edges", Graph{Adj: [][]int{{}, {}}, Right: 3}, nil, 0},
		{"more right than left", Graph{Adj: [][]int{{4}, {4, 2}}, Right: 5}, nil, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mate, size, err := MaxMatching(tc.g, tc.warm)
			if err != nil {
				t.Fatal(err)
			}
			if size != tc.size {
				t.Errorf("size = %d, want %d (mate %v)", size, tc.size, mate)
			}
			if why := isMatching(tc.g, mate); why != "" {
				t.Errorf("mate %v: %s", mate, why)
			}
			got := 0
			for _, v := range mate {
				if v != unmatched {
					got++
				}
			}
			if got != size {
				t.Errorf("mate %v has %d pairs, reported size %d", mate, got, size)
			}
		})
	}
}

func TestMaxMatchingRejectsBadInput(t *testing.T) {
	if _, _, err := MaxMatching(Graph{Adj: [][]int{{2}}, Right: 2}, nil); err == nil {
		t.Error("neighbour 2 of a graph with 2 right vertices was accepted")
	}
	if _, _, err := MaxMatching(Graph{Adj: [][]int{{0}}, Right: 1}, []int{0, 0}); err == nil {
		t.Error("warm start longer than the left side was accepted")
	}
}

// drawGraph draws a bipartite graph with up to 7 vertices a side.
func drawGraph(t *rapid.T) Graph {
	left := rapid.IntRange(0, 7).Draw(t, "left")
	right := rapid.IntRange(1, 7).Draw(t, "right")
	g := Graph{Adj: make([][]int, left), Right: right}
	for u := range g.Adj {
		for v := 0; v < right; v++ {
			if rapid.Bool().Draw(t, "edge") {
				g.Adj[u] = append(g.Adj[u], v)
			}
		}
	}
	return g
}

func TestMaxMatchingMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawGraph(t)
		var warm []int
		if rapid.Bool().Draw(t, "warm") {
			// Any values at all: the warm start must be filtered, never trusted.
			warm = rapid.SliceOfN(rapid.IntRange(-1, g.Right), len(g.Adj), len(g.Adj)).Draw(t, "warmMate")
		}
		mate, size, err := MaxMatching(g, warm)
		if err != nil {
			t.Fatal(err)
		}
		if why := isMatching(g, mate); why != "" {
			t.Fatalf("mate %v: %s", mate, why)
		}
		if want := bruteMaxMatching(g); size != want {
			t.Fatalf("size %d, brute force %d (graph %v)", size, want, g.Adj)
		}
	})
}

// drawMatrix draws an n×n matrix of small values with many zeros, so that ties and missing
// perfect matchings are common.
func drawMatrix(t *rapid.T, maxN int) [][]int64 {
	n := rapid.IntRange(1, maxN).Draw(t, "n")
	m := make([][]int64, n)
	for i := range m {
		m[i] = rapid.SliceOfN(rapid.Int64Range(0, 9), n, n).Draw(t, fmt.Sprintf("row%d", i))
	}
	return m
}

func TestPerfectOnSupportMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := drawMatrix(t, 6)
		n := len(m)
		exists := false
		permutations(n, func(p []int) {
			all := true
			for i, j := range p {
				all = all && m[i][j] > 0
			}
			exists = exists || all
		})
		perm, ok, err := PerfectOnSupport(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok != exists {
			t.Fatalf("ok = %v, brute force says a perfect matching exists: %v (%v)", ok, exists, m)
		}
		if !ok {
			return
		}
		if !isPermutation(perm, n) {
			t.Fatalf("%v is not a permutation", perm)
		}
		for i, j := range perm {
			if m[i][j] <= 0 {
				t.Fatalf("perm %v uses zero entry [%d][%d]", perm, i, j)
			}
		}
	})
}

func TestBottleneckHandWorked(t *testing.T) {
	tests := []struct {
		name string
		m    [][]int64
		perm []int
		min  int64
		ok   bool
	}{
		// The identity has the larger sum (101) but a smallest entry of 1; the swap keeps 50.
		{"max-min differs from max-weight", [][]int64{{100, 50}, {50, 1}}, []int{1, 0}, 50, true},
		// Perfect matchings on the support: identity (5,6,7), [0 2 1] (5,2,3), [1 0 2] (1,4,7).
		{"3x3", [][]int64{{5, 1, 0}, {4, 6, 2}, {0, 3, 7}}, []int{0, 1, 2}, 5, true},
		// The row maxima cap the answer at 4 (row 1), which is reachable.
		{"ceiling is the answer", [][]int64{{9, 8, 0}, {4, 0, 3}, {0, 9, 9}}, []int{1, 0, 2}, 4, true},
		{"no perfect matching", [][]int64{{1, 1, 0}, {2, 2, 0}, {3, 3, 0}}, nil, 0, false},
		{"1x1", [][]int64{{7}}, []int{0}, 7, true},
		{"1x1 zero", [][]int64{{0}}, nil, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			perm, b, ok, err := Bottleneck(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok || b != tc.min || !slices.Equal(perm, tc.perm) {
				t.Errorf("Bottleneck = %v, %d, %v; want %v, %d, %v", perm, b, ok, tc.perm, tc.min, tc.ok)
			}
		})
	}
}

func TestBottleneckMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := drawMatrix(t, 6)
		n := len(m)
		want := int64(-1)
		permutations(n, func(p []int) {
			lo := int64(math.MaxInt64)
			for i, j := range p {
				lo = min(lo, m[i][j])
			}
			if lo > 0 {
				want = max(want, lo)
			}
		})
		perm, b, ok, err := Bottleneck(m)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (want > 0) {
			t.Fatalf("ok = %v, brute force bottleneck %d (%v)", ok, want, m)
		}
		if !ok {
			return
		}
		if b != want {
			t.Fatalf("bottleneck %d, brute force %d (%v)", b, want, m)
		}
		if !isPermutation(perm, n) {
			t.Fatalf("%v is not a permutation", perm)
		}
		for i, j := range perm {
			if m[i][j] < b {
				t.Fatalf("perm %v has entry [%d][%d] = %d below its bottleneck %d", perm, i, j, m[i][j], b)
			}
		}
	})
}

func TestMaxWeightAssignmentHandWorked(t *testing.T) {
	tests := []struct {
		name  string
		w     [][]int64
		perm  []int
		total int64
	}{
		// Sums of the six permutations: [0 1 2] 6, [0 2 1] 11, [1 0 2] 5, [1 2 0] 9, [2 0 1] 7, [2 1 0] 6.
		{"3x3", [][]int64{{4, 1, 3}, {2, 0, 5}, {3, 2, 2}}, []int{0, 2, 1}, 11},
		{"max-weight differs from max-min", [][]int64{{100, 50}, {50, 1}}, []int{0, 1}, 101},
		{"zeros", [][]int64{{0, 0}, {0, 0}}, []int{0, 1}, 0},
		{"empty", [][]int64{}, []int{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			perm, total, err := MaxWeightAssignment(tc.w)
			if err != nil {
				t.Fatal(err)
			}
			if total != tc.total || !slices.Equal(perm, tc.perm) {
				t.Errorf("MaxWeightAssignment = %v, %d; want %v, %d", perm, total, tc.perm, tc.total)
			}
		})
	}
}

func TestMaxWeightAssignmentRejectsBadInput(t *testing.T) {
	if _, _, err := MaxWeightAssignment([][]float64{{1, math.NaN()}, {0, 1}}); err == nil {
		t.Error("NaN weight accepted")
	}
	if _, _, err := MaxWeightAssignment([][]int64{{1, 2}, {3}}); err == nil {
		t.Error("ragged matrix accepted")
	}
	if _, _, err := MaxWeightAssignment([][]int64{{1 << 61, 0}, {0, 1}}); err == nil {
		t.Error("weights that overflow int64 potentials accepted")
	}
	if _, _, err := MaxWeightAssignment([][]float64{{1 << 61, 0}, {0, 1}}); err != nil {
		t.Errorf("float64 weights of 2^61 rejected: %v", err)
	}
}

func TestMaxWeightAssignmentMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "n")
		w := make([][]int64, n)
		wf := make([][]float64, n)
		for i := range w {
			// Negative weights too: the algorithm must not rely on non-negativity.
			w[i] = rapid.SliceOfN(rapid.Int64Range(-20, 1000), n, n).Draw(t, fmt.Sprintf("row%d", i))
			wf[i] = make([]float64, n)
			for j, x := range w[i] {
				wf[i][j] = float64(x) / 7
			}
		}
		want := int64(math.MinInt64)
		permutations(n, func(p []int) {
			s := int64(0)
			for i, j := range p {
				s += w[i][j]
			}
			want = max(want, s)
		})
		perm, total, err := MaxWeightAssignment(w)
		if err != nil {
			t.Fatal(err)
		}
		if !isPermutation(perm, n) {
			t.Fatalf("%v is not a permutation", perm)
		}
		sum := int64(0)
		for i, j := range perm {
			sum += w[i][j]
		}
		if total != want || sum != want {
			t.Fatalf("total %d (perm sums to %d), brute force %d (%v)", total, sum, want, w)
		}
		permF, totalF, err := MaxWeightAssignment(wf)
		if err != nil {
			t.Fatal(err)
		}
		if !isPermutation(permF, n) || math.Abs(totalF-float64(want)/7) > 1e-9*float64(n)*1000 {
			t.Fatalf("float64: perm %v total %g, want %g", permF, totalF, float64(want)/7)
		}
	})
}

// skewed is a seeded dense matrix with heavy-tailed entries, the shape of MoE all-to-all traffic.
func skewed(n int, seed uint64) [][]int64 {
	r := rand.New(rand.NewPCG(seed, 1))
	m := make([][]int64, n)
	for i := range m {
		m[i] = make([]int64, n)
		for j := range m[i] {
			m[i][j] = int64(math.Exp(r.NormFloat64()*1.5) * 1e6)
		}
	}
	return m
}

func BenchmarkMaxWeightAssignment(b *testing.B) {
	for _, n := range []int{8, 32, 128} {
		m := skewed(n, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := MaxWeightAssignment(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkBottleneck(b *testing.B) {
	for _, n := range []int{8, 32, 128} {
		m := skewed(n, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, _, _, err := Bottleneck(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPerfectOnSupport(b *testing.B) {
	for _, n := range []int{8, 32, 128} {
		m := skewed(n, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := PerfectOnSupport(m, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestPerfectAtLeast(t *testing.T) {
	m := [][]int64{{8, 3}, {5, 8}}
	tests := []struct {
		t    int64
		perm []int
		ok   bool
	}{
		{9, nil, false},
		{8, []int{0, 1}, true},
		{4, []int{0, 1}, true},
		{1, []int{0, 1}, true},
	}
	for _, tc := range tests {
		perm, ok, err := PerfectAtLeast(m, tc.t, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok != tc.ok || !slices.Equal(perm, tc.perm) {
			t.Errorf("threshold %d: %v, %v; want %v, %v", tc.t, perm, ok, tc.perm, tc.ok)
		}
	}
	// Only the anti-diagonal survives a threshold of 5 here.
	perm, ok, err := PerfectAtLeast([][]int64{{1, 6}, {5, 9}}, 5, nil)
	if err != nil || !ok || !slices.Equal(perm, []int{1, 0}) {
		t.Errorf("anti-diagonal: %v, %v, %v; want [1 0], true", perm, ok, err)
	}
	if _, _, err := PerfectAtLeast(m, 0, nil); err == nil {
		t.Error("threshold 0 accepted")
	}
}

// kuhn is the simple O(V·E) augmenting-path algorithm, a reference for graphs too big to
// enumerate.
func kuhn(g Graph) int {
	mateR := make([]int, g.Right)
	for i := range mateR {
		mateR[i] = unmatched
	}
	var try func(u int, seen []bool) bool
	try = func(u int, seen []bool) bool {
		for _, v := range g.Adj[u] {
			if seen[v] {
				continue
			}
			seen[v] = true
			if mateR[v] == unmatched || try(mateR[v], seen) {
				mateR[v] = u
				return true
			}
		}
		return false
	}
	size := 0
	for u := range g.Adj {
		if try(u, make([]bool, g.Right)) {
			size++
		}
	}
	return size
}

func TestMaxMatchingMatchesKuhnOnLargerGraphs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		left := rapid.IntRange(1, 40).Draw(t, "left")
		right := rapid.IntRange(1, 40).Draw(t, "right")
		// Sparse graphs have long augmenting paths, which is where layering mistakes show.
		deg := rapid.IntRange(0, 4).Draw(t, "degree")
		g := Graph{Adj: make([][]int, left), Right: right}
		for u := range g.Adj {
			for range deg {
				g.Adj[u] = append(g.Adj[u], rapid.IntRange(0, right-1).Draw(t, "v"))
			}
		}
		mate, size, err := MaxMatching(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		if why := isMatching(g, mate); why != "" {
			t.Fatalf("mate %v: %s", mate, why)
		}
		if want := kuhn(g); size != want {
			t.Fatalf("size %d, Kuhn's algorithm %d", size, want)
		}
	})
}
