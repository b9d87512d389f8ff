package barrier

import (
	"context"
	"fmt"
	"math/bits"
	"slices"

	"github.com/tetris-hil/tetris-hil/schedules/matching"
)

// Slice is one term of a decomposition: the permutation Perm (Perm[i] = j) held for Duration
// bytes' worth of time on every port.
type Slice struct {
	Perm     []int
	Duration int64
}

// checkBistochastic rejects a matrix whose lines do not all share one sum: only such a matrix is
// guaranteed a perfect matching on its support at every step (Birkhoff–von Neumann), and a
// decomposition of anything else would stop half-way.
func checkBistochastic(m [][]int64) error {
	n := len(m)
	var norm int64
	for i := range n {
		if len(m[i]) != n {
			return fmt.Errorf("barrier: row %d has %d entries, want %d", i, len(m[i]), n)
		}
		var r, c int64
		for j := range n {
			if m[i][j] < 0 || m[j][i] < 0 {
				return fmt.Errorf("barrier: negative entry in line %d", i)
			}
			r += m[i][j]
			c += m[j][i]
		}
		if i == 0 {
			norm = r
		}
		if r != norm || c != norm {
			return fmt.Errorf("barrier: line %d sums to %d (row) and %d (column), line 0 to %d: not stuffed", i, r, c, norm)
		}
	}
	return nil
}

func clone(m [][]int64) [][]int64 {
	c := make([][]int64, len(m))
	for i := range m {
		c[i] = slices.Clone(m[i])
	}
	return c
}

// DecomposeBvN writes a matrix whose rows and columns all have the same sum (see package
// stuffing) as Σ Duration·Perm, the Birkhoff–von Neumann decomposition: take a perfect matching on
// the positive entries, give it the duration of its smallest entry, subtract, repeat until the
// matrix is zero. Each step zeroes at least one entry, so there are at most n²−2n+2 slices.
//
// maxMin false takes whatever perfect matching Hopcroft–Karp finds, started from the previous
// slice's matching minus the entries that step emptied (classical BvN, as in the Sunflow authors'
// simulator); the warm start keeps the O(n²) steps cheap. maxMin true takes the matching whose
// smallest entry is largest (matching.Bottleneck), which empties more per step and so needs fewer
// slices.
func DecomposeBvN(ctx context.Context, m [][]int64, maxMin bool) ([]Slice, error) {
	if err := checkBistochastic(m); err != nil {
		return nil, err
	}
	n := len(m)
	r := clone(m)
	adj := make([][]int, n)
	left := 0 // positive entries remaining
	for i := range n {
		for j := range n {
			if r[i][j] > 0 {
				adj[i] = append(adj[i], j)
				left++
			}
		}
	}
	var out []Slice
	var prev []int
	for left > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var perm []int
		var dur int64
		if maxMin {
			p, b, ok, err := matching.Bottleneck(r)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fmt.Errorf("barrier: BvN step %d found no perfect matching on a stuffed matrix", len(out))
			}
			perm, dur = p, b
		} else {
			p, size, err := matching.MaxMatching(matching.Graph{Adj: adj, Right: n}, prev)
			if err != nil {
				return nil, err
			}
			if size < n {
				return nil, fmt.Errorf("barrier: BvN step %d found a matching of %d < %d on a stuffed matrix", len(out), size, n)
			}
			perm = p
			dur = r[0][perm[0]]
			for i, j := range perm {
				dur = min(dur, r[i][j])
			}
		}
		for i, j := range perm {
			r[i][j] -= dur
			if r[i][j] == 0 {
				left--
				if k := slices.Index(adj[i], j); k >= 0 {
					adj[i] = slices.Delete(adj[i], k, k+1)
				}
			}
		}
		out = append(out, Slice{Perm: perm, Duration: dur})
		prev = perm
	}
	return out, nil
}

// DecomposeSolstice writes a stuffed matrix as Σ Duration·Perm by Solstice's threshold slicing
// (Liu et al., CoNEXT 2015): start from the largest power of two not above the largest entry,
// halve it until the entries at or above it hold a perfect matching, and take that matching for as
// long as its smallest entry allows (Solstice's Algorithm 2: t = min over the matching of D', which
// is at least the threshold). Slicing at a high threshold is what keeps slices long and few; cutting
// each slice to the threshold itself would leave remainders that need extra slices.
//
// Entries only shrink, so a threshold that failed once fails for good: the threshold is carried
// from slice to slice rather than recomputed, which gives the same slices with fewer probes.
func DecomposeSolstice(ctx context.Context, m [][]int64) ([]Slice, error) {
	if err := checkBistochastic(m); err != nil {
		return nil, err
	}
	r := clone(m)
	var largest, total int64
	for _, row := range r {
		for _, v := range row {
			largest = max(largest, v)
			total += v
		}
	}
	if largest == 0 {
		return nil, nil
	}
	t := int64(1) << (63 - bits.LeadingZeros64(uint64(largest)))
	var out []Slice
	var prev []int
	for total > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		perm, ok, err := matching.PerfectAtLeast(r, t, prev)
		if err != nil {
			return nil, err
		}
		if !ok {
			if t == 1 {
				return nil, fmt.Errorf("barrier: Solstice slice %d found no perfect matching on a stuffed matrix", len(out))
			}
			t /= 2
			continue
		}
		dur := r[0][perm[0]]
		for i, j := range perm {
			dur = min(dur, r[i][j])
		}
		for i, j := range perm {
			r[i][j] -= dur
		}
		total -= dur * int64(len(perm))
		out = append(out, Slice{Perm: perm, Duration: dur})
		prev = perm
	}
	return out, nil
}
