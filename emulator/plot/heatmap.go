package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Grid is a table of ratios to draw as a heatmap: Values[r][c] belongs to row label Rows[r] and
// column label Cols[c]. A NaN value is a cell with no result.
type Grid struct {
	Title    string
	RowTitle string // e.g. "bandwidth"
	ColTitle string // e.g. "reconfiguration delay α_r"
	Rows     []string
	Cols     []string
	Values   [][]float64
	// Scale is the colour scale; its zero value is the grid's own (SharedScale of its values).
	// Grids drawn side by side (one per baseline) share one, so that equal colours mean equal
	// ratios across them.
	Scale Scale
}

// Scale is a diverging colour scale of ratios around 1, labelled by a colour bar: white at 1,
// red above, blue below, saturating at exp(±LogMax), the bar spanning Lo..Hi.
type Scale struct {
	// Lo and Hi are the smallest and largest ratios drawn (the bar always includes 1).
	Lo, Hi float64
	// Label titles the colour bar, e.g. "bvn / tetris completion (×)"; empty: "ratio".
	Label string
}

// SharedScale is the scale covering every (non-NaN) value of every grid, at least
// 1/minSaturation..minSaturation so that ratios within a few per cent of 1 stay pale.
func SharedScale(label string, grids ...[][]float64) Scale {
	sc := Scale{Lo: 1 / minSaturation, Hi: minSaturation, Label: label}
	for _, g := range grids {
		for _, vs := range g {
			for _, v := range vs {
				if v > 0 && !math.IsInf(v, 0) {
					sc.Lo, sc.Hi = min(sc.Lo, v), max(sc.Hi, v)
				}
			}
		}
	}
	return sc
}

// logMax is the scale's largest |log ratio|: where its colours saturate.
func (s Scale) logMax() float64 { return max(math.Abs(math.Log(s.Lo)), math.Abs(math.Log(s.Hi))) }

// Check reports a grid whose values do not match its labels.
func (g Grid) Check() error {
	if len(g.Rows) == 0 || len(g.Cols) == 0 {
		return fmt.Errorf("grid %q has %d rows and %d columns; both must be positive", g.Title, len(g.Rows), len(g.Cols))
	}
	if len(g.Values) != len(g.Rows) {
		return fmt.Errorf("grid %q has %d rows of values for %d row labels", g.Title, len(g.Values), len(g.Rows))
	}
	for r, vs := range g.Values {
		if len(vs) != len(g.Cols) {
			return fmt.Errorf("grid %q row %d (%s) has %d values for %d columns", g.Title, r, g.Rows[r], len(vs), len(g.Cols))
		}
		for c, v := range vs {
			if v <= 0 || math.IsInf(v, 0) {
				return fmt.Errorf("grid %q cell (%s, %s) = %g is not a positive ratio", g.Title, g.Rows[r], g.Cols[c], v)
			}
		}
	}
	return nil
}

// Heatmap colours, a diverging scale around 1 (ColorBrewer RdBu ends).
var (
	slowerColour = color.RGBA{0xb2, 0x18, 0x2b, 255} // ratio > 1: the reference is faster
	fasterColour = color.RGBA{0x21, 0x66, 0xac, 255} // ratio < 1: the baseline is faster
	evenColour   = color.RGBA{0xf7, 0xf7, 0xf7, 255}
	missingColor = color.RGBA{0xdd, 0xdd, 0xdd, 255}
)

// minSaturation keeps a grid of near-1 ratios from painting ±1% as fully saturated colour.
const minSaturation = 1.25

// RatioColour is the cell colour of ratio v when the grid's largest |log ratio| is logMax: white at
// 1, towards red above 1 and towards blue below, saturating at exp(±logMax).
func RatioColour(v, logMax float64) color.RGBA {
	if math.IsNaN(v) {
		return missingColor
	}
	t := math.Log(v) / logMax
	if t >= 0 {
		return mix(evenColour, slowerColour, t)
	}
	return mix(evenColour, fasterColour, -t)
}

// Heatmap draws g in format "svg" or "png" with the first row at the top and the first column at
// the left, every cell annotated with its value to two decimals (Tetris Figure 8's layout: rows
// bandwidth, columns α_r, one grid per baseline).
func Heatmap(w io.Writer, format string, g Grid) error {
	if err := g.Check(); err != nil {
		return fmt.Errorf("heatmap: %w", err)
	}
	sc := g.Scale
	if !(sc.Lo > 0 && sc.Hi >= sc.Lo) || math.IsInf(sc.Hi, 0) {
		sc = SharedScale(sc.Label, g.Values)
	}
	if sc.Label == "" {
		sc.Label = "ratio"
	}
	logMax := sc.logMax()
	p := gplot.New()
	p.Title.Text = g.Title
	p.Title.TextStyle.Font.Size = 11
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = g.ColTitle
	p.Y.Label.Text = g.RowTitle
	p.NominalX(g.Cols...)
	rev := make([]string, len(g.Rows))
	for i, r := range g.Rows {
		rev[len(g.Rows)-1-i] = r
	}
	p.NominalY(rev...)
	p.X.Min, p.X.Max = -0.5, float64(len(g.Cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.Rows))-0.5
	p.Add(&cells{g: g, logMax: logMax})
	width := max(vg.Length(110+62*len(g.Cols)), p.Title.TextStyle.Width(g.Title)+40)
	height := vg.Length(120 + 30*len(g.Rows))
	return render(w, format, width+colourBarWidth, height, func(c draw.Canvas) {
		p.Draw(draw.Crop(c, 0, -colourBarWidth, 0, 0))
		colourBar(draw.Crop(c, width, 0, 0, 0), sc, logMax)
	})
}

