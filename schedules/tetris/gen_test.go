package tetris

import (
	"math"
	"math/rand/v2"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// moeDemand is a seeded MoE-like All-to-All demand: n GPUs each dispatch tokens of tokenBytes to
// experts spread one per GPU, expert popularity following a Zipf law of exponent skew over a random
// ranking (a few hot receivers, as in seed 000 Figure 3), tokens per GPU varying by ±50%, and each
// pair dropping out with probability sparse (so residual degrees differ).
func moeDemand(seed uint64, n int, skew, sparse float64) *schedules.Demand {
	r := rand.New(rand.NewPCG(seed, 0x7e7215))
	const tokenBytes = 4096 * 2 // hidden 4096, bf16
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
			d.Bytes[i][j] = int64(math.Ceil(share)) * tokenBytes
		}
	}
	return d
}
