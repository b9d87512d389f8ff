// Package stuffing makes a non-negative square matrix doubly stochastic up to scale, so that a
// Birkhoff–von Neumann decomposition applies: every row and column is raised to the same sum, the
// norm, by adding "stuffing" that carries no real bytes (Solstice's QuickStuff, Liu et al.,
// CoNEXT 2015; Tetris §2.2: the added entries are idle capacity when the permutations run).
//
// Order of filling, which fixes the result exactly:
//  1. norm = the largest row or column sum.
//  2. Row-major over the positive entries, raise each by min(row slack, column slack). Growing
//     existing entries first keeps the support (and so the number of distinct circuits) small.
//  3. While slack remains, pair the row with the most slack with the column with the most slack
//     (lowest index on ties) and put min of the two into that cell. The cell is necessarily zero
//     (step 2 left no positive cell with slack on both sides, and each step-3 fill exhausts its row
//     or column), and each fill exhausts a row or a column, so this takes at most 2n−1 fills.
//
// Step 3 may stuff a diagonal cell. The caller decides what the diagonal means: a scheduler that
// ignores local traffic passes zeros there, and a stuffed diagonal cell then just means the port
// idles for that piece. Real bytes never go there because there are none to send.
package stuffing

import "fmt"

// Stuff returns the stuffed copy of m (m itself is not modified) and the common line sum norm.
// Stuffed minus m is the idle capacity added. m must be square with non-negative entries.
func Stuff(m [][]int64) (stuffed [][]int64, norm int64, err error) {
	n := len(m)
	rows := make([]int64, n)
	cols := make([]int64, n)
	stuffed = make([][]int64, n)
	for i, row := range m {
		if len(row) != n {
			return nil, 0, fmt.Errorf("stuffing: row %d has %d entries, want %d", i, len(row), n)
		}
		stuffed[i] = make([]int64, n)
		for j, v := range row {
			if v < 0 {
				return nil, 0, fmt.Errorf("stuffing: entry [%d][%d] = %d is negative", i, j, v)
			}
			stuffed[i][j] = v
			rows[i] += v
			cols[j] += v
			if rows[i] < 0 || cols[j] < 0 {
				return nil, 0, fmt.Errorf("stuffing: line sums through [%d][%d] overflow int64", i, j)
			}
		}
	}
	for i := range n {
		norm = max(norm, rows[i], cols[i])
	}
	// Slack is kept as norm − sum so that the two phases read the same numbers.
	for i := range n {
		rows[i] = norm - rows[i]
		cols[i] = norm - cols[i]
	}
	for i, row := range stuffed {
		for j, v := range row {
			if v == 0 || rows[i] == 0 {
				continue
			}
			if add := min(rows[i], cols[j]); add > 0 {
				row[j] += add
				rows[i] -= add
				cols[j] -= add
			}
		}
	}
	for n > 0 {
		i, j := argmax(rows), argmax(cols)
		if rows[i] == 0 {
			// Total row slack equals total column slack, so the columns are done too.
			break
		}
		add := min(rows[i], cols[j])
		stuffed[i][j] += add
		rows[i] -= add
		cols[j] -= add
	}
	return stuffed, norm, nil
}

// argmax is the lowest index holding the largest value of a non-empty slice.
func argmax(v []int64) int {
	best := 0
	for k := 1; k < len(v); k++ {
		if v[k] > v[best] {
			best = k
		}
	}
	return best
}
