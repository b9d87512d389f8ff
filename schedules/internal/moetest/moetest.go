// Package moetest makes the demand matrices that the schedulers' tests and benchmarks share: the
// seeded MoE-like ones, so that benchmark figures of different schedulers at the same n are taken
// on the same matrices and can be compared, and hand-worked ones from rows.
package moetest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// TokenBytes is one token's activation: hidden size 4096 in bf16.
const TokenBytes = 4096 * 2

// Demand is a seeded MoE-like All-to-All dispatch: n GPUs each send about 2048 tokens (±50%) to
// experts placed one per GPU, expert popularity following a Zipf law of exponent skew over a random
// ranking (a few hot receivers, as in Tetris Figure 3), each entry scaled by a log-normal factor,
// and each pair dropped with probability sparse (so that residual degrees differ). The diagonal is
// left empty. Deterministic for a given seed.
func Demand(seed uint64, n int, skew, sparse float64) *schedules.Demand {
	r := rand.New(rand.NewPCG(seed, 0x7e7215))
	pop := make([]float64, n)
	rank := r.Perm(n)
	sum := 0.0
	for j := range pop {
		pop[j] = 1 / math.Pow(float64(rank[j]+1), skew)
		sum += pop[j]
	}
	d := schedules.NewDemand(n)
	for i := 0; i < n; i++ {
		tokens := 2048 * (0.5 + r.Float64())
		for j := 0; j < n; j++ {
			if i == j || r.Float64() < sparse {
				continue
			}
			share := tokens * pop[j] / sum * math.Exp(0.3*r.NormFloat64())
			d.Bytes[i][j] = int64(math.Ceil(share)) * TokenBytes
		}
	}
	return d
}

// Skewed is Demand with Zipf exponent 1 and every pair present: the matrices every scheduler's
// BenchmarkXxx/n=N uses (seed 1).
func Skewed(seed uint64, n int) *schedules.Demand { return Demand(seed, n, 1, 0) }

// FromRows is schedules.DemandFromRows for hand-worked test matrices: a bad matrix is a broken
// test, so it stops the test.
func FromRows(t testing.TB, rows [][]int64) *schedules.Demand {
	t.Helper()
	d, err := schedules.DemandFromRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
