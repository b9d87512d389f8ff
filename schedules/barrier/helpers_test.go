package barrier

import (
	"math"
	"math/rand/v2"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// skewedDemand is a seeded n×n demand shaped like MoE all-to-all traffic: a few hot receivers
// (expert popularity is heavy-tailed) and lognormal noise per pair, about 1 MB per pair on average.
func skewedDemand(n int, seed uint64) *schedules.Demand {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	hot := make([]float64, n)
	for j := range hot {
		hot[j] = math.Exp(r.NormFloat64())
	}
	d := schedules.NewDemand(n)
	for i := range n {
		for j := range n {
			if i != j {
				d.Bytes[i][j] = int64(1e6 * hot[j] * math.Exp(0.5*r.NormFloat64()))
			}
		}
	}
	return d
}
