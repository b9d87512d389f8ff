package calibrate

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
)

// FitOptions are the fitting rules; the zero value means the defaults documented on each field.
type FitOptions struct {
	// OutlierMADs rejects a median whose relative residual lies more than this many robust
	// standard deviations (1.4826 × the median absolute deviation of the relative residuals)
	// from their median. Default 3.5.
	OutlierMADs float64
	// ResidualFloor is the smallest robust standard deviation the outlier rule assumes, so that
	// an almost perfect line does not reject points for sub-noise deviations. Default 0.002 (0.2 %).
	ResidualFloor float64
	// KneeF and KneeMinResidual: a two-piece fit replaces the line when the F statistic of the
	// improvement (two more parameters) reaches KneeF and the line misses some kept median by
	// more than KneeMinResidual. Defaults 20 (the best of all splits of a true line with noise
	// stays at a few) and 0.01.
	KneeF, KneeMinResidual float64
	// NoKnee fits one line whatever the residuals.
	NoKnee bool
}

func (o FitOptions) withDefaults() FitOptions {
	if o.OutlierMADs <= 0 {
		o.OutlierMADs = 3.5
	}
	if o.ResidualFloor <= 0 {
		o.ResidualFloor = 0.002
	}
	if o.KneeF <= 0 {
		o.KneeF = 20
	}
	if o.KneeMinResidual <= 0 {
		o.KneeMinResidual = 0.01
	}
	return o
}

// minPiece is the fewest medians a line is fitted to: two determine it, a third checks it.
const minPiece = 3

// ErrTooFewPoints is returned when fewer than three sizes were measured.
var ErrTooFewPoints = errors.New("fewer than 3 message sizes to fit")

// Fit fits T(m) = α + β·m to the medians of one pair, robustly:
//
//  1. weighted least squares (gonum stat.LinearRegression) with weights 1/T², i.e. least
//     squares of the relative error, which is what users compare: a 4 KiB copy off by 1 µs
//     matters as much as a 1 GiB copy off by 1 ms;
//  2. outliers rejected by the median-absolute-deviation rule of FitOptions.OutlierMADs on the
//     relative residuals, and the line refitted, until no more go (at least half the medians,
//     and three, are kept);
//  3. a knee: where one line misses by more than FitOptions.KneeMinResidual, every split into
//     two runs of consecutive sizes is fitted and the best replaces the line if an F test on
//     the (outlier-truncated) relative residuals says it is better beyond doubt
//     (FitOptions.KneeF); each piece is then fitted robustly as in 1–2, and the pieces meet at
//     the size where their lines cross;
//  4. Theil–Sen (the median of the pairwise slopes) as a cross-check of the line.
//
// The result has the fit fields of a model.PairFit set (Src, Dst and Pattern are left to the
// caller) and Medians set to ms sorted by size.
func Fit(ms []model.Median, opt FitOptions) (model.PairFit, error) {
	opt = opt.withDefaults()
	ms = slices.Clone(ms)
	slices.SortFunc(ms, func(a, b model.Median) int { return cmpInt64(a.Bytes, b.Bytes) })
	out := model.PairFit{Medians: ms}
	if len(ms) < minPiece {
		return out, fmt.Errorf("%w (have %d)", ErrTooFewPoints, len(ms))
	}
	x := make([]float64, len(ms))
	y := make([]float64, len(ms))
	for i, m := range ms {
		if !(m.Seconds > 0) || m.Bytes <= 0 {
			return out, fmt.Errorf("median %d: %d bytes in %g s: want positive sizes and times", i, m.Bytes, m.Seconds)
		}
		x[i], y[i] = float64(m.Bytes), m.Seconds
	}
	keep := make([]bool, len(ms))
	line := robustLine(x, y, keep, opt)
	if !(line.Beta > 0) {
		return out, fmt.Errorf("the time does not grow with the size (β = %g s/B over %s..%s): not an α-β transfer",
			line.Beta, fmtBytes(ms[0].Bytes), fmtBytes(ms[len(ms)-1].Bytes))
	}
	line.Alpha = max(line.Alpha, 0) // a tiny negative intercept is noise; α is a cost
	pieces := []model.Piece{{MinBytes: ms[0].Bytes, MaxBytes: ms[len(ms)-1].Bytes, Alpha: line.Alpha, Beta: line.Beta}}
	if !opt.NoKnee {
		if two, ok := knee(x, y, keep, line, opt); ok {
			pieces, out.Pieces = two, two
		}
	}
	var kx, ky []float64
	for i := range keep {
		if keep[i] {
			kx, ky = append(kx, x[i]), append(ky, y[i])
		} else {
			out.Outliers = append(out.Outliers, ms[i].Bytes)
		}
	}
	for i := range pieces {
		var px, py []float64
		for j := range kx {
			if kx[j] >= float64(pieces[i].MinBytes) && kx[j] <= float64(pieces[i].MaxBytes) {
				px, py = append(px, kx[j]), append(py, ky[j])
			}
		}
		pieces[i].R2 = r2(px, py, pieces[i:i+1])
	}
	ts := theilSen(kx, ky)
	out.TheilSen = &ts
	out.Alpha, out.Beta = pieces[0].Alpha, pieces[0].Beta
	out.Bandwidth = 1 / pieces[len(pieces)-1].Beta
	out.MStar = out.Alpha / out.Beta
	out.MaxRelResidual = maxRel(kx, ky, pieces)
	out.R2 = r2(kx, ky, pieces)
	return out, nil
}

