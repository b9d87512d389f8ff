package matching

import (
	"fmt"
	"math"
)

// Weight is the numeric type of assignment weights.
type Weight interface {
	~int64 | ~float64
}

// MaxWeightAssignment returns a permutation perm of the square weight matrix w that maximises
// Σ w[i][perm[i]], and that sum. It is the Hungarian method in its shortest-augmenting-path form
// with row and column potentials (Kuhn 1955; the O(n³) organisation of Jonker and Volgenant 1987):
// rows are added one at a time, each by a Dijkstra-like search over reduced costs.
//
// With non-negative weights a maximum-weight assignment is also a maximum-weight matching once its
// zero-weight pairs are dropped. int64 weights are exact as long as n·max|w| fits in an int64;
// float64 weights must be finite.
func MaxWeightAssignment[W Weight](w [][]W) (perm []int, total W, err error) {
	n := len(w)
	var largest float64
	for i, row := range w {
		if len(row) != n {
			return nil, 0, fmt.Errorf("matching: weight row %d has %d entries, want %d", i, len(row), n)
		}
		for j, x := range row {
			if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, 0, fmt.Errorf("matching: weight [%d][%d] = %v is not finite", i, j, f)
			}
			largest = max(largest, math.Abs(float64(x)))
		}
	}
	// Potentials and path lengths stay within 2(n+1)·max|w|; for an integer W (where 1/2 is 0)
	// that must fit in an int64, or the sums would wrap silently.
	if W(1)/2 == 0 && largest*2*float64(n+1) >= math.MaxInt64/2 {
		return nil, 0, fmt.Errorf("matching: weights up to %g on %d rows could overflow int64 potentials", largest, n)
	}
	// Minimise cost = −w. Arrays are 1-based with column 0 a virtual column holding the row being
	// inserted, which keeps the augmenting-path bookkeeping free of special cases.
	u := make([]W, n+1)     // row potentials
	v := make([]W, n+1)     // column potentials
	p := make([]int, n+1)   // p[j]: row assigned to column j (0: none)
	way := make([]int, n+1) // way[j]: previous column on the shortest path to j
	minv := make([]W, n+1)
	used := make([]bool, n+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		for j := range used {
			used[j] = false
		}
		first := true // minv holds +∞ until the first scan fills every column in
		for {
			used[j0] = true
			i0 := p[j0]
			var delta W
			j1 := -1
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				cur := -w[i0-1][j-1] - u[i0] - v[j]
				if first || cur < minv[j] {
					minv[j] = cur
					way[j] = j0
				}
				if j1 < 0 || minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			first = false
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	perm = make([]int, n)
	for j := 1; j <= n; j++ {
		perm[p[j]-1] = j - 1
	}
	for i, j := range perm {
		total += w[i][j]
	}
	return perm, total, nil
}
