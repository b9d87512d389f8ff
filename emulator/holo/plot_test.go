package holo

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
)

func TestPlotGolden(t *testing.T) {
	sc, err := ScanNodes(context.Background(), paperRegime, 2, 40, Algorithms, nil)
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := sc.Plot(&svg, "svg"); err != nil {
		t.Fatal(err)
	}
	for _, a := range Algorithms {
		if !strings.Contains(svg.String(), ">"+a+"<") {
			t.Errorf("legend lacks %s", a)
		}
	}
	goldenfile.Check(t, "testdata/sweep-paper-2-40.svg", svg.Bytes())
	var pngOut bytes.Buffer
	if err := sc.Plot(&pngOut, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&pngOut)
	if err != nil || img.Bounds().Dx() < 800 {
		t.Fatalf("png: %v, %v", err, img)
	}
	if dir := os.Getenv("HOLO_PNG_DIR"); dir != "" {
		big, err := ScanNodes(context.Background(), paperRegime, 4, 2048, Algorithms, nil)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(dir + "/broadcast-paper.png")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := big.Plot(f, "png"); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Plot(&svg, "pdf"); err == nil {
		t.Error("pdf accepted")
	}
}
