package sunflow

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// skewed is a seeded All-to-All demand with a few hot receivers (seed 000 Figure 3): receiver
// popularity follows a Zipf law (exponent 1) over a random ranking, each sender's volume varies
// by ±50%, each entry by a log-normal factor, in units of one 8 KiB token.
func skewed(seed uint64, n int) *schedules.Demand {
	r := rand.New(rand.NewPCG(seed, 0x5f10))
	rank := r.Perm(n)
	pop, sum := make([]float64, n), 0.0
	for j := range pop {
		pop[j] = 1 / float64(rank[j]+1)
		sum += pop[j]
	}
	d := schedules.NewDemand(n)
	for i := range n {
		tokens := 2048 * (0.5 + r.Float64())
		for j := range n {
			if i != j {
				d.Bytes[i][j] = 8192 * int64(math.Ceil(tokens*pop[j]/sum*math.Exp(0.3*r.NormFloat64())))
			}
		}
	}
	return d
}

// BenchmarkSunflow plans and maps onto the Beneš fabric at 800 Gb/s and α_r = 10 µs (seed 000
// §4.1 defaults).
func BenchmarkSunflow(b *testing.B) {
	o := schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6}
	for _, n := range []int{8, 16, 32, 64, 128} {
		d := skewed(1, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Schedule(context.Background(), d, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSunflowPlan is the planner alone, without the mapping.
func BenchmarkSunflowPlan(b *testing.B) {
	for _, n := range []int{8, 128} {
		d := skewed(1, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Plan(context.Background(), d, 100e9, 10e-6, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