// robustLine fits x, y by least squares of the relative error, rejecting outliers by the MAD rule
// and refitting until none goes; keep (len(x)) says on return which points were kept.
func robustLine(x, y []float64, keep []bool, opt FitOptions) model.Line {
	for i := range keep {
		keep[i] = true
	}
	w := make([]float64, len(x))
	var line model.Line
	for range len(x) {
		for i := range w {
			w[i] = 0
			if keep[i] {
				w[i] = 1 / (y[i] * y[i])
			}
		}
		line = wls(x, y, w)
		if !rejectOutliers(x, y, line, keep, opt) {
			break
		}
	}
	return line
}

// truncate bounds each point's squared relative residual in the knee search, so that an outlier
// weighs the same in the one-line and the two-piece cost instead of deciding between them.
const truncate = 0.03

// knee looks for the split of the sizes into two runs that one line fits worst and two fit best.
// It takes the two pieces (refitted robustly, keep updated) when they are better beyond doubt: an
// F test on the truncated costs (FitOptions.KneeF), and the one line missing a kept median by more
// than KneeMinResidual.
func knee(x, y []float64, keep []bool, line model.Line, opt FitOptions) ([]model.Piece, bool) {
	n := len(x)
	if n < 2*minPiece+2 {
		return nil, false
	}
	worst := 0.0
	for i := range x {
		if keep[i] {
			worst = max(worst, math.Abs(relResidual(x[i], y[i], line)))
		}
	}
	if worst <= opt.KneeMinResidual {
		return nil, false
	}
	one := tcost(x, y, func(float64) model.Line { return line })
	w := make([]float64, n)
	for i := range y {
		w[i] = 1 / (y[i] * y[i])
	}
	bestS, bestCost := -1, math.Inf(1)
	for s := minPiece; s <= n-minPiece; s++ {
		l1, l2 := wls(x[:s], y[:s], w[:s]), wls(x[s:], y[s:], w[s:])
		if !(l1.Beta > 0) || !(l2.Beta > 0) {
			continue
		}
		c := tcost(x[:s], y[:s], func(float64) model.Line { return l1 }) + tcost(x[s:], y[s:], func(float64) model.Line { return l2 })
		if c < bestCost {
			bestS, bestCost = s, c
		}
	}
	if bestS < 0 || bestCost <= 0 {
		return nil, false
	}
	if f := ((one - bestCost) / 2) / (bestCost / float64(n-4)); f < opt.KneeF {
		return nil, false
	}
	s := bestS
	l1 := robustLine(x[:s], y[:s], keep[:s], opt)
	l2 := robustLine(x[s:], y[s:], keep[s:], opt)
	if !(l1.Beta > 0) || !(l2.Beta > 0) {
		return nil, false
	}
	// Only the first piece's intercept is a cost paid at 0 bytes; a later piece's may be negative
	// (a steeper line that starts at the knee).
	l1.Alpha = max(l1.Alpha, 0)
	// The pieces meet where their lines cross, kept between the last size of the first piece and
	// the first of the second; lines that do not cross there meet halfway (geometrically).
	at := math.Sqrt(x[s-1] * x[s])
	if d := l1.Beta - l2.Beta; d != 0 {
		if k := (l2.Alpha - l1.Alpha) / d; k > x[s-1] && k < x[s] {
			at = k
		}
	}
	return []model.Piece{
		{FromBytes: 0, MinBytes: int64(x[0]), MaxBytes: int64(x[s-1]), Alpha: l1.Alpha, Beta: l1.Beta},
		{FromBytes: int64(math.Round(at)), MinBytes: int64(x[s]), MaxBytes: int64(x[n-1]), Alpha: l2.Alpha, Beta: l2.Beta},
	}, true
}

