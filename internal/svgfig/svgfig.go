// Package svgfig writes gonum plot canvases as SVG that references its fonts instead of
// embedding them. gonum's vgsvg embeds each font whole (about 500 KB a face, so a 3×3 heatmap
// was 530 KB); its labels are laid out with the metrics of the Liberation fonts, which are
// metric-compatible with Times New Roman, Arial and Courier New by design, so naming those as
// fallbacks keeps every label's width in any viewer that has either family (Linux desktops ship
// Liberation, Windows and macOS the others), at a few kilobytes a figure.
package svgfig

import (
	"bytes"
	"fmt"
	"io"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// fallbacks maps each Liberation family gonum lays text out with to a font-family list whose
// every named member has the same advance widths.
var fallbacks = []struct{ family, list string }{
	{"Liberation Serif", "'Liberation Serif','Times New Roman',Times,serif"},
	{"Liberation Sans", "'Liberation Sans',Arial,Helvetica,sans-serif"},
	{"Liberation Mono", "'Liberation Mono','Courier New',Courier,monospace"},
}

// Write creates a width×height SVG canvas, lets paint fill it, and writes it to w with each
// font referenced by a metric-compatible family list and none embedded.
func Write(w io.Writer, width, height vg.Length, paint func(draw.Canvas)) error {
	c := vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(false))
	paint(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return fmt.Errorf("writing svg: %w", err)
	}
	out := b.Bytes()
	for _, f := range fallbacks {
		// vgsvg writes the family bare inside a style attribute: font-family:NAME;
		out = bytes.ReplaceAll(out, []byte("font-family:"+f.family+";"), []byte("font-family:"+f.list+";"))
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("writing svg: %w", err)
	}
	return nil
}
