package plot

import (
	"image/color"
	"os"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func TestMain(m *testing.M) {
	embedSVGFonts = false // golden SVGs hold the layout; TestSVGEmbedsFonts checks the embedding
	os.Exit(m.Run())
}

// SVGs carry their fonts, so labels keep the widths they were laid out with in any viewer.
func TestSVGEmbedsFonts(t *testing.T) {
	embedSVGFonts = true
	defer func() { embedSVGFonts = false }()
	var b strings.Builder
	err := render(&b, "svg", 2*vg.Centimeter, vg.Centimeter, func(c draw.Canvas) {
		fnt := gplot.DefaultFont
		fnt.Size = 10
		c.FillText(draw.TextStyle{Color: color.Black, Font: font.From(fnt, 10), Handler: gplot.DefaultTextHandler}, vg.Point{X: 1, Y: 1}, "Tx 0")
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "@font-face") || !strings.Contains(b.String(), "data:font/ttf") {
		t.Errorf("SVG without an embedded font (%d bytes)", b.Len())
	}
}
