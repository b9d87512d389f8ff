package plot

import (
	"bytes"
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
	return c
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
