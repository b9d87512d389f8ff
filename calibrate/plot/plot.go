// Package plot draws a calibration for people to look at: transfer time against message size on
// log-log axes, per GPU pair the measured medians with their interquartile spread and the fitted
// line or pieces (like Tetris Figure 13), beside a src × dst heatmap of the pairs' bandwidth with
// its colour scale.
package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tetris-hil/tetris-hil/internal/pdffig"
	"github.com/tetris-hil/tetris-hil/internal/svgfig"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// Size of the figure: the fits on the left, the heatmap and its colour scale on the right.
const (
	width, height = 1100, 480
	fitsShare     = 0.56 // of the width
	barWidth      = 80
	pngDPI        = 96
)

// Draw renders c in format "svg", "png" or "pdf". The pairs drawn are those of the pattern the emulator
// uses (permutation where measured, else isolated).
func Draw(w io.Writer, format string, c *model.Calibration) (err error) {
	if format != "svg" && format != "png" && format != "pdf" {
		return fmt.Errorf("plot format %q is not \"svg\", \"png\" or \"pdf\"", format)
	}
	pairs := pairsToDraw(c)
	if len(pairs) == 0 {
		return errors.New("plot: the calibration has no pair with medians to draw")
	}
	// gonum's log axes panic on non-positive ranges; the data are checked, but a panic must not
	// cross this package's boundary all the same.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: %v", r)
		}
	}()
	fits, err := fitsPlot(c, pairs)
	if err != nil {
		return err
	}
	heat, bar := heatmap(c, pairs)
	paint := func(dc draw.Canvas) {
		split := dc.Min.X + vg.Length(fitsShare)*(dc.Max.X-dc.Min.X)
		fits.Draw(draw.Crop(dc, 0, split-dc.Max.X, 0, 0))
		heat.Draw(draw.Crop(dc, split-dc.Min.X, -barWidth, 0, 0))
		bar.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-barWidth, 0, 40, -40))
	}
	switch format {
	case "svg":
		// Fonts referenced with metric-compatible fallbacks, not embedded (svgfig).
		err = svgfig.Write(w, width, height, paint)
	case "pdf":
		err = pdffig.Write(w, width, height, paint)
	default:
		cv := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
		paint(draw.New(cv))
		_, err = vgimg.PngCanvas{Canvas: cv}.WriteTo(w)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", format, err)
	}
	return nil
}

func pairsToDraw(c *model.Calibration) []model.PairFit {
	pattern := model.Isolated
	if slices.Contains(c.Patterns(), model.Permutation) {
		pattern = model.Permutation
	}
	var out []model.PairFit
	for _, p := range c.Pairs {
		if p.PatternName() == pattern && len(p.Medians) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// colours for the pairs' series, cycled.
var colours = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255},
}

// linkClass is the pairs of one interconnect type (NVML's link name, e.g. "NV18" or "PHB").
type linkClass struct {
	name  string
	pairs []model.PairFit
}

// linkClasses groups pairs by the inventory's link name ("link unknown" where it has none), in
// order of first appearance.
func linkClasses(c *model.Calibration, pairs []model.PairFit) []linkClass {
	var out []linkClass
	at := map[string]int{}
	for _, p := range pairs {
		name := c.Inventory.Links[fmt.Sprintf("%d-%d", p.Src, p.Dst)]
		if name == "" {
			name = "link unknown"
		}
		i, ok := at[name]
		if !ok {
			i = len(out)
			at[name] = i
			out = append(out, linkClass{name: name})
		}
		out[i].pairs = append(out[i].pairs, p)
	}
	return out
}

