package matching

import "fmt"

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

// newAdj is room for an n×n graph: each row's list has capacity n, all in one array (two
// allocations instead of n + 1; BvN and Solstice build one per slice).
func newAdj(n int) [][]int {
	adj := make([][]int, n)
	buf := make([]int, n*n)
	for i := range adj {
		adj[i] = buf[i*n : i*n : (i+1)*n]
	}
	return adj
}

// PerfectOnSupport returns a perfect matching of the square matrix m that uses only positive
// entries (perm[i] = j with m[i][j] > 0), or ok = false if there is none. warm, if not nil, is a
// matching to start from (see MaxMatching).
func PerfectOnSupport(m [][]int64, warm []int) (perm []int, ok bool, err error) {
	return PerfectAtLeast(m, 1, warm)
}

// PerfectAtLeast returns a perfect matching of the square matrix m that uses only entries ≥ t
// (t ≥ 1), or ok = false if there is none; warm as in MaxMatching. Solstice's threshold slicing
// asks exactly this question.
func PerfectAtLeast(m [][]int64, t int64, warm []int) (perm []int, ok bool, err error) {
	if err := checkSquare(m); err != nil {
		return nil, false, err
	}
	if t < 1 {
		return nil, false, fmt.Errorf("matching: threshold %d is below 1 (zero entries are not edges)", t)
	}
	mate, size, err := MaxMatching(atLeast(m, t, newAdj(len(m))), warm)
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
// It searches the positive values for the largest threshold t at which the entries ≥ t still hold
// a perfect matching. No perfect matching can beat min(smallest row maximum, smallest column
// maximum), so that ceiling is probed first: on skewed matrices it is often the answer. Below it,
// each probe takes the median of three candidates as the threshold and keeps only the candidates
// above it (feasible) or below it (infeasible), so the candidates are never sorted and their
// handling costs O(n²) in all. Every probe starts Hopcroft–Karp from the maximum matching of the
// last failed probe, so most probes only re-augment a few rows.
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
	adj := newAdj(n)
	// Every probe is below the lowest threshold that failed so far, so that failure's maximum
	// matching uses only edges the probe has too: a valid warm start lacking just a few rows.
	var best, failed []int
	probe := func(t int64) bool {
		mate, size, _ := MaxMatching(atLeast(m, t, adj), failed)
		if size < n {
			failed = mate
			return false
		}
		best, bottleneck = mate, t
		return true
	}
	if probe(ceiling) {
		return best, ceiling, true, nil
	}
	var cands []int64
	for _, row := range m {
		for _, v := range row {
			if v > 0 && v < ceiling {
				cands = append(cands, v)
			}
		}
	}
	for len(cands) > 0 {
		a, b, c := cands[0], cands[len(cands)/2], cands[len(cands)-1]
		pivot := max(min(a, b), min(max(a, b), c)) // median of three
		above := probe(pivot)
		kept := cands[:0]
		for _, v := range cands {
			if above && v > pivot || !above && v < pivot {
				kept = append(kept, v)
			}
		}
		cands = kept
	}
	if best == nil {
		return nil, 0, false, nil
	}
	return best, bottleneck, true, nil
}
