package sweep

import (
	"context"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/trace/synth"
)

// realAlgorithms is every registered scheduler except this package's test-only ones, tetris first.
func realAlgorithms() []string {
	var names []string
	for _, n := range schedules.Names() {
		if !strings.HasPrefix(n, "sweeptest-") {
			names = append(names, n)
		}
	}
	return names
}

// passTrace is one inference pass of Mixtral-8x22B on 8 GPUs from the seeded skewed generator:
// 56 MoE layers × (dispatch, combine) = 112 matrices.
func passTrace(b *testing.B) []*schedules.Demand {
	b.Helper()
	tr, err := synth.Generate(synth.Config{Model: synth.Presets["mixtral-8x22b"], GPUs: 8, TokensPerGPU: 2048, Skew: 1, Seed: 5})
	if err != nil {
		b.Fatal(err)
	}
	ds := make([]*schedules.Demand, len(tr.Matrices))
	for i := range tr.Matrices {
		ds[i] = tr.Matrices[i].Demand()
	}
	if len(ds) != 112 {
		b.Fatalf("trace has %d matrices, want 112", len(ds))
	}
	return ds
}

// BenchmarkSweep is the target: Tetris Figure 8's 4×7 grid (100–800 Gbps, 10 ns–10 ms)
// × every registered algorithm × 112 matrices, on every core. One iteration is the whole sweep;
// runs/s counts (cell, matrix, algorithm) schedule-and-emulate runs.
func BenchmarkSweep(b *testing.B) {
	ds := passTrace(b)
	algos := realAlgorithms()
	if len(algos) == 0 || algos[0] != DefaultReference {
		b.Skipf("tetris is not registered (have %v)", algos)
	}
	cfg := Config{
		Algorithms: algos,
		Bandwidths: []float64{12.5e9, 25e9, 50e9, 100e9},
		Reconfigs:  []float64{10e-9, 100e-9, 1e-6, 10e-6, 100e-6, 1e-3, 10e-3},
	}
	b.Logf("%d matrices × %d cells × %d algorithms %v", len(ds), 28, len(algos), algos)
	runs := 0
	for b.Loop() {
		if _, err := Run(context.Background(), ds, cfg); err != nil {
			b.Fatal(err)
		}
		runs += len(ds) * 28 * len(algos)
	}
	b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
}