// representative is the class's pair of median bandwidth: the one drawn with its points.
func (l linkClass) representative() model.PairFit {
	ps := slices.Clone(l.pairs)
	slices.SortStableFunc(ps, func(a, b model.PairFit) int { return cmpFloat(bw(a), bw(b)) })
	return ps[len(ps)/2]
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

// fitsPlot draws, per link class, its representative pair (medians, IQR bars, fit) and, behind
// it, the spread of the class: a band from the fastest to the slowest median of its pairs at
// each measured size. 56 overlaid curves of one class read as one; this says what they share
// and how far they differ.
func fitsPlot(c *model.Calibration, pairs []model.PairFit) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = fmt.Sprintf("Transfer time vs size, %d pairs (%s): per link class, a median pair and the spread", len(pairs), pairs[0].PatternName())
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.Text = "message size"
	p.Y.Label.Text = "time"
	p.X.Scale, p.Y.Scale = gplot.LogScale{}, gplot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = sizeTicks{}, timeTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = 10
	p.Legend.YOffs, p.Legend.XOffs = -vg.Points(6), vg.Points(6)
	for _, pf := range pairs {
		for _, m := range pf.Medians {
			if m.Bytes <= 0 || !(m.Seconds > 0) {
				return nil, fmt.Errorf("plot: pair %d→%d: median %d bytes in %g s cannot go on log axes", pf.Src, pf.Dst, m.Bytes, m.Seconds)
			}
		}
	}
	for i, lc := range linkClasses(c, pairs) {
		col := colours[i%len(colours)]
		if band := spread(lc.pairs); band != nil {
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, err
			}
			poly.Color = color.NRGBA{col.R, col.G, col.B, 70}
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		rep := lc.representative()
		pts := make(plotter.XYs, len(rep.Medians))
		errs := make(plotter.YErrors, len(rep.Medians))
		for j, m := range rep.Medians {
			pts[j] = plotter.XY{X: float64(m.Bytes), Y: m.Seconds}
			lo, hi := m.Seconds, m.Seconds
			if m.P25 > 0 && m.P75 >= m.P25 {
				lo, hi = m.P25, m.P75
			}
			errs[j].Low, errs[j].High = m.Seconds-lo, hi-m.Seconds
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Shape = col, vg.Points(2.2), draw.CircleGlyph{}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{pts, errs})
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Color, eb.CapWidth = col, vg.Points(2)
		line, err := plotter.NewLine(fitted(rep))
		if err != nil {
			return nil, err
		}
		line.LineStyle.Color, line.LineStyle.Width = col, vg.Points(1.2)
		p.Add(eb, sc, line)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, q := range lc.pairs {
			lo, hi = math.Min(lo, bw(q)), math.Max(hi, bw(q))
		}
		p.Legend.Add(fmt.Sprintf("%s, %d pairs: %d→%d %s", lc.name, len(lc.pairs), rep.Src, rep.Dst, describe(rep)), line, sc)
		if len(lc.pairs) > 1 {
			p.Legend.Add(fmt.Sprintf("   spread of the %d: %.0f–%.0f GB/s", len(lc.pairs), lo/1e9, hi/1e9), bandThumb{color.NRGBA{col.R, col.G, col.B, 90}})
		}
	}
	return p, nil
}

// spread is the polygon from the fastest to the slowest median of pairs at each size measured
// for every one of them (nil with one pair or fewer than two common sizes).
func spread(pairs []model.PairFit) plotter.XYs {
	if len(pairs) < 2 {
		return nil
	}
	lo, hi := map[int64]float64{}, map[int64]float64{}
	count := map[int64]int{}
	for _, p := range pairs {
		for _, m := range p.Medians {
			if count[m.Bytes] == 0 {
				lo[m.Bytes], hi[m.Bytes] = m.Seconds, m.Seconds
			}
			count[m.Bytes]++
			lo[m.Bytes], hi[m.Bytes] = math.Min(lo[m.Bytes], m.Seconds), math.Max(hi[m.Bytes], m.Seconds)
		}
	}
	var sizes []int64
	for b, n := range count {
		if n == len(pairs) {
			sizes = append(sizes, b)
		}
	}
	if len(sizes) < 2 {
		return nil
	}
	slices.Sort(sizes)
	out := make(plotter.XYs, 0, 2*len(sizes))
	for _, b := range sizes {
		out = append(out, plotter.XY{X: float64(b), Y: hi[b]})
	}
	for i := len(sizes) - 1; i >= 0; i-- {
		out = append(out, plotter.XY{X: float64(sizes[i]), Y: lo[sizes[i]]})
	}
	return out
}

// bandThumb is the legend swatch of a spread band.
type bandThumb struct{ c color.Color }

func (b bandThumb) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.c, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

func describe(p model.PairFit) string {
	s := fmt.Sprintf("α %.2f µs, %.0f GB/s", p.Alpha*1e6, bw(p)/1e9)
	if len(p.Pieces) > 1 {
		s += ", knee " + units.FormatBytes(p.Pieces[1].FromBytes)
	}
	return s
}

func bw(p model.PairFit) float64 {
	if p.Bandwidth > 0 {
		return p.Bandwidth
	}
	return 1 / p.Beta
}

// fitted samples the pair's fit (each size by its piece) densely over the measured range.
func fitted(p model.PairFit) plotter.XYs {
	lo, hi := float64(p.Medians[0].Bytes), float64(p.Medians[len(p.Medians)-1].Bytes)
	for _, m := range p.Medians {
		lo, hi = math.Min(lo, float64(m.Bytes)), math.Max(hi, float64(m.Bytes))
	}
	const n = 96
	out := make(plotter.XYs, 0, n+1)
	for k := 0; k <= n; k++ {
		x := lo * math.Pow(hi/lo, float64(k)/n)
		if y := p.Seconds(int64(math.Round(x))); y > 0 {
			out = append(out, plotter.XY{X: x, Y: y})
		}
	}
	return out
}

// sizeTicks marks powers of 16 bytes (4 KiB, 64 KiB, 1 MiB, ...) with their binary names.
type sizeTicks struct{}

