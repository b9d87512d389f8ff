package matching

import (
	"fmt"
	"slices"
)

// checkSquare rejects a matrix that is not n×n with non-negative entries.
func checkSquare(m [][]int64) error {
	for i, row := range m {
		if len(row) != len(m) {
			return fmt.Errorf("matching: matrix row %d has %d entries, want %d", i, len(row), len(m))
		}
		for j, v := range row {
			if v < 0 {
				return fmt.Errorf("matching: matrix entry [%d][%d] = %d is negative", i, j, v)
			}
		}
	}
	return nil
}

// atLeast is the bipartite graph of the entries of m that are ≥ t (t ≥ 1 gives the positive
// support), columns in increasing order.
func atLeast(m [][]int64, t int64, adj [][]int) Graph {
	for i, row := range m {
		a := adj[i][:0]
		for j, v := range row {
			if v >= t {
				a = append(a, j)
			}
		}
		adj[i] = a
	}
	return Graph{Adj: adj, Right: len(m)}
}

func newAdj(n int) [][]int {
	adj := make([][]int, n)
	for i := range adj {
		adj[i] = make([]int, 0, n)
	}
	return adj
}

// PerfectOnSupport returns a perfect matching of the square matrix m that uses only positive
// entries (perm[i] = j with m[i][j] > 0), or ok = false if there is none. warm, if not nil, is a
// matching to start from (see MaxMatching).
func PerfectOnSupport(m [][]int64, warm []int) (perm []int, ok bool, err error) {
	if err := checkSquare(m); err != nil {
		return nil, false, err
	}
	mate, size, err := MaxMatching(atLeast(m, 1, newAdj(len(m))), warm)
	if err != nil {
		return nil, false, err
	}
	if size < len(m) {
		return nil, false, nil
	}
	return mate, true, nil
}

// Bottleneck returns the perfect matching on the positive entries of the square matrix m whose
// smallest entry is as large as possible (the max-min or bottleneck assignment), and that smallest
// entry; ok = false if m has no perfect matching on its positive entries.
//
// It binary-searches the distinct positive values for the largest threshold t at which the entries
// ≥ t still hold a perfect matching. Every probe starts Hopcroft–Karp from the best matching found
// so far, restricted to the probe's graph, so that most probes only re-augment a few rows. The
// search never looks above min(smallest row maximum, smallest column maximum), which no perfect
// matching can exceed, and it probes that ceiling first because on skewed matrices it is often the
// answer.
func Bottleneck(m [][]int64) (perm []int, bottleneck int64, ok bool, err error) {
	if err := checkSquare(m); err != nil {
		return nil, 0, false, err
	}
	n := len(m)
	if n == 0 {
		return []int{}, 0, true, nil
	}
	ceiling := int64(-1)
	colMax := make([]int64, n)
	for _, row := range m {
		rowMax := int64(0)
		for j, v := range row {
			rowMax = max(rowMax, v)
			colMax[j] = max(colMax[j], v)
		}
		if ceiling < 0 || rowMax < ceiling {
			ceiling = rowMax
		}
	}
	for _, c := range colMax {
		ceiling = min(ceiling, c)
	}
	if ceiling == 0 {
		return nil, 0, false, nil
	}
	var values []int64
	for _, row := range m {
		for _, v := range row {
			if v > 0 && v <= ceiling {
				values = append(values, v)
			}
		}
	}
	slices.Sort(values)
	values = slices.Compact(values)

	adj := newAdj(n)
	var best []int
	probe := func(k int) bool {
		mate, size, _ := MaxMatching(atLeast(m, values[k], adj), best)
		if size < n {
			return false
		}
		best = mate
		return true
	}
	lo, hi := 0, len(values)-1 // the answer, if any, is values[lo..hi]
	if probe(hi) {
		return best, values[hi], true, nil
	}
	hi--
	if !probe(lo) {
		return nil, 0, false, nil
	}
	// Invariant: values[lo] is feasible (best is a matching for it), values[hi+1] is not.
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if probe(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return best, values[lo], true, nil
}