// tcost is the sum of the truncated squared relative residuals of the points under lineAt.
func tcost(x, y []float64, lineAt func(float64) model.Line) float64 {
	c := 0.0
	for i := range x {
		r := relResidual(x[i], y[i], lineAt(x[i]))
		c += min(r*r, truncate*truncate)
	}
	return c
}

// wls is the least-squares line with weights w (zero weight: the point is ignored).
func wls(x, y, w []float64) model.Line {
	a, b := stat.LinearRegression(x, y, w, false)
	return model.Line{Alpha: a, Beta: b}
}

// rejectOutliers marks as outliers the kept points whose relative residual is too far from the
// others'; it reports whether it marked any.
func rejectOutliers(x, y []float64, l model.Line, keep []bool, opt FitOptions) bool {
	var rel []float64
	for i := range x {
		if keep[i] {
			rel = append(rel, relResidual(x[i], y[i], l))
		}
	}
	if len(rel) <= minPiece {
		return false
	}
	med := median(rel)
	dev := make([]float64, len(rel))
	for i, r := range rel {
		dev[i] = math.Abs(r - med)
	}
	sigma := max(1.4826*median(dev), opt.ResidualFloor)
	limit := opt.OutlierMADs * sigma
	kept := len(rel)
	minKeep := max(minPiece, (len(x)+1)/2)
	// Worst first, so that the kept minimum keeps the best points.
	type cand struct {
		i   int
		dev float64
	}
	var cs []cand
	for i := range x {
		if keep[i] {
			if d := math.Abs(relResidual(x[i], y[i], l) - med); d > limit {
				cs = append(cs, cand{i, d})
			}
		}
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmpFloat(b.dev, a.dev) })
	changed := false
	for _, c := range cs {
		if kept <= minKeep {
			break
		}
		keep[c.i] = false
		kept--
		changed = true
	}
	return changed
}

func relResidual(x, y float64, l model.Line) float64 {
	f := l.Alpha + l.Beta*x
	return (y - f) / f
}

func predict(pieces []model.Piece, x float64) float64 {
	p := model.PairFit{Pieces: pieces}
	if len(pieces) == 1 {
		p = model.PairFit{Alpha: pieces[0].Alpha, Beta: pieces[0].Beta}
	}
	return p.Seconds(int64(x))
}

func maxRel(x, y []float64, pieces []model.Piece) float64 {
	m := 0.0
	for i := range x {
		f := predict(pieces, x[i])
		m = max(m, math.Abs((y[i]-f)/f))
	}
	return m
}

// r2 is the coefficient of determination with the fit's weights 1/T²: 1 − Σw(y−f)²/Σw(y−ȳ_w)².
func r2(x, y []float64, pieces []model.Piece) float64 {
	var sw, swy float64
	for i := range y {
		w := 1 / (y[i] * y[i])
		sw += w
		swy += w * y[i]
	}
	mean := swy / sw
	var res, tot float64
	for i := range y {
		w := 1 / (y[i] * y[i])
		f := predict(pieces, x[i])
		res += w * (y[i] - f) * (y[i] - f)
		tot += w * (y[i] - mean) * (y[i] - mean)
	}
	if tot == 0 {
		return 1
	}
	return 1 - res/tot
}

// theilSen is the Theil–Sen line: the median of the slopes between all pairs of points, and the
// median of y − β·x as the intercept.
func theilSen(x, y []float64) model.Line {
	slopes := make([]float64, 0, len(x)*(len(x)-1)/2)
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if x[j] != x[i] {
				slopes = append(slopes, (y[j]-y[i])/(x[j]-x[i]))
			}
		}
	}
	if len(slopes) == 0 {
		return model.Line{}
	}
	b := median(slopes)
	icpt := make([]float64, len(x))
	for i := range x {
		icpt[i] = y[i] - b*x[i]
	}
	return model.Line{Alpha: median(icpt), Beta: b}
}

// median of v (reordered in place), by selection: Theil–Sen takes the median of n(n−1)/2 slopes,
// which a sort would make the fit's most expensive step.
func median(v []float64) float64 {
	n := len(v)
	hi := nth(v, n/2)
	if n%2 == 1 {
		return hi
	}
	// After selection the lower half holds the n/2 smallest: the other middle value is their max.
	return (slices.Max(v[:n/2]) + hi) / 2
}

// nth reorders v so that v[k] is the value a sort would put there, with nothing larger before it
// and nothing smaller after it (Hoare's quickselect, middle pivot), and returns v[k].
func nth(v []float64, k int) float64 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		p := v[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for v[i] < p {
				i++
			}
			for v[j] > p {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
