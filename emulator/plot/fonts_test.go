package plot

import (
	"bytes"
	"strings"
	"testing"
)

// SVGs reference their fonts (with metric-compatible fallbacks) rather than embed them: the
// 3×3 heatmap that was 530 KB with its font embedded is a few kilobytes.
func TestSVGReferencesFonts(t *testing.T) {
	g := Grid{Title: "bvn / tetris", RowTitle: "bandwidth", ColTitle: "α_r",
		Rows: []string{"100Gbps", "400Gbps", "800Gbps"}, Cols: []string{"10ns", "10µs", "10ms"},
		Values: [][]float64{{1, 2, 3}, {1.5, 2.5, 3.5}, {4, 5, 6}}}
	var b bytes.Buffer
	if err := Heatmap(&b, "svg", g); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "@font-face") || !strings.Contains(b.String(), "'Times New Roman'") {
		t.Error("SVG embeds its font or names no metric-compatible fallback")
	}
	if b.Len() > 40<<10 {
		t.Errorf("3×3 heatmap SVG is %d bytes, want under 40 KiB", b.Len())
	}
}

// Every chart of this package also renders as PDF (for papers).
func TestPDF(t *testing.T) {
	g := Grid{Title: "bvn / tetris at α_r", Rows: []string{"a"}, Cols: []string{"x"}, Values: [][]float64{{2}}}
	var b bytes.Buffer
	if err := Heatmap(&b, PDF, g); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("%PDF-")) {
		t.Errorf("not a PDF: %q", b.Bytes()[:min(20, b.Len())])
	}
	if err := Heatmap(&bytes.Buffer{}, "eps", g); err == nil || !strings.Contains(err.Error(), `"pdf"`) {
		t.Errorf("eps: %v, want an error listing pdf", err)
	}
}
