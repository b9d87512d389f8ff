package holo

import (
	"fmt"
	"image/color"
	"io"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tetris-hil/tetris-hil/internal/svgfig"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// algorithmColours are fixed per algorithm so every plot reads the same.
var algorithmColours = map[string]color.RGBA{
	Naive:       {R: 0x6b, G: 0x6b, B: 0x6b, A: 0xff},
	Ring:        {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	Tree:        {R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	TreeRing:    {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	TreeRingAlt: {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

// Plot draws broadcast time against N, both axes logarithmic: per algorithm the simulated time
// (solid) and the paper's closed form (dashed; points where an approximation is not positive are
// left out). format is "svg" or "png"; the output depends only on the scan.
func (sc *Scan) Plot(w io.Writer, format string) error {
	p := gplot.New()
	p.Title.Text = fmt.Sprintf("Broadcast time vs N (Er-El and Feitelson §3): T_c = %s, T_b = %s/B, T_f = %s/B, S = %d B, H = %d B",
		units.FormatSeconds(sc.Params.TC()), units.FormatSeconds(sc.Params.TB), units.FormatSeconds(sc.Params.TF), sc.Params.Size, sc.Params.Header)
	p.Title.TextStyle.Font.Size = 10
	p.X.Label.Text = "nodes N          (solid: simulated; dashed: the paper's closed form)"
	p.Y.Label.Text = "broadcast time (s)"
	p.X.Scale, p.Y.Scale = gplot.LogScale{}, gplot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = gplot.LogTicks{Prec: -1}, gplot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	for _, a := range sc.Algorithms {
		col := algorithmColours[a]
		sim, cf := plotter.XYs{}, plotter.XYs{}
		for i, v := range sc.Simulated[a] {
			n := float64(sc.From + i)
			sim = append(sim, plotter.XY{X: n, Y: v})
			if c := sc.Closed[a][i]; c > 0 && !math.IsInf(c, 0) {
				cf = append(cf, plotter.XY{X: n, Y: c})
			}
		}
		l, err := plotter.NewLine(sim)
		if err != nil {
			return fmt.Errorf("plot %s: %w", a, err)
		}
		l.Color, l.Width = col, vg.Points(1.4)
		p.Add(l)
		p.Legend.Add(a, l)
		if len(cf) > 1 {
			d, err := plotter.NewLine(cf)
			if err != nil {
				return fmt.Errorf("plot %s closed form: %w", a, err)
			}
			d.Color, d.Width, d.Dashes = col, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(d)
		}
	}
	p.Add(plotter.NewGrid())
	width, height := 22*vg.Centimeter, 14*vg.Centimeter
	switch format {
	case "svg":
		// Fonts referenced with metric-compatible fallbacks, not embedded (svgfig).
		if err := svgfig.Write(w, width, height, p.Draw); err != nil {
			return err
		}
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))
		p.Draw(draw.New(c))
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
			return fmt.Errorf("writing png: %w", err)
		}
	default:
		return fmt.Errorf("plot format %q is not \"svg\" or \"png\"", format)
	}
	return nil
}
