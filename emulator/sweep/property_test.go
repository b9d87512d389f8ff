package sweep

import (
	"context"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// genDemand draws an n×n demand with n in [2, 8] (padding included), about half the pairs
// nonzero, and sizes from 1 KB to 64 MB, with one receiver made hot as in MoE dispatch.
func genDemand(t *rapid.T, label string) *schedules.Demand {
	n := rapid.IntRange(2, 8).Draw(t, label+" n")
	d := schedules.NewDemand(n)
	hot := rapid.IntRange(0, n-1).Draw(t, label+" hot")
	for i := range n {
		for j := range n {
			if i == j || !rapid.Bool().Draw(t, label+" pair") {
				continue
			}
			b := rapid.Int64Range(1<<10, 64<<20).Draw(t, label+" bytes")
			if j == hot {
				b *= 3
			}
			d.Bytes[i][j] = b
		}
	}
	return d
}

// TestRunProperties: for random traces and grids, over every registered scheduler,
//   - no emulated completion beats the lower bound of Tetris §2.3 (with reconfiguration);
//   - each sum is its matrices' completions added in order, and each ratio is sum ÷ reference sum;
//   - two workers give exactly the result of one.
func TestRunProperties(t *testing.T) {
	algos := realAlgorithms()
	if len(algos) == 0 || algos[0] != DefaultReference {
		t.Skipf("tetris is not registered (have %v)", algos)
	}
	rapid.Check(t, func(t *rapid.T) {
		var ds []*schedules.Demand
		for k := range rapid.IntRange(1, 3).Draw(t, "matrices") {
			ds = append(ds, genDemand(t, string(rune('A'+k))))
		}
		bws := rapid.SliceOfNDistinct(rapid.SampledFrom([]float64{12.5e9, 50e9, 100e9}), 1, 2, rapid.ID).Draw(t, "bandwidths")
		rcs := rapid.SliceOfNDistinct(rapid.SampledFrom([]float64{0, 10e-9, 1e-6, 100e-6, 10e-3}), 1, 3, rapid.ID).Draw(t, "reconfigs")
		cfg := Config{Algorithms: algos, Bandwidths: bws, Reconfigs: rcs, Jobs: 1}
		one, err := Run(context.Background(), ds, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Jobs = 2
		two, err := Run(context.Background(), ds, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one, two) {
			t.Fatal("--jobs 2 result differs from --jobs 1")
		}
		for _, row := range one.Cells {
			for _, c := range row {
				ref := c.Algorithms[0].Completion
				for _, a := range c.Algorithms {
					var sum float64
					for m, v := range a.Completions {
						sum += v
						if lb := c.LowerBounds[m]; v < lb*(1-1e-12) {
							t.Fatalf("%s at b=%g α=%g matrix %d: completion %g below the lower bound %g",
								a.Algorithm, c.Bandwidth, c.Reconfig, m, v, lb)
						}
					}
					if a.Completion != sum || (ref > 0 && a.Ratio != sum/ref) {
						t.Fatalf("%s at b=%g α=%g: sum %g ratio %g, want %g and %g", a.Algorithm, c.Bandwidth, c.Reconfig, a.Completion, a.Ratio, sum, sum/ref)
					}
				}
			}
		}
	})
}
