// Package pdffig writes gonum plot canvases as PDF for paper figures, with each font embedded
// as a subset of the glyphs the figure uses and text kept as Unicode. gonum's own vgpdf encodes
// text in code page 1252, which has no α, →, × or Σ, all of which the figures' labels use.
package pdffig

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Write creates a width×height PDF canvas, lets paint fill it, and writes the one-page PDF to w.
// The output depends only on what is painted (no dates), so figures compare byte for byte.
func Write(w io.Writer, width, height vg.Length, paint func(draw.Canvas)) (err error) {
	c := newCanvas(width, height)
	defer func() {
		// fpdf reports some failures by panicking; none may cross this package's boundary.
		if r := recover(); r != nil {
			err = fmt.Errorf("writing pdf: %v", r)
		}
	}()
	paint(draw.New(c))
	if err := c.doc.Error(); err != nil {
		return fmt.Errorf("writing pdf: %w", err)
	}
	if err := c.doc.Output(w); err != nil {
		return fmt.Errorf("writing pdf: %w", err)
	}
	return nil
}

// affine is x' = a·x + c·y + e, y' = b·x + d·y + f (vg's coordinates: points, y up).
type affine struct{ a, b, c, d, e, f float64 }

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

// then is m∘n: a point goes through n first (the transform just applied), then m, as a
// transform applied to a vg context acts on what is drawn after it.
func (m affine) then(n affine) affine {
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

type state struct {
	m      affine
	width  float64
	dashes []float64
	phase  float64
	col    color.Color
}

// canvas is a vg.Canvas over fpdf. Transforms are applied in Go (every point goes through the
// current matrix, then y flips to fpdf's top-left origin); only text uses a PDF rotation.
type canvas struct {
	doc   *fpdf.Fpdf
	w, h  vg.Length
	st    state
	stack []state
	fonts map[string]bool
	imgs  int
}

func newCanvas(w, h vg.Length) *canvas {
	doc := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: w.Points(), Ht: h.Points()}})
	doc.SetCreationDate(time.Unix(0, 0).UTC())
	doc.SetModificationDate(time.Unix(0, 0).UTC())
	doc.SetCatalogSort(true)
	doc.SetMargins(0, 0, 0)
	doc.SetAutoPageBreak(false, 0)
	doc.AddPage()
	c := &canvas{doc: doc, w: w, h: h, fonts: map[string]bool{},
		st: state{m: affine{a: 1, d: 1}, width: 1, col: color.Black}}
	c.SetColor(color.Black)
	c.SetLineWidth(1)
	return c
}

func (c *canvas) Size() (vg.Length, vg.Length) { return c.w, c.h }

// page maps a vg point (after the current transform) to fpdf's coordinates.
func (c *canvas) page(p vg.Point) (float64, float64) {
	x, y := c.st.m.apply(p.X.Points(), p.Y.Points())
	return x, c.h.Points() - y
}

func (c *canvas) scale() float64 { return math.Sqrt(math.Abs(c.st.m.a*c.st.m.d - c.st.m.b*c.st.m.c)) }

func (c *canvas) SetLineWidth(w vg.Length) {
	c.st.width = w.Points()
	c.doc.SetLineWidth(math.Max(w.Points()*c.scale(), 0))
}

func (c *canvas) SetLineDash(pattern []vg.Length, offset vg.Length) {
	c.st.dashes = c.st.dashes[:0]
	for _, l := range pattern {
		c.st.dashes = append(c.st.dashes, l.Points()*c.scale())
	}
	c.st.phase = offset.Points() * c.scale()
	c.doc.SetDashPattern(c.st.dashes, c.st.phase)
}

func (c *canvas) SetColor(col color.Color) {
	if col == nil {
		col = color.Black
	}
	c.st.col = col
	n := color.NRGBAModel.Convert(col).(color.NRGBA)
	c.doc.SetDrawColor(int(n.R), int(n.G), int(n.B))
	c.doc.SetFillColor(int(n.R), int(n.G), int(n.B))
	c.doc.SetTextColor(int(n.R), int(n.G), int(n.B))
	c.doc.SetAlpha(float64(n.A)/255, "Normal")
}

func (c *canvas) Rotate(rad float64) {
	s, co := math.Sincos(rad)
	c.st.m = c.st.m.then(affine{a: co, b: s, c: -s, d: co})
}

func (c *canvas) Translate(p vg.Point) {
	c.st.m = c.st.m.then(affine{a: 1, d: 1, e: p.X.Points(), f: p.Y.Points()})
}

