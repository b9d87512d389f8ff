// Package heatmap draws a demand matrix as a PNG heatmap in the style of Tetris Figure 3: one
// cell per (transmitter, receiver) pair shaded by bytes, row and column loads beside the grid,
// the bottleneck endpoints (those whose load sets the bandwidth lower bound) outlined in red, and
// a colour scale from 0 to the largest cell. Past 16 ports the port labels and loads are thinned
// to every 2nd, 4th, ... port so that they stay legible; each receiver's load is written
// vertically under its own column. Text is set in Liberation Sans, an outline font rendered
// anti-aliased at the figure's size (the figure's axes read at 64 ports as at 8).
package heatmap

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font/liberation"

	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// Colours of the figure, exported so that tests and callers can find the marks.
var (
	Background = color.RGBA{255, 255, 255, 255}
	Local      = color.RGBA{220, 220, 220, 255} // the diagonal: GPU-local traffic, not on the fabric
	Bottleneck = color.RGBA{220, 30, 30, 255}
	Ink        = color.RGBA{20, 20, 20, 255}
)

// Layout of a figure, in pixels.
type Layout struct {
	Cell, Left, Top, Right, Bottom int
}

// LayoutFor sizes the figure for n ports: cells shrink from 48 px (n ≤ 16) so that the grid stays
// under about 800 px, and never below 1 px.
func LayoutFor(n int) Layout {
	cell := max(1, min(48, 768/max(n, 1)))
	return Layout{Cell: cell, Left: 56, Top: 48, Right: 170, Bottom: 84}
}

// LabelEvery is the stride of the port labels: 1 while a cell fits a label (14 px), else the
// smallest power of two whose span does.
func (l Layout) LabelEvery() int {
	k := 1
	for k*l.Cell < 14 {
		k *= 2
	}
	return k
}

// ScaleBar is the colour scale's rectangle, right of the Tx loads, as tall as the grid.
func (l Layout) ScaleBar(n int) image.Rectangle {
	x := l.Left + n*l.Cell + 74
	return image.Rect(x, l.Top, x+12, l.Top+n*l.Cell)
}

// CellOrigin is the top-left pixel of cell (i, j).
func (l Layout) CellOrigin(i, j int) image.Point {
	return image.Pt(l.Left+j*l.Cell, l.Top+i*l.Cell)
}

// Shade is the colour of a cell holding v bytes when the largest off-diagonal cell holds peak:
// white for 0 to dark blue for peak, so darker is more.
func Shade(v, peak int64) color.RGBA {
	if peak <= 0 || v <= 0 {
		return Background
	}
	f := float64(v) / float64(peak)
	return color.RGBA{uint8(255 - 225*f), uint8(255 - 185*f), uint8(255 - 95*f), 255}
}

// Draw renders d (diagonal shown grey, as local traffic) and writes it as a PNG.
func Draw(w io.Writer, d *schedules.Demand, title string) error {
	img, err := Render(d, title)
	if err != nil {
		return err
	}
	return png.Encode(w, img)
}

