package experiment

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// TestParetoMatchesRuns: every point is the pass as Run gives it at the same α_r and weight:
// completion, lower bound and state changes summed over the matrices, and the most-changed
// switch of the per-switch counts summed over the pass.
func TestParetoMatchesRuns(t *testing.T) {
	ctx := context.Background()
	var ms []Matrix
	for i := range 3 {
		ms = append(ms, Matrix{Ref: emulator.MatrixRef{Index: i}, Demand: skewed(8, uint64(i)+1)})
	}
	base := Config{Algorithms: []string{"tetris", "bvn"},
		Options: schedules.Options{Bandwidth: 1e11},
		Exec:    emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ParallelReconfig(0)}}
	spec := ParetoSpec{Matrices: ms, Base: base, Reconfig: []float64{1e-8, 1e-5}, Weights: []float64{0, 4}}
	pts, err := Pareto(ctx, spec, Pool{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2*3 {
		t.Fatalf("%d points, want 6 (two weights and bvn at two α_r)", len(pts))
	}
	for _, p := range pts {
		cfg := base
		cfg.Algorithms = []string{p.Algorithm}
		cfg.Options.Reconfig = p.Reconfig
		cfg.Options.WearWeight = max(p.Weight, 0)
		cfg.Exec.Reconfig = emulator.ParallelReconfig(p.Reconfig)
		out, err := Run(ctx, ms, cfg, Pool{})
		if err != nil {
			t.Fatal(err)
		}
		tot := out.Totals[0]
		w := out.Wear()[0]
		if p.Completion != tot.CompletionSeconds || p.LowerBound != tot.LowerBoundSeconds || p.Changes != tot.StateChanges ||
			p.Changes != w.Total || p.MaxChanges != w.Most.Count || p.Ratio != tot.CompletionSeconds/tot.LowerBoundSeconds {
			t.Errorf("point %+v; the run gives %+v, wear %+v", p, tot, w)
		}
	}
	var buf bytes.Buffer
	if err := WriteParetoTable(&buf, pts); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(buf.String(), "\n"); got != 7 {
		t.Errorf("table has %d lines, want a heading and 6 points:\n%s", got, buf.String())
	}
	buf.Reset()
	if err := ParetoPlot(&buf, "svg", pts, 1e-5, true); err != nil || !bytes.Contains(buf.Bytes(), []byte("<svg")) {
		t.Errorf("plot: %v", err)
	}
}
