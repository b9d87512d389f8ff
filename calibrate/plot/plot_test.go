package plot

import (
	"bytes"
	"fmt"
	"image/png"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
)

// knee is a two-pair calibration, one pair with a knee, with medians and spread.
func knee() *model.Calibration {
	c := &model.Calibration{Version: 1, Inventory: model.Inventory{GPUs: []model.GPU{{Index: 0}, {Index: 1}}}}
	line := model.PairFit{Src: 0, Dst: 1, Alpha: 5e-6, Beta: 1 / 200e9, Bandwidth: 200e9, R2: 1}
	kneed := model.PairFit{Src: 1, Dst: 0, Alpha: 7e-6, Beta: 1 / 250e9, Bandwidth: 125e9, R2: 1, Pieces: []model.Piece{
		{FromBytes: 0, MinBytes: 4096, MaxBytes: 1 << 20, Alpha: 7e-6, Beta: 1 / 250e9},
		{FromBytes: 1 << 20, MinBytes: 2 << 20, MaxBytes: 1 << 30, Alpha: 7e-6 - float64(1<<20)/250e9, Beta: 1 / 125e9},
	}}
	for n := int64(4096); n <= 1<<30; n *= 4 {
		for _, p := range []*model.PairFit{&line, &kneed} {
			s := p.Seconds(n)
			p.Medians = append(p.Medians, model.Median{Bytes: n, Seconds: s, P25: 0.98 * s, P75: 1.03 * s, Repetitions: 9})
		}
	}
	c.Pairs = []model.PairFit{line, kneed}
	c.Inventory.Links = map[string]string{"0-1": "NV18", "1-0": "PHB"} // two link classes
	return c
}

// eight is an 8-GPU calibration of one link class, 56 pairs of bandwidths 300..355 GB/s.
func eight() *model.Calibration {
	c := &model.Calibration{Version: 1, Inventory: model.Inventory{Links: map[string]string{}}}
	for g := range 8 {
		c.Inventory.GPUs = append(c.Inventory.GPUs, model.GPU{Index: g})
	}
	k := 0
	for i := range 8 {
		for j := range 8 {
			if i == j {
				continue
			}
			b := 300e9 + float64(k)*1e9
			k++
			p := model.PairFit{Src: i, Dst: j, Alpha: 3e-6, Beta: 1 / b, Bandwidth: b, R2: 1}
			for n := int64(4096); n <= 1<<28; n *= 4 {
				p.Medians = append(p.Medians, model.Median{Bytes: n, Seconds: p.Seconds(n)})
			}
			c.Pairs = append(c.Pairs, p)
			c.Inventory.Links[fmt.Sprintf("%d-%d", i, j)] = "NV18"
		}
	}
	return c
}

// 56 pairs of one link class are drawn as one: a representative (the median-bandwidth pair) with
// a legend line naming the class, and the spread band of all 56 with its range.
func TestDrawOneClass(t *testing.T) {
	var svg bytes.Buffer
	if err := Draw(&svg, "svg", eight()); err != nil {
		t.Fatal(err)
	}
	out := svg.String()
	for _, want := range []string{"NV18, 56 pairs: 4→0 α 3.00 µs, 328 GB/s", "spread of the 56: 300–355 GB/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("svg lacks %q", want)
		}
	}
	if n := strings.Count(out, "pairs: "); n != 1 {
		t.Errorf("%d legend entries for pairs, want 1 (one class)", n)
	}
}

// The bandwidth heatmap's scale is sequential: its colours' luminance changes monotonically from
// the slowest pair to the fastest (a diverging scale turns back past its middle).
func TestHeatmapSequential(t *testing.T) {
	cm := bandwidthScale(300, 355)
	prev := -1.0
	for v := 300.0; v <= 355; v += 5 {
		col, err := cm.At(v)
		if err != nil {
			t.Fatal(err)
		}
		r, g, b, _ := col.RGBA()
		l := 0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)
		if l <= prev {
			t.Fatalf("luminance does not rise at %g GB/s: %g after %g (lighter is faster)", v, l, prev)
		}
		prev = l
	}
}

func TestDrawBothFormats(t *testing.T) {
	var svg, pngBuf bytes.Buffer
	if err := Draw(&svg, "svg", knee()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "Transfer time vs size, 2 pairs (isolated)", "Bandwidth (GB/s), isolated", "knee 1MiB", "1 MiB", "GB/s"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("svg lacks %q", want)
		}
	}
	if err := Draw(&pngBuf, "png", knee()); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&pngBuf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 400 {
		t.Errorf("png is %v", b)
	}
}

func TestDrawErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := Draw(&buf, "gif", knee()); err == nil || !strings.Contains(err.Error(), `"gif"`) {
		t.Errorf("gif: %v", err)
	}
	c := knee()
	for i := range c.Pairs {
		c.Pairs[i].Medians = nil
	}
	if err := Draw(&buf, "svg", c); err == nil || !strings.Contains(err.Error(), "no pair with medians") {
		t.Errorf("no medians: %v", err)
	}
	c = knee()
	c.Pairs[0].Medians[0].Seconds = 0
	if err := Draw(&buf, "svg", c); err == nil || !strings.Contains(err.Error(), "log axes") {
		t.Errorf("zero median: %v", err)
	}
}

func ExampleDraw() {
	var buf bytes.Buffer
	err := Draw(&buf, "svg", knee())
	_ = err // write buf to cal.svg
	// Output:
}
