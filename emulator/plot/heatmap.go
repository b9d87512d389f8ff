package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"

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
}

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
	logMax := math.Log(minSaturation)
	for _, vs := range g.Values {
		for _, v := range vs {
			if !math.IsNaN(v) {
				logMax = math.Max(logMax, math.Abs(math.Log(v)))
			}
		}
	}
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
	height := vg.Length(90 + 30*len(g.Rows))
	return render(w, format, width, height, p.Draw)
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
