package svgfig

import (
	"bytes"
	"encoding/xml"
	"image/color"
	"io"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

func paintLabel(c draw.Canvas) {
	fnt := gplot.DefaultFont
	c.FillText(draw.TextStyle{Color: color.Black, Font: font.From(fnt, 10), Handler: gplot.DefaultTextHandler},
		vg.Point{X: 10, Y: 10}, "Tx 0 α_r")
}

// The figure names its font with metric-compatible fallbacks, embeds none, stays well-formed
// XML, and is a small fraction of what vgsvg's embedding writes.
func TestWriteReferencesFonts(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, 4*vg.Centimeter, 2*vg.Centimeter, paintLabel); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "@font-face") || strings.Contains(s, "data:font") {
		t.Error("a font is embedded")
	}
	if !strings.Contains(s, "font-family:'Liberation Serif','Times New Roman',Times,serif;") {
		t.Errorf("no metric-compatible family list:\n%s", s)
	}
	if !strings.Contains(s, ">Tx 0 α_r<") {
		t.Error("the label is missing")
	}
	dec := xml.NewDecoder(strings.NewReader(s))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
	}
	embedded := vgsvg.NewWith(vgsvg.UseWH(4*vg.Centimeter, 2*vg.Centimeter), vgsvg.EmbedFonts(true))
	paintLabel(draw.New(embedded))
	var e bytes.Buffer
	if _, err := embedded.WriteTo(&e); err != nil {
		t.Fatal(err)
	}
	if b.Len()*50 > e.Len() {
		t.Errorf("%d bytes referenced vs %d embedded: want at least 50× smaller", b.Len(), e.Len())
	}
	t.Logf("one label: %d bytes referenced, %d bytes with the font embedded", b.Len(), e.Len())
}
