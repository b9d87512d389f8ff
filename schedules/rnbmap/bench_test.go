package rnbmap_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
	"github.com/tetris-hil/tetris-hil/schedules/bff"
	"github.com/tetris-hil/tetris-hil/schedules/rnbmap"
	"github.com/tetris-hil/tetris-hil/schedules/sunflow"
)

// skewed is a seeded All-to-All demand with a few hot receivers (seed 000 Figure 3): receiver
// popularity follows a Zipf law (exponent 1) over a random ranking, each sender's volume varies
// by ±50%, each entry by a log-normal factor, in units of one 8 KiB token.
func skewed(seed uint64, n int) *schedules.Demand {
	r := rand.New(rand.NewPCG(seed, 0x4a9))
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

// BenchmarkRNBMap maps Sunflow's and BFF's plans of skewed demands onto the Beneš fabric: one
// looping routing of the live set per distinct planned start.
func BenchmarkRNBMap(b *testing.B) {
	planners := []struct {
		name string
		plan func(d *schedules.Demand) ([]rnbmap.Circuit, error)
	}{
		{"sunflow", func(d *schedules.Demand) ([]rnbmap.Circuit, error) {
			return sunflow.Plan(context.Background(), d, 100e9, 10e-6, false)
		}},
		{"bff", func(d *schedules.Demand) ([]rnbmap.Circuit, error) {
			return bff.Plan(context.Background(), d, 100e9, 10e-6)
		}},
	}
	for _, p := range planners {
		for _, n := range []int{8, 16, 32, 64, 128} {
			plan, err := p.plan(skewed(1, n))
			if err != nil {
				b.Fatal(err)
			}
			f, _ := benes.New(benes.SizeFor(n))
			b.Run(fmt.Sprintf("%s/n=%d", p.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := rnbmap.Paths(f, plan); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