// colourBarWidth is the strip right of a heatmap that holds its colour bar.
const colourBarWidth = 78

// colourBar draws sc's bar in c: a vertical gradient from min(Lo, 1) at the bottom to max(Hi, 1)
// at the top on a logarithmic axis, ticks at 1 and at round ratios, and the label along it.
func colourBar(c draw.Canvas, sc Scale, logMax float64) {
	lo, hi := math.Log(min(sc.Lo, 1)), math.Log(max(sc.Hi, 1))
	if hi-lo < 1e-9 {
		hi = lo + 1e-9
	}
	x0, x1 := c.Min.X+6, c.Min.X+20
	y0, y1 := c.Min.Y+40, c.Max.Y-30
	y := func(v float64) vg.Length { return y0 + (y1-y0)*vg.Length((v-lo)/(hi-lo)) }
	const steps = 64
	for i := range steps {
		a, b := lo+(hi-lo)*float64(i)/steps, lo+(hi-lo)*float64(i+1)/steps
		fill := RatioColour(math.Exp((a+b)/2), logMax)
		c.FillPolygon(fill, []vg.Point{{X: x0, Y: y(a)}, {X: x1, Y: y(a)}, {X: x1, Y: y(b) + 0.3}, {X: x0, Y: y(b) + 0.3}})
	}
	frame := draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(0.5)}
	c.StrokeLines(frame, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
	ts := textStyle(9, color.Black)
	ts.XAlign = draw.XLeft
	for _, v := range barTicks(math.Exp(lo), math.Exp(hi)) {
		ty := y(math.Log(v))
		c.StrokeLine2(frame, x1, ty, x1+3, ty)
		c.FillText(ts, vg.Point{X: x1 + 5, Y: ty}, strconv.FormatFloat(v, 'g', 3, 64))
	}
	lab := textStyle(10, color.Black)
	lab.Rotation = math.Pi / 2
	c.FillText(lab, vg.Point{X: c.Max.X - 8, Y: (y0 + y1) / 2}, sc.Label)
}

// barTicks are the round ratios 1, 1.25, 1.5, 2, 3, 5, 10, … (and their inverses) within lo..hi,
// thinned to at most 7, always with lo, hi and 1 when they are far enough apart.
func barTicks(lo, hi float64) []float64 {
	var cand []float64
	for _, d := range []float64{1, 10, 100, 1000} {
		for _, m := range []float64{1, 1.25, 1.5, 2, 3, 5} {
			if v := m * d; v > 1 || d == 1 && m == 1 {
				cand = append(cand, v, 1/v)
			}
		}
	}
	var in []float64
	for _, v := range cand {
		if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) && !slices.Contains(in, v) {
			in = append(in, v)
		}
	}
	slices.Sort(in)
	// Keep ticks at least a twelfth of the bar apart, preferring 1 and the ends.
	gap := (math.Log(hi) - math.Log(lo)) / 12
	keep := []float64{1}
	for _, v := range append([]float64{lo, hi}, in...) {
		ok := true
		for _, k := range keep {
			if math.Abs(math.Log(v)-math.Log(k)) < gap {
				ok = false
			}
		}
		if ok {
			keep = append(keep, v)
		}
	}
	slices.Sort(keep)
	return keep
}

// cells is the gonum plotter that paints and annotates the grid.
type cells struct {
	g      Grid
	logMax float64
}

func (h *cells) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	rows := len(h.g.Rows)
	for r, vs := range h.g.Values {
		y := float64(rows - 1 - r)
		for col, v := range vs {
			fill := RatioColour(v, h.logMax)
			x := float64(col)
			rect(c, trX, trY, x-0.5, x+0.5, y-0.5, y+0.5, fill)
			label := "–"
			if !math.IsNaN(v) {
				label = fmt.Sprintf("%.2f", v)
			}
			c.FillText(textStyle(10, labelColour(fill)), vg.Point{X: trX(x), Y: trY(y)}, label)
		}
	}
	// White rules between cells keep neighbouring equal colours apart.
	rule := draw.LineStyle{Color: color.White, Width: vg.Points(1)}
	for col := 1; col < len(h.g.Cols); col++ {
		x := trX(float64(col) - 0.5)
		c.StrokeLine2(rule, x, trY(-0.5), x, trY(float64(rows)-0.5))
	}
	for r := 1; r < rows; r++ {
		y := trY(float64(r) - 0.5)
		c.StrokeLine2(rule, trX(-0.5), y, trX(float64(len(h.g.Cols))-0.5), y)
	}
}