func (c *canvas) Scale(x, y float64) { c.st.m = c.st.m.then(affine{a: x, d: y}) }

func (c *canvas) Push() {
	st := c.st
	st.dashes = append([]float64(nil), c.st.dashes...)
	c.stack = append(c.stack, st)
}

func (c *canvas) Pop() {
	if len(c.stack) == 0 {
		return
	}
	c.st = c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
	c.SetColor(c.st.col)
	c.doc.SetLineWidth(c.st.width * c.scale())
	c.doc.SetDashPattern(c.st.dashes, c.st.phase)
}

func (c *canvas) Stroke(p vg.Path) {
	if c.st.width <= 0 || c.path(p) == 0 {
		return
	}
	c.doc.DrawPath("D")
}

func (c *canvas) Fill(p vg.Path) {
	if c.path(p) > 0 {
		c.doc.DrawPath("F")
	}
}

// path emits p and returns how many components it had.
func (c *canvas) path(p vg.Path) int {
	var cur vg.Point
	started := false
	for _, comp := range p {
		switch comp.Type {
		case vg.MoveComp:
			c.doc.MoveTo(c.page(comp.Pos))
			cur, started = comp.Pos, true
		case vg.LineComp:
			c.doc.LineTo(c.page(comp.Pos))
			cur = comp.Pos
		case vg.ArcComp:
			// A polyline of at most 2° steps: far below a printed figure's resolution.
			r := comp.Radius.Points()
			steps := max(4, int(math.Ceil(math.Abs(comp.Angle)/(2*math.Pi/180))))
			for k := 0; k <= steps; k++ {
				t := comp.Start + comp.Angle*float64(k)/float64(steps)
				pt := vg.Point{X: comp.Pos.X + vg.Length(r*math.Cos(t)), Y: comp.Pos.Y + vg.Length(r*math.Sin(t))}
				if k == 0 && !started {
					c.doc.MoveTo(c.page(pt))
					started = true
				} else if k > 0 || pt != cur {
					c.doc.LineTo(c.page(pt))
				}
				cur = pt
			}
		case vg.CurveComp:
			x, y := c.page(comp.Pos)
			switch len(comp.Control) {
			case 1:
				cx, cy := c.page(comp.Control[0])
				c.doc.CurveTo(cx, cy, x, y)
			case 2:
				cx0, cy0 := c.page(comp.Control[0])
				cx1, cy1 := c.page(comp.Control[1])
				c.doc.CurveBezierCubicTo(cx0, cy0, cx1, cy1, x, y)
			}
			cur = comp.Pos
		case vg.CloseComp:
			c.doc.ClosePath()
		}
	}
	return len(p)
}

// FillString writes str with its baseline's left end at pt, in font f (embedded on first use).
func (c *canvas) FillString(f font.Face, pt vg.Point, str string) {
	if f.Font.Size == 0 || f.Face == nil {
		return
	}
	name := f.Name()
	if !c.fonts[name] {
		var raw bytes.Buffer
		if _, err := f.Face.WriteSourceTo(nil, &raw); err != nil {
			panic(fmt.Errorf("font %s: %w", name, err))
		}
		c.doc.AddUTF8FontFromBytes(name, "", raw.Bytes())
		c.fonts[name] = true
	}
	c.doc.SetFont(name, "", f.Font.Size.Points()*c.scale())
	x, y := c.page(pt)
	angle := math.Atan2(c.st.m.b, c.st.m.a) * 180 / math.Pi
	if math.Abs(angle) > 1e-9 {
		c.doc.TransformBegin()
		c.doc.TransformRotate(angle, x, y)
		c.doc.Text(x, y, str)
		c.doc.TransformEnd()
		return
	}
	c.doc.Text(x, y, str)
}

// DrawImage places img in rect (axis-aligned after the current transform).
func (c *canvas) DrawImage(rect vg.Rectangle, img image.Image) {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	c.imgs++
	name := "img" + strconv.Itoa(c.imgs)
	opts := fpdf.ImageOptions{ImageType: "PNG"}
	c.doc.RegisterImageOptionsReader(name, opts, &b)
	x0, y0 := c.page(rect.Min)
	x1, y1 := c.page(rect.Max)
	c.doc.ImageOptions(name, math.Min(x0, x1), math.Min(y0, y1), math.Abs(x1-x0), math.Abs(y1-y0), false, opts, 0, "")
}
