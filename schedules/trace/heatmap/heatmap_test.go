package heatmap

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// The matrix of the trace package's hand-worked case: receiver 2 (load 10) is the one
// bottleneck; transmitter 0 (load 7) is not.
func handDemand(t *testing.T) *schedules.Demand {
	d, err := schedules.DemandFromRows([][]int64{{9, 1, 6}, {2, 0, 4}, {0, 1, 9}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRenderMarksBottleneckAndShades(t *testing.T) {
	d := handDemand(t)
	img, err := Render(d, "hand")
	if err != nil {
		t.Fatal(err)
	}
	l := LayoutFor(3)
	at := func(i, j, dx, dy int) color.RGBA {
		o := l.CellOrigin(i, j)
		return img.RGBAAt(o.X+dx, o.Y+dy)
	}
	mid := l.Cell / 2
	// Column 2 is outlined in red along its left edge in every row; column 1 is not.
	for i := 0; i < 3; i++ {
		if c := at(i, 2, 0, mid); c != Bottleneck {
			t.Errorf("row %d, left edge of bottleneck column 2: %v, want red", i, c)
		}
		if c := at(i, 1, 0, mid); c == Bottleneck {
			t.Errorf("row %d, column 1 is outlined but is not a bottleneck", i)
		}
	}
	// No transmitter is a bottleneck: row 0's top edge over column 0..1 is not red.
	if c := at(0, 1, mid, 0); c == Bottleneck {
		t.Error("row 0 outlined but transmitter 0 is not a bottleneck")
	}
	// The diagonal is local traffic: grey even where it holds 9 bytes.
	if c := at(0, 0, mid, mid); c != Local {
		t.Errorf("cell (0,0) = %v, want the local grey", c)
	}
	// Shading: the largest off-diagonal entry (6, at (0,2)) is darkest; zero is white.
	if c := at(0, 2, mid, mid); c != Shade(6, 6) {
		t.Errorf("cell (0,2) = %v, want %v", c, Shade(6, 6))
	}
	if c := at(2, 0, mid, mid); c != Background {
		t.Errorf("cell (2,0) holds 0 bytes: %v, want white", c)
	}
	if a, b := Shade(1, 6), Shade(4, 6); !(a.R > b.R && a.G > b.G) {
		t.Errorf("Shade(1) = %v should be lighter than Shade(4) = %v", a, b)
	}
}

func TestDrawPNG(t *testing.T) {
	var b bytes.Buffer
	if err := Draw(&b, handDemand(t), "hand"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	l := LayoutFor(3)
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != l.Left+3*l.Cell+l.Right || h != l.Top+3*l.Cell+l.Bottom {
		t.Errorf("image %d×%d", w, h)
	}
	if _, err := Render(&schedules.Demand{}, "empty"); err == nil {
		t.Error("an empty demand should be an error")
	}
}

func TestLayoutFor(t *testing.T) {
	for _, c := range []struct{ n, cell int }{{1, 48}, {8, 48}, {16, 48}, {32, 24}, {512, 1}, {4096, 1}} {
		if got := LayoutFor(c.n).Cell; got != c.cell {
			t.Errorf("LayoutFor(%d).Cell = %d, want %d", c.n, got, c.cell)
		}
	}
}

func ExampleRender() {
	d, _ := schedules.DemandFromRows([][]int64{{0, 5}, {1, 0}})
	img, _ := Render(d, "two GPUs")
	l := LayoutFor(2)
	o := l.CellOrigin(0, 1) // GPU 0 → GPU 1 carries everything receiver 1 takes: a bottleneck
	fmt.Println(img.RGBAAt(o.X, o.Y+l.Cell/2) == Bottleneck)
	// Output: true
}

// At 64 ports the labels are thinned, not dropped, each receiver's load is written under its own
// column (ink in the strip below the grid between that column's edges), the colour bar's title
// stays clear of its top value, and a colour scale runs from the largest cell's shade at the top
// to white at the bottom.
func TestRender64LabelsAndScale(t *testing.T) {
	rows := make([][]int64, 64)
	for i := range rows {
		rows[i] = make([]int64, 64)
		for j := range rows[i] {
			rows[i][j] = int64(1 + (i*7+j*3)%50)
		}
	}
	d, err := schedules.DemandFromRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	img, err := Render(d, "64")
	if err != nil {
		t.Fatal(err)
	}
	l := LayoutFor(64)
	if every := l.LabelEvery(); every != 2 || l.Cell != 12 {
		t.Fatalf("cell %d px, labels every %d; want 12 and 2", l.Cell, every)
	}
	// Ink in the column-label strip above the grid, over port 0's and port 62's cells.
	for _, k := range []int{0, 62} {
		o := l.CellOrigin(0, k)
		ink := 0
		for y := l.Top - 14; y < l.Top-2; y++ {
			for x := o.X; x < o.X+l.Cell; x++ {
				if colourDist(img.RGBAAt(x, y), Ink) < 200 { // anti-aliased text: dark, if not exactly Ink
					ink++
				}
			}
		}
		if ink == 0 {
			t.Errorf("no label above port %d", k)
		}
	}
	dark := func(r image.Rectangle) int {
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if colourDist(img.RGBAAt(x, y), Ink) < 200 {
					n++
				}
			}
		}
		return n
	}
	grid := l.Top + 64*l.Cell
	for _, k := range []int{0, 2, 62} {
		o := l.CellOrigin(0, k)
		if dark(image.Rect(o.X, grid+6, o.X+l.Cell, grid+50)) == 0 {
			t.Errorf("no load under column %d", k)
		}
	}
	if dark(image.Rect(l.CellOrigin(0, 1).X, grid+6, l.CellOrigin(0, 1).X+l.Cell, grid+50)) != 0 {
		t.Error("ink under column 1, which has no label: the loads are not under their columns")
	}
	bar := l.ScaleBar(64)
	// The top value sits beside the bar's top, the title above it with a gap between.
	if dark(image.Rect(bar.Min.X-4, bar.Min.Y-9, bar.Max.X+80, bar.Min.Y-2)) != 0 { // the bar's frame is at Min.Y−1
		t.Error("the colour bar's title runs into its top value")
	}
	mid := (bar.Min.X + bar.Max.X) / 2
	if got, want := img.RGBAAt(mid, bar.Min.Y+3), Shade(50, 50); colourDist(got, want) > 12 { // a gradient: 3 px down is a little lighter
		t.Errorf("scale top %v, want the peak's shade %v", got, want)
	}
	if got := img.RGBAAt(mid, bar.Max.Y-3); colourDist(got, Background) > 6 {
		t.Errorf("scale bottom %v, want about white", got)
	}
}

func colourDist(a, b color.RGBA) int {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, b.R) + d(a.G, b.G) + d(a.B, b.B)
}
