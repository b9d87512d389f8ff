package reproduce

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	calplot "github.com/tetris-hil/tetris-hil/calibrate/plot"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/emulator/plot"
	"github.com/tetris-hil/tetris-hil/internal/safefile"
	"github.com/tetris-hil/tetris-hil/internal/units"
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
				Ours: fmtRatio3(tet.CompletionSeconds / tet.LowerBoundSeconds), Value: tet.CompletionSeconds / tet.LowerBoundSeconds})
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
	files, err := writePlots(dir, "scaling", func(w io.Writer, format string) error { return plot.LinePlot(w, format, l) })
	if err != nil {
		return nil, err
	}
	f.Files = append(f.Files, files...)
	return f, nil
}

// dur3 is a duration with three significant digits: "0.383ms" reads better as "383µs".
func dur3(s float64) string {
	switch {
	case s >= 1e-3:
		return fmt.Sprintf("%.3g ms", s*1e3)
	case s >= 1e-6:
		return fmt.Sprintf("%.3g µs", s*1e6)
	}
	return fmt.Sprintf("%.3g ns", s*1e9)
}

// Fig13 draws the calibration's α-β fits (calibrate/plot: per pair the medians with their
// spread and the fitted line, beside a bandwidth heatmap) and tabulates the fits.
func Fig13(in Inputs, dir string) (*Figure, error) {
	c := in.Calibration
	var fits []model.PairFit
	n := c.GPUs()
	for s := range n {
		for d := range n {
			if p, ok := c.Pair(s, d); ok {
				fits = append(fits, p)
			}
		}
	}
	if len(fits) == 0 {
		return nil, fmt.Errorf("calibration %s has no pair", in.CalibrationName)
	}
	f := &Figure{ID: "fig13", Title: "GPU-to-GPU transfer time against message size, α-β fit (Tetris §4.2, Figure 13)",
		Setting: fmt.Sprintf("%s: %d pairs, %s", in.CalibrationName, len(fits), c.Inventory.Host)}
	if c.Inventory.Host == "" {
		f.Setting = fmt.Sprintf("%s: %d pairs", in.CalibrationName, len(fits))
	}
	var alphas, bws, r2s, resid, mstars []float64
	var lo, hi int64 = math.MaxInt64, 0
	pieces := 0
	for _, p := range fits {
		alphas = append(alphas, p.Alpha)
		bws = append(bws, pairBandwidth(p))
		r2s = append(r2s, p.R2)
		resid = append(resid, p.MaxRelResidual)
		if p.Alpha > 0 {
			mstars = append(mstars, p.Alpha/p.Beta)
		}
		if len(p.Pieces) > 1 {
			pieces++
		}
		for _, m := range p.Medians {
			lo, hi = min(lo, m.Bytes), max(hi, m.Bytes)
		}
	}
	spread := func(vs []float64, f func(float64) string) (string, float64) {
		s := slices.Sorted(slices.Values(vs))
		med := median(s)
		return fmt.Sprintf("%s (%s–%s)", f(med), f(s[0]), f(s[len(s)-1])), med
	}
	t := Table{Title: "Figure 13 (Tetris §4.2): α-β fit per GPU pair (median, range over pairs)"}
	a, av := spread(alphas, func(x float64) string { return fmt.Sprintf("%.2f µs", x*1e6) })
	b, bv := spread(bws, func(x float64) string { return fmt.Sprintf("%.1f GB/s", x/1e9) })
	t.Rows = append(t.Rows,
		Row{Key: "alpha", Quantity: "α (fixed cost per transfer)", Paper: "not stated (\"an initial overhead for small messages\")", Ours: a, Value: av},
		Row{Key: "bandwidth", Quantity: "1/β (large-message bandwidth)", Paper: NotStated, Ours: b, Value: bv})
	if len(mstars) > 0 {
		m, mv := spread(mstars, func(x float64) string { return units.FormatBytes(int64(math.Round(x))) })
		t.Rows = append(t.Rows, Row{Key: "m-star", Quantity: "α/β (size below which α dominates)", Paper: NotStated, Ours: m, Value: mv})
	}
	minR2 := slices.Min(r2s)
	maxRes := slices.Max(resid)
	t.Rows = append(t.Rows,
		Row{Key: "r2-min", Quantity: "R² of the fit, worst pair", Paper: "not stated (\"closely follow\")", Ours: fmt.Sprintf("%.5f", minR2), Value: minR2},
		Row{Key: "resid-max", Quantity: "largest relative residual", Paper: NotStated, Ours: fmt.Sprintf("%.2f%%", 100*maxRes), Value: maxRes},
		Row{Key: "knees", Quantity: "pairs needing a piecewise fit", Paper: NotStated, Ours: fmt.Sprintf("%d of %d", pieces, len(fits)), Value: float64(pieces)})
	if hi > 0 {
		t.Rows = append(t.Rows, Row{Key: "sizes", Quantity: "message sizes measured", Paper: NotStated,
			Ours: units.FormatBinary(lo) + " – " + units.FormatBinary(hi), Value: float64(hi)})
	}
	f.Tables = append(f.Tables, t)
	f.Notes = append(f.Notes, "the paper: transfer times \"closely follow the classic α-β cost model\" (Hockney), "+
		"\"with an initial overhead for small messages, and linearly scaling as the message size grows\"")
	files, err := writePlots(dir, "alpha-beta", func(w io.Writer, format string) error { return calplot.Draw(w, format, c) })
	if err != nil {
		return nil, err
	}
	f.Files = append(f.Files, files...)
	return f, nil
}