func (sizeTicks) Ticks(min, max float64) []gplot.Tick {
	var ts []gplot.Tick
	for e := math.Floor(math.Log2(min)); e <= math.Ceil(math.Log2(max)); e++ {
		v := math.Exp2(e)
		if v < min/1.0001 || v > max*1.0001 {
			continue
		}
		label := ""
		if int(e)%4 == 0 {
			label = units.FormatBinary(int64(v))
		}
		ts = append(ts, gplot.Tick{Value: v, Label: label})
	}
	return ts
}

// timeTicks marks powers of ten seconds with readable units.
type timeTicks struct{}

func (timeTicks) Ticks(min, max float64) []gplot.Tick {
	var ts []gplot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		v := math.Pow(10, e)
		if v >= min/1.0001 && v <= max*1.0001 {
			ts = append(ts, gplot.Tick{Value: v, Label: units.FormatSeconds(v)})
		}
	}
	if len(ts) < 2 { // a narrow range: mark its ends
		ts = []gplot.Tick{{Value: min, Label: units.FormatSeconds(min)}, {Value: max, Label: units.FormatSeconds(max)}}
	}
	return ts
}

// heatmap is the src × dst bandwidth grid of pairs and its colour scale.
func heatmap(c *model.Calibration, pairs []model.PairFit) (*gplot.Plot, *gplot.Plot) {
	var gpus []int
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pairs {
		for _, g := range []int{p.Src, p.Dst} {
			if !slices.Contains(gpus, g) {
				gpus = append(gpus, g)
			}
		}
		lo, hi = math.Min(lo, bw(p)/1e9), math.Max(hi, bw(p)/1e9)
	}
	slices.Sort(gpus)
	if hi-lo < 1e-9*hi {
		lo, hi = lo*0.99, hi*1.01
	}
	cm := bandwidthScale(lo, hi)
	p := gplot.New()
	p.Title.Text = fmt.Sprintf("Bandwidth (GB/s), %s", pairs[0].PatternName())
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.Text, p.Y.Label.Text = "dst GPU", "src GPU"
	names := make([]string, len(gpus))
	rev := make([]string, len(gpus))
	for i, g := range gpus {
		names[i] = fmt.Sprint(g)
		rev[len(gpus)-1-i] = fmt.Sprint(g)
	}
	p.NominalX(names...)
	p.NominalY(rev...)
	n := float64(len(gpus))
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -0.5, n-0.5, -0.5, n-0.5
	p.Add(&cells{c: c, pattern: pairs[0].PatternName(), gpus: gpus, cm: cm})
	bar := gplot.New()
	bar.Title.Text = "GB/s"
	bar.Title.TextStyle.Font.Size = 9
	bar.HideX()
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	return p, bar
}

// bandwidthScale is the heatmap's colour scale over lo..hi GB/s: sequential, since bandwidth has
// no midpoint to diverge from (dark to light blue; lighter is faster).
func bandwidthScale(lo, hi float64) palette.ColorMap {
	// ColorBrewer's Blues ends; NewLuminance interpolates them at even steps of lightness.
	cm, err := moreland.NewLuminance([]color.Color{color.NRGBA{0x08, 0x30, 0x6b, 255}, color.NRGBA{0xde, 0xeb, 0xf7, 255}})
	if err != nil {
		panic(err) // two fixed controls of rising luminance: cannot fail
	}
	cm.SetMin(lo)
	cm.SetMax(hi)
	return cm
}

type cells struct {
	c       *model.Calibration
	pattern string
	gpus    []int
	cm      palette.ColorMap
}

func (h *cells) Plot(dc draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&dc)
	n := len(h.gpus)
	style := text.Style{Color: color.Black, Font: font.From(gplot.DefaultFont, vg.Points(max(6, 11-float64(n)/2))),
		XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: gplot.DefaultTextHandler}
	dark := text.Style(style)
	dark.Color = color.White
	idx := h.c.Index()
	for r, s := range h.gpus {
		y := float64(n - 1 - r)
		for col, d := range h.gpus {
			x := float64(col)
			fill := color.Color(color.RGBA{235, 235, 235, 255})
			label := "–"
			if pf, ok := idx.PairUnder(s, d, h.pattern); ok {
				v := bw(pf) / 1e9
				if cc, err := h.cm.At(v); err == nil {
					fill = cc
				}
				label = fmt.Sprintf("%.0f", v)
			}
			pts := []vg.Point{{X: trX(x - 0.5), Y: trY(y - 0.5)}, {X: trX(x + 0.5), Y: trY(y - 0.5)},
				{X: trX(x + 0.5), Y: trY(y + 0.5)}, {X: trX(x - 0.5), Y: trY(y + 0.5)}}
			dc.FillPolygon(fill, dc.ClipPolygonXY(pts))
			sty := style
			if r, g, b, _ := fill.RGBA(); 0.2126*float64(r)+0.7152*float64(g)+0.0722*float64(b) < 0.45*0xffff {
				sty = dark // white on the dark end of the scale
			}
			dc.FillText(sty, vg.Point{X: trX(x), Y: trY(y)}, label)
		}
	}
}