// Render draws the figure.
func Render(d *schedules.Demand, title string) (*image.RGBA, error) {
	n := d.N()
	if n == 0 {
		return nil, fmt.Errorf("heatmap: empty demand (n = 0)")
	}
	l := LayoutFor(n)
	wpx, hpx := l.Left+n*l.Cell+l.Right, l.Top+n*l.Cell+l.Bottom
	img := image.NewRGBA(image.Rect(0, 0, wpx, hpx))
	fill(img, img.Bounds(), Background)
	var peak int64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			peak = max(peak, d.At(i, j))
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			c := Shade(d.At(i, j), peak)
			if i == j && !d.CountDiagonal {
				c = Local
			}
			o := l.CellOrigin(i, j)
			fill(img, image.Rect(o.X, o.Y, o.X+l.Cell, o.Y+l.Cell), c)
		}
	}
	st := d.Statistics()
	every := l.LabelEvery()
	// A column load is written upwards under its column: one line of text (about 12 px) needs
	// 12 px of width, so it goes on every column that has a port label.
	rxEvery := every
	for rxEvery*l.Cell < 12 {
		rxEvery *= 2
	}
	face, err := labelFace()
	if err != nil {
		return nil, err
	}
	text := func(img *image.RGBA, x, y int, s string, c color.RGBA) { drawText(img, face, x, y, s, c) }
	text(img, 4, 16, title, Ink)
	text(img, 4, 36, "Tx \\ Rx", Ink)
	for k := 0; k < n; k += every {
		{
			o := l.CellOrigin(k, k)
			text(img, o.X+2, l.Top-4, fmt.Sprint(k), Ink)
			text(img, l.Left-20, o.Y+l.Cell/2+4, fmt.Sprint(k), Ink)
		}
	}
	text(img, l.Left+n*l.Cell+6, l.Top-4, "Tx load", Ink)
	text(img, 4, l.Top+n*l.Cell+16, "Rx load", Ink)
	bottleneck := map[schedules.Endpoint]bool{}
	for _, e := range st.Bottlenecks {
		bottleneck[e] = true
	}
	for k := 0; k < n; k++ {
		o := l.CellOrigin(k, k)
		tx, rx := schedules.Endpoint{Port: k}, schedules.Endpoint{Port: k, Rx: true}
		if k%every == 0 {
			text(img, l.Left+n*l.Cell+6, o.Y+l.Cell/2+4, units.FormatBytes(d.RowLoad(k)), inkFor(bottleneck[tx]))
		}
		if k%rxEvery == 0 {
			// Upwards from the bottom edge, centred on the column: it reads against its cells.
			upText(img, face, o.X+l.Cell/2+4, l.Top+n*l.Cell+6, units.FormatBytes(d.ColLoad(k)), inkFor(bottleneck[rx]))
		}
		if bottleneck[tx] {
			outline(img, image.Rect(l.Left, o.Y, l.Left+n*l.Cell, o.Y+l.Cell), Bottleneck)
		}
		if bottleneck[rx] {
			outline(img, image.Rect(o.X, l.Top, o.X+l.Cell, l.Top+n*l.Cell), Bottleneck)
		}
	}
	// The colour scale: the largest cell's shade at the top, white (no bytes) at the bottom.
	bar := l.ScaleBar(n)
	for y := bar.Min.Y; y < bar.Max.Y; y++ {
		v := int64(float64(peak) * float64(bar.Max.Y-1-y) / float64(max(1, bar.Dy()-1)))
		fill(img, image.Rect(bar.Min.X, y, bar.Max.X, y+1), Shade(v, peak))
	}
	outline(img, bar.Inset(-1), Ink)
	// The title sits above the grid's top edge, clear of the top value beside the bar's top.
	text(img, bar.Max.X+4, bar.Min.Y+10, units.FormatBytes(peak), Ink)
	text(img, bar.Max.X+4, bar.Max.Y, "0", Ink)
	text(img, bar.Min.X-4, bar.Min.Y-22, "bytes/cell", Ink)
	return img, nil
}

// labelFace is Liberation Sans at 11 px, hinted to the pixel grid.
func labelFace() (font.Face, error) {
	for _, f := range liberation.Collection() {
		if f.Font.Typeface == "Liberation" && f.Font.Variant == "Sans" && f.Font.Style == font.StyleNormal && f.Font.Weight == font.WeightNormal {
			return opentype.NewFace(f.Face, &opentype.FaceOptions{Size: 11, DPI: 72, Hinting: font.HintingFull})
		}
	}
	return nil, fmt.Errorf("heatmap: no Liberation Sans in gonum's font collection")
}

// drawText writes s with its baseline starting at (x, y).
func drawText(img *image.RGBA, face font.Face, x, y int, s string, c color.RGBA) {
	dr := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: face, Dot: fixed.P(x, y)}
	dr.DrawString(s)
}

// upText writes s rotated a quarter turn anticlockwise (reading upwards), its baseline along
// x and its end at y (the top of the text is at y − width).
func upText(img *image.RGBA, face font.Face, x, y int, s string, c color.RGBA) {
	w := font.MeasureString(face, s).Ceil()
	m := face.Metrics()
	h := (m.Ascent + m.Descent).Ceil()
	tmp := image.NewRGBA(image.Rect(0, 0, w, h))
	fill(tmp, tmp.Bounds(), color.RGBA{})
	drawText(tmp, face, 0, m.Ascent.Ceil(), s, c)
	// Pixel (u, v) of the horizontal text lands at (x − ascent + v, y + w − u): upwards.
	for v := 0; v < h; v++ {
		for u := 0; u < w; u++ {
			px := tmp.RGBAAt(u, v)
			if px.A == 0 {
				continue
			}
			X, Y := x-m.Ascent.Ceil()+v, y+w-1-u
			if !image.Pt(X, Y).In(img.Bounds()) {
				continue
			}
			img.SetRGBA(X, Y, over(px, img.RGBAAt(X, Y)))
		}
	}
}

// over is premultiplied src over dst.
func over(src, dst color.RGBA) color.RGBA {
	a := 255 - uint32(src.A)
	f := func(s, d uint8) uint8 { return uint8(uint32(s) + uint32(d)*a/255) }
	return color.RGBA{f(src.R, dst.R), f(src.G, dst.G), f(src.B, dst.B), f(src.A, dst.A)}
}

func inkFor(b bool) color.RGBA {
	if b {
		return Bottleneck
	}
	return Ink
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// outline draws a 2-pixel frame just inside r (1 pixel for tiny cells).
func outline(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	t := min(2, max(1, r.Dx()/4), max(1, r.Dy()/4))
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+t), c)
	fill(img, image.Rect(r.Min.X, r.Max.Y-t, r.Max.X, r.Max.Y), c)
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+t, r.Max.Y), c)
	fill(img, image.Rect(r.Max.X-t, r.Min.Y, r.Max.X, r.Max.Y), c)
}
