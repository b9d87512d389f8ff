package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one named sample, e.g. one algorithm's completion/lower-bound ratios over all
// matrices of a trace.
type Series struct {
	Name   string
	Values []float64
}

// Distribution draws one box plot per series (median, quartiles, whiskers to the furthest points
// within 1.5 IQR, outliers as circles) in format "svg" or "png", with a dashed rule at y = 1, the
// lower bound: seed 000 Figure 7(b).
func Distribution(w io.Writer, format, title, yLabel string, series []Series) error {
	if len(series) == 0 {
		return fmt.Errorf("distribution %q: no series to draw", title)
	}
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 11
	p.Title.Padding = vg.Points(6)
	p.Y.Label.Text = yLabel
	names := make([]string, len(series))
	lo, hi := 1.0, 1.0
	for i, s := range series {
		names[i] = s.Name
		if len(s.Values) == 0 {
			return fmt.Errorf("distribution %q: series %q is empty", title, s.Name)
		}
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("distribution %q: series %q has value %g", title, s.Name, v)
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		b, err := plotter.NewBoxPlot(vg.Points(28), float64(i), plotter.Values(s.Values))
		if err != nil {
			return fmt.Errorf("distribution %q: series %q: %w", title, s.Name, err)
		}
		b.FillColor = receiverColours[i%len(receiverColours)]
		p.Add(b)
	}
	p.NominalX(names...)
	pad := 0.05 * (hi - lo)
	if pad == 0 {
		pad = 0.05
	}
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.Add(&hRule{y: 1})
	width := max(vg.Length(160+70*len(series)), p.Title.TextStyle.Width(title)+40)
	return render(w, format, width, 300, p.Draw)
}

// hRule is a dashed horizontal line across the data area.
type hRule struct{ y float64 }

func (h *hRule) Plot(c draw.Canvas, p *gplot.Plot) {
	_, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(0.75), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	c.StrokeLine2(sty, c.Min.X, trY(h.y), c.Max.X, trY(h.y))
}
