package emulator_test

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// TestNoSchedulerBeatsTheLowerBound: for random skewed demands (padding included, sometimes
// with counted local demand), every registered scheduler, on the Beneš fabric and the crossbar,
// under parallel and controller reconfiguration, executes no sooner than schedules.LowerBound
// (max_e load_e/b + d_e·α_r, α_r the model's one-command delay). The bound is tight on some
// demands (a permutation: one circuit per endpoint, α_r + bytes/b), so a regression that
// charged one α_r too many would fail here on those, and one that let a circuit skip its first
// switch change would fail the other way.
func TestNoSchedulerBeatsTheLowerBound(t *testing.T) {
	names := schedules.Names()
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 8).Draw(t, "n")
		d := schedules.NewDemand(n)
		d.CountDiagonal = rapid.Float64Range(0, 1).Draw(t, "local") < 0.2
		hot := rapid.IntRange(0, n-1).Draw(t, "hot")
		density := rapid.Float64Range(0.1, 1).Draw(t, "density")
		for i := range n {
			for j := range n {
				if rapid.Float64Range(0, 1).Draw(t, "p") > density {
					continue
				}
				b := rapid.Int64Range(1, 32<<20).Draw(t, "bytes")
				if j == hot {
					b *= 4
				}
				d.Bytes[i][j] = b
			}
		}
		if d.Total() == 0 {
			d.Bytes[0][n-1] = 1 << 20
		}
		alpha := rapid.SampledFrom([]float64{0, 10e-9, 1e-6, 10e-6, 1e-3}).Draw(t, "α_r")
		fabric := rapid.SampledFrom([]schedules.FabricKind{schedules.Benes, schedules.Crossbar}).Draw(t, "fabric")
		const bw = 100e9
		models := []emulator.ReconfigModel{emulator.ParallelReconfig(alpha), emulator.ControllerReconfig(alpha/4, alpha/2)}
		for _, name := range names {
			sch, _ := schedules.Lookup(name)
			s, err := sch.Schedule(context.Background(), d, schedules.Options{Bandwidth: bw, Reconfig: alpha, Fabric: fabric})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, rc := range models {
				res, _, err := emulator.Run(context.Background(), s, d, emulator.Config{Transfer: emulator.BandwidthModel(bw), Reconfig: rc})
				if err != nil {
					t.Fatalf("%s, %s: %v", name, rc.Name(), err)
				}
				lb := schedules.LowerBound(d, bw, rc.Nominal())
				if res.Completion < lb.Max()*(1-1e-9) {
					t.Fatalf("%s on %s, %s: completion %g s beats the lower bound %g s (%+v)",
						name, fabric, rc.Name(), res.Completion, lb.Max(), lb)
				}
			}
		}
	})
}

// TestLowerBoundTightOnAPermutation: a permutation needs one circuit per endpoint, and the best
// schedule starts each after one switch change: completion α_r + max bytes/b, which is the bound.
// Tetris reaches it on both fabrics, so the bound charges no reconfiguration too many.
func TestLowerBoundTightOnAPermutation(t *testing.T) {
	d := schedules.NewDemand(8)
	for i := range 8 {
		d.Bytes[i][(i+3)%8] = int64(1+i) << 20
	}
	const bw, alpha = 100e9, 10e-6
	for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
		sch, _ := schedules.Lookup("tetris")
		s, err := sch.Schedule(context.Background(), d, schedules.Options{Bandwidth: bw, Reconfig: alpha, Fabric: fabric})
		if err != nil {
			t.Fatal(err)
		}
		res, _, err := emulator.Run(context.Background(), s, d, emulator.Config{Transfer: emulator.BandwidthModel(bw), Reconfig: emulator.ParallelReconfig(alpha)})
		if err != nil {
			t.Fatal(err)
		}
		want := alpha + float64(8<<20)/bw
		if lb := res.Bounds.Max(); lb != want || res.Completion > want*(1+1e-12) {
			t.Errorf("%s: completion %g s, bound %g s, want both %g s", fabric, res.Completion, lb, want)
		}
	}
}
