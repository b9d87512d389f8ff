package pdffig

import (
	"bytes"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func paint(c draw.Canvas) {
	sty := draw.TextStyle{Color: color.Black, Font: font.From(gplot.DefaultFont, 12), Handler: gplot.DefaultTextHandler}
	c.FillText(sty, vg.Point{X: 20, Y: 40}, "bvn / tetris at α_r = 10µs → 1.5×")
	sty.Rotation = 1.5707963267948966
	c.FillText(sty, vg.Point{X: 10, Y: 20}, "up")
	c.FillPolygon(color.RGBA{200, 30, 30, 255}, []vg.Point{{X: 100, Y: 5}, {X: 140, Y: 5}, {X: 140, Y: 25}, {X: 100, Y: 25}})
}

// One page; the font is a subset (the whole Liberation Serif is about 400 KB); the same
// painting gives the same bytes; and the text is Unicode (checked with pdftotext where the
// system has it).
func TestWrite(t *testing.T) {
	var a, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		if err := Write(buf, 8*vg.Centimeter, 2*vg.Centimeter, paint); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.HasPrefix(a.Bytes(), []byte("%PDF-")) || !bytes.Contains(a.Bytes(), []byte("/FontFile2")) {
		t.Fatalf("not a PDF with an embedded TrueType font (%d bytes)", a.Len())
	}
	if a.Len() > 40<<10 {
		t.Errorf("%d bytes: the font is not subset", a.Len())
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two writes of one figure differ")
	}
	exe, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext not installed: the text's encoding is not checked")
	}
	p := filepath.Join(t.TempDir(), "f.pdf")
	if err := os.WriteFile(p, a.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, p, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "bvn / tetris at α_r = 10µs → 1.5×") {
		t.Errorf("pdftotext reads %q", out)
	}
}
