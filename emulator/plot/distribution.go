package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

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
// lower bound: Tetris Figure 7(b).
func Distribution(w io.Writer, format, title, yLabel string, series []Series) error {
	return DistributionAround(w, format, title, yLabel, 1, series)
}

// DistributionAround is Distribution with the dashed rule at y = rule (0 for differences, e.g.
// live minus predicted start times).
func DistributionAround(w io.Writer, format, title, yLabel string, rule float64, series []Series) error {
	if len(series) == 0 {
		return fmt.Errorf("distribution %q: no series to draw", title)
	}
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 11
	p.Title.Padding = vg.Points(6)
	p.Y.Label.Text = yLabel
	names := make([]string, len(series))
	lo, hi := rule, rule
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
	// Half a slot of room either side, so the first and last boxes stay off the frame.
	p.X.Min, p.X.Max = -0.7, float64(len(series))-0.3
	p.Y.Label.TextStyle.Font.Size = 12
	p.X.Tick.Label.Font.Size = 11
	pad := 0.05 * (hi - lo)
	if pad == 0 {
		pad = 0.05
	}
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.Y.Tick.Marker = distinctTicks{}
	p.Add(&hRule{y: rule})
	width := max(vg.Length(160+70*len(series)), p.Title.TextStyle.Width(title)+40)
	return render(w, format, width, 300, p.Draw)
}

// distinctTicks are gonum's default ticks, relabelled with as many decimals as it takes for no
// two major ticks to read the same (over 1..1.16 the defaults print "1.1" twice).
type distinctTicks struct{}

func (distinctTicks) Ticks(lo, hi float64) []gplot.Tick {
	ts := gplot.DefaultTicks{}.Ticks(lo, hi)
	for digits := 0; digits <= 6; digits++ {
		seen := map[string]bool{}
		unique := true
		for _, t := range ts {
			if t.Label == "" {
				continue
			}
			l := strconv.FormatFloat(t.Value, 'f', digits, 64)
			unique = unique && !seen[l]
			seen[l] = true
		}
		if unique {
			if !labelsDuplicate(ts) {
				return ts // the defaults were fine: keep their formatting
			}
			for i := range ts {
				if ts[i].Label != "" {
					ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', digits, 64)
				}
			}
			return ts
		}
	}
	return ts
}

func labelsDuplicate(ts []gplot.Tick) bool {
	seen := map[string]bool{}
	for _, t := range ts {
		if t.Label == "" {
			continue
		}
		if seen[t.Label] {
			return true
		}
		seen[t.Label] = true
	}
	return false
}

// hRule is a dashed horizontal line across the data area.
type hRule struct{ y float64 }

func (h *hRule) Plot(c draw.Canvas, p *gplot.Plot) {
	_, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(0.75), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	c.StrokeLine2(sty, c.Min.X, trY(h.y), c.Max.X, trY(h.y))
}
