package reproduce

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/emulator/plot"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/trace/synth"
)

// ScaleTrace is Figure 9's synthetic demand at n GPUs: the generator's one-expert-per-GPU mode
// (every GPU sends to every other), sc's model, tokens per GPU, layers and seed, skew 1 (the
// generator's default: a few hot receivers, as in real traces).
func ScaleTrace(sc Scale, n int) ([]experiment.Matrix, error) {
	m, err := synth.LookupModel(sc.Model)
	if err != nil {
		return nil, err
	}
	t, err := synth.Generate(synth.Config{Model: m, GPUs: n, TokensPerGPU: sc.TokensPerGPU, Layers: sc.Layers, Skew: 1,
		Seed: sc.Seed, ExpertPerGPU: true})
	if err != nil {
		return nil, fmt.Errorf("generating %d GPUs: %w", n, err)
	}
	return TraceMatrices(t, fmt.Sprintf("synthetic %s, %d GPUs", sc.Model, n)), nil
}

// Fig9 runs BvN and Tetris on ScaleTrace at every size of s.Scale.GPUs at the default
// configuration and plots the mean completion per matrix against the number of GPUs.
func Fig9(ctx context.Context, s Setting, dir string) (*Figure, error) {
	sc := s.Scale
	m, err := synth.LookupModel(sc.Model)
	if err != nil {
		return nil, err
	}
	f := &Figure{ID: "fig9", Title: "Tetris and BvN as the fabric grows (Tetris §4.2, Figure 9)",
		Setting: fmt.Sprintf("synthetic demand, one expert per GPU, %s (hidden %d), %d tokens per GPU, %d layers (dispatch and combine), seed %d; %s, α_r = %s",
			sc.Model, m.Hidden, sc.TokensPerGPU, sc.Layers, sc.Seed, bw(s.Bandwidth), dur(s.Reconfig))}
	paperRatio := map[int]string{8: "≈2", 16: "≈5", 32: "nearly 10"}
	paperTetris := map[int]string{8: "≈400 µs", 32: "1.1 ms"}
	tr := Table{Title: "Figure 9 (Tetris §4.2): BvN / Tetris completion, summed over the matrices of each size"}
	tt := Table{Title: "Figure 9 (Tetris §4.2): mean completion per matrix"}
	var xs, yT, yB []float64
	var csv bytes.Buffer
	fmt.Fprintln(&csv, "gpus,matrices,algorithm,completion_sum_seconds,lower_bound_sum_seconds,groups,state_changes")
	cfg := bandwidthConfig([]string{"bvn", "tetris"}, schedules.Options{Bandwidth: s.Bandwidth, Reconfig: s.Reconfig}, true)
	for _, n := range sc.GPUs {
		ms, err := ScaleTrace(sc, n)
		if err != nil {
			return nil, err
		}
		out, err := experiment.Run(ctx, ms, cfg, s.pool(fmt.Sprintf("fig9, %d GPUs", n)))
		if err != nil {
			return nil, err
		}
		bvn, tet := out.Totals[0], out.Totals[1]
		for _, t := range out.Totals {
			fmt.Fprintf(&csv, "%d,%d,%s,%g,%g,%d,%d\n", n, t.Matrices, t.Algorithm, t.CompletionSeconds, t.LowerBoundSeconds, t.Groups, t.StateChanges)
		}
		r := bvn.Speedup
		paper, ok := paperRatio[n]
		if !ok {
			paper = NotStated
		}
		tr.Rows = append(tr.Rows, Row{Key: fmt.Sprintf("ratio/%d", n), Quantity: fmt.Sprintf("BvN / Tetris, %d GPUs", n), Paper: paper,
			Ours: fmtRatio(r), Value: r})
		meanT := tet.CompletionSeconds / float64(tet.Matrices)
		meanB := bvn.CompletionSeconds / float64(bvn.Matrices)
		paper, ok = paperTetris[n]
		if !ok {
			paper = NotStated
		}
		tt.Rows = append(tt.Rows,
			Row{Key: fmt.Sprintf("tetris/%d", n), Quantity: fmt.Sprintf("Tetris, %d GPUs", n), Paper: paper, Ours: dur3(meanT), Value: meanT},
			Row{Key: fmt.Sprintf("bvn/%d", n), Quantity: fmt.Sprintf("BvN, %d GPUs", n), Paper: NotStated, Ours: dur3(meanB), Value: meanB},
			Row{Key: fmt.Sprintf("tetris-lb/%d", n), Quantity: fmt.Sprintf("Tetris / lower bound, %d GPUs", n), Paper: NotStated,
				Ours: fmtRatio3(emulator.BoundRatio(tet.CompletionSeconds, tet.LowerBoundSeconds)), Value: emulator.BoundRatio(tet.CompletionSeconds, tet.LowerBoundSeconds)})
		xs = append(xs, float64(n))
		yT, yB = append(yT, meanT*1e3), append(yB, meanB*1e3)
	}
	f.Tables = append(f.Tables, tr, tt)
	f.Notes = append(f.Notes, "the paper's generator keeps its traces' skew and layer-to-layer variation and the target model's hidden size; "+
		"ours is the project's generator with one expert per GPU")
	p := filepath.Join(dir, "scaling.csv")
	if err := safefile.WriteFile(p, csv.Bytes()); err != nil {
		return nil, err
	}
	f.Files = append(f.Files, p)
	l := plot.Lines{Title: fmt.Sprintf("mean completion per matrix, %s, α_r = %s (Figure 9)", bw(s.Bandwidth), dur(s.Reconfig)),
		XLabel: "GPUs", YLabel: "completion (ms)", LogX: true,
		Series: []plot.Line{{Name: "bvn", X: xs, Y: yB}, {Name: "tetris", X: xs, Y: yT}}}
	files, err := s.writePlots(dir, "scaling", func(w io.Writer, format string) error { return plot.LinePlot(w, format, l) })
	if err != nil {
		return nil, err
	}
	f.Files = append(f.Files, files...)
	return f, nil
}
