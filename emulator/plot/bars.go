package plot

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bars is a grouped bar chart: one group per label of Groups, one bar per series within each
// group, Values[s][g] the height of series s in group g (Tetris Figure 7(a): per workload, one
// bar per scheduler).
type Bars struct {
	Title  string
	YLabel string
	Groups []string
	Series []string
	Values [][]float64
}

// Check reports bars whose values do not match their labels or are not finite and ≥ 0.
func (b Bars) Check() error {
	if len(b.Groups) == 0 || len(b.Series) == 0 {
		return fmt.Errorf("bars %q have %d groups and %d series; both must be positive", b.Title, len(b.Groups), len(b.Series))
	}
	if len(b.Values) != len(b.Series) {
		return fmt.Errorf("bars %q have %d series of values for %d series names", b.Title, len(b.Values), len(b.Series))
	}
	for s, vs := range b.Values {
		if len(vs) != len(b.Groups) {
			return fmt.Errorf("bars %q series %q has %d values for %d groups", b.Title, b.Series[s], len(vs), len(b.Groups))
		}
		for g, v := range vs {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("bars %q series %q group %q: value %g is not finite and ≥ 0", b.Title, b.Series[s], b.Groups[g], v)
			}
		}
	}
	return nil
}

// BarChart draws b in format "svg" or "png".
func BarChart(w io.Writer, format string, b Bars) error {
	if err := b.Check(); err != nil {
		return err
	}
	p := gplot.New()
	p.Title.Text = b.Title
	p.Title.TextStyle.Font.Size = 11
	p.Title.Padding = vg.Points(6)
	p.Y.Label.Text = b.YLabel
	p.Y.Min = 0
	barWidth := vg.Points(10)
	ns := len(b.Series)
	for s, name := range b.Series {
		bc, err := plotter.NewBarChart(plotter.Values(b.Values[s]), barWidth)
		if err != nil {
			return fmt.Errorf("bars %q series %q: %w", b.Title, name, err)
		}
		bc.Color = receiverColours[s%len(receiverColours)]
		bc.LineStyle.Width = 0
		// Centre the group's bars on its tick.
		bc.Offset = barWidth * vg.Length(2*s-ns+1) / 2
		p.Add(bc)
		p.Legend.Add(name, bc)
	}
	p.Legend.Top = true
	p.Legend.Left = false
	p.NominalX(b.Groups...)
	// Leave room above the tallest bar for the legend.
	hi := 0.0
	for _, vs := range b.Values {
		for _, v := range vs {
			hi = math.Max(hi, v)
		}
	}
	if hi == 0 {
		hi = 1
	}
	p.Y.Max = hi * (1.15 + 0.06*float64(ns))
	width := max(vg.Length(120+len(b.Groups)*(ns*10+24)), p.Title.TextStyle.Width(b.Title)+40)
	return render(w, format, width, 320, p.Draw)
}

// Line is one series of a line plot: Y[i] at X[i].
type Line struct {
	Name string
	X, Y []float64
}

// Lines is a line plot with markers, e.g. completion time against fabric size (Tetris Figure 9).
// With LogX the x axis is logarithmic in base 2 (fabric sizes 8, 16, 32), ticks at the data.
type Lines struct {
	Title          string
	XLabel, YLabel string
	LogX           bool
	Series         []Line
}

// Check reports series of unequal lengths or values that are not finite (or not positive on a
// logarithmic x axis).
func (l Lines) Check() error {
	if len(l.Series) == 0 {
		return fmt.Errorf("lines %q: no series to draw", l.Title)
	}
	for _, s := range l.Series {
		if len(s.X) == 0 || len(s.X) != len(s.Y) {
			return fmt.Errorf("lines %q series %q has %d x and %d y values; want equal and positive", l.Title, s.Name, len(s.X), len(s.Y))
		}
		for i := range s.X {
			if !finite(s.X[i]) || !finite(s.Y[i]) || (l.LogX && !(s.X[i] > 0)) {
				return fmt.Errorf("lines %q series %q point %d (%g, %g) is not drawable", l.Title, s.Name, i, s.X[i], s.Y[i])
			}
		}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// LinePlot draws l in format "svg" or "png".
func LinePlot(w io.Writer, format string, l Lines) error {
	if err := l.Check(); err != nil {
		return err
	}
	p := gplot.New()
	p.Title.Text = l.Title
	p.Title.TextStyle.Font.Size = 11
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = l.XLabel
	p.Y.Label.Text = l.YLabel
	p.Y.Min = 0
	xs := map[float64]bool{}
	for i, s := range l.Series {
		pts := make(plotter.XYs, len(s.X))
		for k := range s.X {
			x := s.X[k]
			if l.LogX {
				x = math.Log2(x)
			}
			pts[k] = plotter.XY{X: x, Y: s.Y[k]}
			xs[s.X[k]] = true
		}
		ln, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("lines %q series %q: %w", l.Title, s.Name, err)
		}
		c := receiverColours[i%len(receiverColours)]
		ln.Color, sc.Color = c, c
		ln.Width = vg.Points(1.5)
		sc.Shape = draw.CircleGlyph{}
		sc.Radius = vg.Points(3)
		p.Add(ln, sc)
		p.Legend.Add(s.Name, ln, sc)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	if l.LogX {
		// Ticks in order, so that the output does not depend on map iteration.
		at := slices.Sorted(maps.Keys(xs))
		var ticks []gplot.Tick
		for _, x := range at {
			ticks = append(ticks, gplot.Tick{Value: math.Log2(x), Label: fmt.Sprintf("%g", x)})
		}
		p.X.Tick.Marker = gplot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = math.Log2(at[0])-0.25, math.Log2(at[len(at)-1])+0.25
	}
	return render(w, format, 420, 320, p.Draw)
}
