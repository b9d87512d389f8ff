package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tetris-hil/tetris-hil/internal/pdffig"
	"github.com/tetris-hil/tetris-hil/internal/svgfig"

	gplot "gonum.org/v1/plot"
)

// Formats are the output formats every function of this package writes by default; "pdf" (for
// papers) is accepted too.
var Formats = []string{"svg", "png"}

// PDF is the paper format: vector, fonts embedded as subsets.
const PDF = "pdf"

// pngDPI fixes the raster resolution so PNG sizes do not depend on gonum's default.
const pngDPI = 96

// render creates a width×height canvas in format, lets paint fill it, and writes it to w.
func render(w io.Writer, format string, width, height vg.Length, paint func(draw.Canvas)) error {
	switch format {
	case "svg":
		// Fonts referenced with metric-compatible fallbacks, not embedded (svgfig): a figure of
		// a few kilobytes rather than half a megabyte, laid out the same in any viewer.
		return svgfig.Write(w, width, height, paint)
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI),
			vgimg.UseBackgroundColor(color.White))
		paint(draw.New(c))
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
			return fmt.Errorf("writing png: %w", err)
		}
	case "pdf":
		// For paper figures: fonts embedded as subsets, text kept as Unicode (pdffig).
		return pdffig.Write(w, width, height, paint)
	default:
		return fmt.Errorf("plot format %q is not \"svg\", \"png\" or \"pdf\"", format)
	}
	return nil
}

// textStyle is centred text of the default font at size pt.
func textStyle(size vg.Length, c color.Color) draw.TextStyle {
	return text.Style{
		Color:   c,
		Font:    font.From(gplot.DefaultFont, size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YCenter,
		Handler: gplot.DefaultTextHandler,
	}
}

// rect fills the data-space rectangle [x0, x1] × [y0, y1] of a plot's data canvas.
func rect(c draw.Canvas, trX, trY func(float64) vg.Length, x0, x1, y0, y1 float64, fill color.Color) {
	pts := []vg.Point{
		{X: trX(x0), Y: trY(y0)}, {X: trX(x1), Y: trY(y0)},
		{X: trX(x1), Y: trY(y1)}, {X: trX(x0), Y: trY(y1)},
	}
	c.FillPolygon(fill, c.ClipPolygonXY(pts))
}

// timeUnit picks the unit that makes span read as a number between 1 and 1000.
func timeUnit(span float64) (scale float64, name string) {
	switch {
	case span < 1e-6:
		return 1e9, "ns"
	case span < 1e-3:
		return 1e6, "µs"
	case span < 1:
		return 1e3, "ms"
	}
	return 1, "s"
}

// mix is the colour a fraction t ∈ [0, 1] of the way from a to b.
func mix(a, b color.RGBA, t float64) color.RGBA {
	t = math.Max(0, math.Min(1, t))
	f := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + t*(float64(y)-float64(x)))) }
	return color.RGBA{f(a.R, b.R), f(a.G, b.G), f(a.B, b.B), 255}
}

// luminance is the relative brightness of c in [0, 1], used to pick readable label colours.
func luminance(c color.RGBA) float64 {
	return (0.2126*float64(c.R) + 0.7152*float64(c.G) + 0.0722*float64(c.B)) / 255
}

// labelColour is black on light fills and white on dark ones.
func labelColour(fill color.RGBA) color.Color {
	if luminance(fill) < 0.5 {
		return color.White
	}
	return color.Black
}
