package tetris

import (
	"context"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
	"github.com/tetris-hil/tetris-hil/schedules/trace/synth"
)

// emulated schedules d with the scheduler f and returns its emulated completion under the
// bandwidth model with parallel reconfiguration, after checking the schedule with the verifier.
func emulated(t interface {
	Helper()
	Fatalf(string, ...any)
}, f schedules.SchedulerFunc, d *schedules.Demand, o schedules.Options) (float64, *schedules.Schedule) {
	t.Helper()
	s, err := f(context.Background(), d, o)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if vs := schedules.Verify(s, d); len(vs) > 0 {
		t.Fatalf("%s: %v", s.Algorithm, schedules.ViolationsError(vs))
	}
	res, _, err := emulator.Run(context.Background(), s, d, emulator.Config{
		Transfer: emulator.BandwidthModel(o.Bandwidth), Reconfig: emulator.ParallelReconfig(o.Reconfig)})
	if err != nil {
		t.Fatalf("%v", err)
	}
	return res.Completion, s
}

var plusAlphas = []float64{0, 10e-9, 1e-6, 10e-6, 100e-6, 1e-3, 10e-3}

// TestPlusNeverWorseProperty: on random skewed MoE-like matrices (any size to 24, any skew, up to
// 70% of the pairs missing), on both fabrics and at any α_r, tetris+ executes no later than
// tetris plus 0.5% (the claim of its doc; by construction it is never later at all).
func TestPlusNeverWorseProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		n := rapid.IntRange(2, 24).Draw(t, "n")
		skew := rapid.Float64Range(0, 2).Draw(t, "skew")
		sparse := rapid.Float64Range(0, 0.7).Draw(t, "sparse")
		d := moetest.Demand(seed, n, skew, sparse)
		if d.Total() == 0 {
			return
		}
		o := schedules.Options{Bandwidth: 100e9, Reconfig: rapid.SampledFrom(plusAlphas).Draw(t, "α_r"),
			Fabric: rapid.SampledFrom([]schedules.FabricKind{schedules.Benes, schedules.Crossbar}).Draw(t, "fabric")}
		base, _ := emulated(t, Schedule, d, o)
		plus, s := emulated(t, Plus, d, o)
		if plus > base*1.005 {
			t.Fatalf("tetris+ (%s) %g s, tetris %g s", s.Params.Options["plus_rule"], plus, base)
		}
	})
}

// TestPlusNeverWorseOnTracesAndPresets: the same on every matrix of the built-in trace and of
// the generator's presets (8 and 16 GPUs, with and without one expert per GPU), at every α_r of
// Tetris Figure 8.
func TestPlusNeverWorseOnTracesAndPresets(t *testing.T) {
	demands := map[string][]*schedules.Demand{}
	tr, err := trace.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range tr.Matrices {
		demands["built-in"] = append(demands["built-in"], m.Demand())
	}
	for _, p := range synth.PresetNames() {
		model, _ := synth.LookupModel(p)
		for _, n := range []int{8, 16} {
			for _, spread := range []bool{false, true} {
				g, err := synth.Generate(synth.Config{Model: model, GPUs: n, TokensPerGPU: 600, Layers: 2, Skew: 1, Seed: 11, ExpertPerGPU: spread})
				if err != nil {
					t.Fatal(err)
				}
				k := fmt.Sprintf("%s n=%d expert-per-GPU=%v", p, n, spread)
				for _, m := range g.Matrices {
					demands[k] = append(demands[k], m.Demand())
				}
			}
		}
	}
	for name, ds := range demands {
		for _, alpha := range plusAlphas[1:] {
			o := schedules.Options{Bandwidth: 100e9, Reconfig: alpha}
			for i, d := range ds {
				base, _ := emulated(t, Schedule, d, o)
				plus, s := emulated(t, Plus, d, o)
				if plus > base*1.005 {
					t.Fatalf("%s #%d at α_r=%g: tetris+ (%s) %g s, tetris %g s", name, i, alpha, s.Params.Options["plus_rule"], plus, base)
				}
			}
		}
	}
}

// TestPlusRegime: where the paper's rules leave a gap to the lower bound (sparse demands, half
// the pairs missing, on 16 GPUs at α_r = 10 µs and 100 µs, 800 Gbps), tetris+ is at least 3%
// faster over the matrices; the figures are logged (go test -v -run PlusRegime).
func TestPlusRegime(t *testing.T) {
	for _, alpha := range []float64{10e-6, 100e-6} {
		o := schedules.Options{Bandwidth: 100e9, Reconfig: alpha}
		var base, plus, lb float64
		for seed := range uint64(6) {
			d := moetest.Demand(seed, 16, 1.2, 0.5)
			b, _ := emulated(t, Schedule, d, o)
			p, _ := emulated(t, Plus, d, o)
			base += b
			plus += p
			lb += schedules.LowerBound(d, o.Bandwidth, o.Reconfig).Max()
		}
		t.Logf("α_r=%g: tetris %.4f, tetris+ %.4f of the lower bound; tetris+/tetris %.4f", alpha, base/lb, plus/lb, plus/base)
		if plus > 0.97*base {
			t.Errorf("α_r=%g: tetris+ %g s is not 3%% faster than tetris %g s", alpha, plus, base)
		}
	}
}

func TestPlusRecordsItsRule(t *testing.T) {
	d := moetest.Demand(2, 16, 1.2, 0.5)
	s, err := Plus(context.Background(), d, schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range plusFamily {
		found = found || s.Params.Options["plus_rule"] == m.name
	}
	if s.Algorithm != "tetris+" || !found {
		t.Errorf("algorithm %q, plus_rule %q", s.Algorithm, s.Params.Options["plus_rule"])
	}
	if _, err := Plus(context.Background(), d, schedules.Options{Bandwidth: 0}); err == nil {
		t.Error("zero bandwidth accepted")
	}
}
