package reproduce

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	calplot "github.com/tetris-hil/tetris-hil/calibrate/plot"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

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
func Fig13(s Setting, in Inputs, dir string) (*Figure, error) {
	c := in.Calibration
	var fits []model.PairFit
	n, idx := c.GPUs(), c.Index()
	for s := range n {
		for d := range n {
			if p, ok := idx.Pair(s, d); ok {
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
	files, err := s.writePlots(dir, "alpha-beta", func(w io.Writer, format string) error { return calplot.Draw(w, format, c) })
	if err != nil {
		return nil, err
	}
	f.Files = append(f.Files, files...)
	return f, nil
}
