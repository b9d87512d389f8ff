package tetris

import (
	"context"
	"fmt"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
)

// TestCompletionOverLowerBound reports how far Tetris plans from the larger lower bound over 100
// seeded skewed MoE-like demands per size at 800 Gbps, for α_r = 10 ns, 10 µs and 1 ms. The ratio
// is at least 1 by definition of a lower bound; the figures are logged (go test -v -run
// CompletionOver), for the Beneš network and, for comparison, the crossbar (snb).
func TestCompletionOverLowerBound(t *testing.T) {
	const seeds = 100
	sizes := []int{8, 16, 32}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, n := range sizes {
		for _, alpha := range []float64{10e-9, 10e-6, 1e-3} {
			t.Run(fmt.Sprintf("n=%d/alpha=%g", n, alpha), func(t *testing.T) {
				for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
					o := schedules.Options{Bandwidth: 100e9, Reconfig: alpha, Fabric: fabric}
					sum, worst := 0.0, 0.0
					for seed := uint64(0); seed < seeds; seed++ {
						d := moetest.Demand(seed, n, 1, 0)
						s, err := Schedule(context.Background(), d, o)
						if err != nil {
							t.Fatal(err)
						}
						lb := schedules.LowerBound(d, o.Bandwidth, o.Reconfig).Max()
						r := completion(s) / lb
						if r < 1-1e-12 {
							t.Fatalf("seed %d: completion %g is below the lower bound %g", seed, completion(s), lb)
						}
						sum += r
						worst = max(worst, r)
					}
					t.Logf("%-8s n=%d α_r=%gs b=800Gbps: completion/max(lower bounds) mean %.5f worst %.5f over %d demands", fabric, n, alpha, sum/seeds, worst, seeds)
				}
			})
		}
	}
}
