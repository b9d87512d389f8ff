package plot

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// pngDir, when set, keeps the PNGs the tests render so a person can look at them.
var pngDir = flag.String("pngdir", "", "write rendered PNGs to this directory")

func ptr(v float64) *float64 { return &v }

// tinySchedule is a hand-made 4-port Beneš schedule and its timeline at 1 byte/ns, α_r = 100 ns:
// circuit 0 (0→1, 400 B) runs 0–400 ns on the all-bar fabric; circuit 1 (2→3, 200 B) runs
// 0–200 ns; circuit 2 (2→0, 300 B) needs a cross at stage 0 switch 1 and stage 2 switch 0, which
// it can only set after circuit 0 leaves switch (2, 0) at 400 ns: it waits on its path from
// 200 ns, reconfigures 400–500 ns and transmits 500–800 ns.
func tinySchedule(t testing.TB) (*schedules.Schedule, *schedules.Timeline) {
	t.Helper()
	f, err := benes.New(4)
	if err != nil {
		t.Fatal(err)
	}
	path := func(src, dst int, choices uint32) benes.Path {
		p := f.NewPath(src, dst, choices)
		if err := f.CheckPath(src, dst, p); err != nil {
			t.Fatalf("path %d→%d: %v", src, dst, err)
		}
		return p
	}
	s := &schedules.Schedule{
		Version: schedules.FormatVersion, Algorithm: "hand", N: 4, Ports: 4,
		Fabric: schedules.Benes, Mode: schedules.Partial,
		Params: schedules.Params{BandwidthBytesPerSecond: 1e9, ReconfigSeconds: 100e-9},
		Circuits: []schedules.Circuit{
			{Src: 0, Dst: 1, Bytes: 400, Group: 0, Path: path(0, 1, 0), PlannedStart: ptr(0), PlannedEnd: ptr(400e-9)},
			{Src: 2, Dst: 3, Bytes: 200, Group: 0, Path: path(2, 3, 0), PlannedStart: ptr(0), PlannedEnd: ptr(200e-9)},
			{Src: 2, Dst: 0, Bytes: 300, Group: 1, Path: path(2, 0, 0)},
		},
	}
	tl := &schedules.Timeline{
		Circuits: []schedules.CircuitTiming{
			{Circuit: 0, Ready: 0, PathReady: 0, ReconfigStart: 0, TransmitStart: 0, End: 400e-9},
			{Circuit: 1, Ready: 0, PathReady: 0, ReconfigStart: 0, TransmitStart: 0, End: 200e-9},
			{Circuit: 2, Ready: 200e-9, PathReady: 400e-9, ReconfigStart: 400e-9, TransmitStart: 500e-9, End: 800e-9},
		},
		SwitchChanges: []schedules.SwitchChange{
			{Stage: 0, Switch: 1, From: benes.Bar, To: benes.Cross, Start: 400e-9, End: 500e-9},
			{Stage: 2, Switch: 0, From: benes.Bar, To: benes.Cross, Start: 400e-9, End: 500e-9},
		},
	}
	return s, tl
}

func tinyGrid() Grid {
	return Grid{
		Title:    "BvN / Tetris completion",
		RowTitle: "bandwidth",
		ColTitle: "reconfiguration delay α_r",
		Rows:     []string{"100Gbps", "800Gbps"},
		Cols:     []string{"10ns", "10us", "10ms"},
		Values:   [][]float64{{0.99, 1.3, 5.34}, {1, 2.58, math.NaN()}},
	}
}

// renderBoth renders draw in both formats, checks the SVG against its golden file, and returns the
// decoded PNG.
func renderBoth(t *testing.T, name string, drawIt func(w *bytes.Buffer, format string) error) image.Image {
	t.Helper()
	var svg, pngBuf bytes.Buffer
	if err := drawIt(&svg, "svg"); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "testdata/"+name+".svg", svg.Bytes())
	var again bytes.Buffer
	if err := drawIt(&again, "svg"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(svg.Bytes(), again.Bytes()) {
		t.Errorf("%s: two renderings of the same input differ", name)
	}
	if err := drawIt(&pngBuf, "png"); err != nil {
		t.Fatal(err)
	}
	if *pngDir != "" {
		if err := os.WriteFile(filepath.Join(*pngDir, name+".png"), pngBuf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img, err := png.Decode(&pngBuf)
	if err != nil {
		t.Fatalf("%s: output is not a PNG: %v", name, err)
	}
	return img
}

// hasColour reports whether some pixel of img is exactly c.
func hasColour(img image.Image, c color.RGBA) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B && uint8(a>>8) == 255 {
				return true
			}
		}
	}
	return false
}

func TestGantt(t *testing.T) {
	s, tl := tinySchedule(t)
	img := renderBoth(t, "gantt-tiny", func(w *bytes.Buffer, f string) error { return Gantt(w, f, s, tl) })
	// 4 transmitter rows + 3 stages × 2 switches = 10 rows of 14 pt, plus the chrome, at 96 dpi.
	wantH := int(math.Round((10*ganttMaxRowH + ganttChrome) * pngDPI / 72.0))
	if got := img.Bounds().Dy(); got != wantH {
		t.Errorf("PNG height = %d px, want %d", got, wantH)
	}
	for name, c := range map[string]color.RGBA{
		"receiver 1": receiverColours[1], "receiver 3": receiverColours[3], "receiver 0": receiverColours[0],
		"reconfiguring": reconfigColour, "RNB wait": waitColour, "bar": barColour, "cross": crossColour,
	} {
		if !hasColour(img, c) {
			t.Errorf("no %s pixels (%v) in the PNG", name, c)
		}
	}
	// The key names every receiver's colour; rows are named as the CLI names switches; the time
	// axis has a label every 100 ns over the 800 ns run (tinySchedule), not only at 0, 400, 800.
	var svg bytes.Buffer
	if err := Gantt(&svg, "svg", s, tl); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">receiver →0<", ">→1<", ">→3<", ">0:0<", ">2:1<", ">Tx 3<", ">100<", ">700<", ">800<"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("Gantt SVG lacks %q", want)
		}
	}
	if strings.Contains(svg.String(), ">s0.0<") {
		t.Error("switch rows still named s0.0")
	}
}

func TestTimeTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (timeTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	tests := []struct {
		lo, hi float64
		want   []string
	}{
		{0, 801.9, []string{"0", "100", "200", "300", "400", "500", "600", "700", "800"}},
		{0, 0.8, []string{"0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8"}},
		{0, 487, []string{"0", "50", "100", "150", "200", "250", "300", "350", "400", "450"}},
	}
	for _, tc := range tests {
		if got := labels(tc.lo, tc.hi); !slices.Equal(got, tc.want) {
			t.Errorf("ticks over [%g, %g] = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestGanttSegments checks the layout against the hand-worked timeline of tinySchedule.
func TestGanttSegments(t *testing.T) {
	s, tl := tinySchedule(t)
	segs, names, _, err := ganttSegments(s, tl)
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"Tx 0", "Tx 1", "Tx 2", "Tx 3", "0:0", "0:1", "1:0", "1:1", "2:0", "2:1"}
	if strings.Join(names, ",") != strings.Join(wantNames, ",") {
		t.Fatalf("rows = %v, want %v", names, wantNames)
	}
	type key struct {
		row    int
		x0, x1 float64
		fill   color.RGBA
	}
	got := map[key]string{}
	for _, sg := range segs {
		got[key{sg.row, sg.x0, sg.x1, sg.fill}] = sg.label
	}
	tests := []struct {
		name  string
		k     key
		label string
	}{
		{"tx0 sends to 1", key{0, 0, 400e-9, receiverColours[1]}, "→1"},
		{"tx2 sends to 3", key{2, 0, 200e-9, receiverColours[3]}, "→3"},
		{"tx2 waits on its path", key{2, 200e-9, 400e-9, waitColour}, ""},
		{"tx2 reconfigures", key{2, 400e-9, 500e-9, reconfigColour}, ""},
		{"tx2 sends to 0", key{2, 500e-9, 800e-9, receiverColours[0]}, "→0"},
		{"0:1 bar before", key{5, 0, 400e-9, barColour}, ""},
		{"0:1 switching", key{5, 400e-9, 500e-9, reconfigColour}, ""},
		{"0:1 cross after", key{5, 500e-9, 800e-9, crossColour}, ""},
		{"2:0 cross after", key{8, 500e-9, 800e-9, crossColour}, ""},
		{"1:0 bar throughout", key{6, 0, 800e-9, barColour}, ""},
	}
	for _, tc := range tests {
		label, ok := got[tc.k]
		if !ok || label != tc.label {
			t.Errorf("%s: segment %+v missing or labelled %q (want %q)", tc.name, tc.k, label, tc.label)
		}
	}
	// 3 transmissions + 1 wait + 1 reconfiguration; 6 switches, two of which change once.
	if want := 5 + 4 + 2*3; len(segs) != want {
		t.Errorf("%d segments, want %d", len(segs), want)
	}
}

func TestGanttCrossbarHasNoSwitchRows(t *testing.T) {
	s, tl := tinySchedule(t)
	s.Fabric = schedules.Crossbar
	tl.SwitchChanges = nil
	for i := range s.Circuits {
		s.Circuits[i].Path = benes.Path{}
	}
	_, names, _, err := ganttSegments(s, tl)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 4 {
		t.Errorf("crossbar rows = %v, want the 4 transmitters only", names)
	}
}

// Above ganttAllPorts ports only the transmitters that carry traffic get a row, and the title
// says so: a 2^20-port crossbar file of one circuit drew a row per port (16.9 s, 520 MB).
func TestGanttLargeFabricRowsForTraffic(t *testing.T) {
	s, tl := tinySchedule(t)
	s.Fabric, s.N, s.Ports = schedules.Crossbar, 1<<20, 1<<20
	tl.SwitchChanges = nil
	for i := range s.Circuits {
		s.Circuits[i].Path = benes.Path{}
	}
	s.Circuits[0].Src = 1<<20 - 1
	_, names, txRows, err := ganttSegments(s, tl)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "Tx 2,Tx 1048575" || txRows != 2 {
		t.Errorf("rows = %v (%d transmitters), want Tx 2 and Tx 1048575 only", names, txRows)
	}
	var svg bytes.Buffer
	if err := Gantt(&svg, "svg", s, tl); err != nil {
		t.Fatal(err)
	}
	if want := "rows for the 2 of 1048576 transmitters that carry traffic"; !strings.Contains(svg.String(), want) {
		t.Errorf("the chart does not say %q", want)
	}
	if svg.Len() > 1<<20 {
		t.Errorf("SVG of two rows is %d bytes", svg.Len())
	}
}

func TestGanttErrors(t *testing.T) {
	tests := []struct {
		name   string
		format string
		mutate func(*schedules.Schedule, *schedules.Timeline)
		want   string
	}{
		{"bad format", "eps", func(*schedules.Schedule, *schedules.Timeline) {}, `"eps"`},
		{"circuit out of range", "svg", func(_ *schedules.Schedule, tl *schedules.Timeline) { tl.Circuits[1].Circuit = 7 }, "circuit 7"},
		{"switch out of range", "svg", func(_ *schedules.Schedule, tl *schedules.Timeline) { tl.SwitchChanges[0].Stage = 3 }, "stage 3"},
		{"src beyond ports", "svg", func(s *schedules.Schedule, _ *schedules.Timeline) { s.Ports = 2 }, "src 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, tl := tinySchedule(t)
			tc.mutate(s, tl)
			err := Gantt(&bytes.Buffer{}, tc.format, s, tl)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one mentioning %s", err, tc.want)
			}
		})
	}
	if err := Gantt(&bytes.Buffer{}, "svg", nil, nil); err == nil {
		t.Error("nil schedule: no error")
	}
}

func TestHeatmap(t *testing.T) {
	g := tinyGrid()
	img := renderBoth(t, "heatmap-tiny", func(w *bytes.Buffer, f string) error { return Heatmap(w, f, g) })
	// The largest |log ratio| is log 5.34, so that cell is fully saturated red; the missing cell is grey.
	for name, c := range map[string]color.RGBA{"5.34": slowerColour, "missing": missingColor, "1.00": evenColour} {
		if !hasColour(img, c) {
			t.Errorf("no %s cell colour %v in the PNG", name, c)
		}
	}
	var svg bytes.Buffer
	if err := Heatmap(&svg, "svg", g); err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"0.99", "1.30", "5.34", "1.00", "2.58", "100Gbps", "10ms"} {
		if !strings.Contains(svg.String(), ">"+label+"<") {
			t.Errorf("SVG has no text %q", label)
		}
	}
}

func TestRatioColour(t *testing.T) {
	logMax := math.Log(4)
	tests := []struct {
		v    float64
		want color.RGBA
	}{
		{1, evenColour},
		{4, slowerColour},
		{16, slowerColour}, // saturates
		{0.25, fasterColour},
		{2, mix(evenColour, slowerColour, 0.5)},
		{0.5, mix(evenColour, fasterColour, 0.5)},
		{math.NaN(), missingColor},
	}
	for _, tc := range tests {
		if got := RatioColour(tc.v, logMax); got != tc.want {
			t.Errorf("RatioColour(%g) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestGridCheck(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Grid)
		want   string
	}{
		{"no columns", func(g *Grid) { g.Cols = nil }, "0 columns"},
		{"missing row", func(g *Grid) { g.Values = g.Values[:1] }, "1 rows of values"},
		{"short row", func(g *Grid) { g.Values[1] = g.Values[1][:2] }, "row 1 (800Gbps)"},
		{"zero ratio", func(g *Grid) { g.Values[0][0] = 0 }, "(100Gbps, 10ns) = 0"},
		{"infinite ratio", func(g *Grid) { g.Values[0][1] = math.Inf(1) }, "+Inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := tinyGrid()
			tc.mutate(&g)
			err := Heatmap(&bytes.Buffer{}, "svg", g)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestDistribution(t *testing.T) {
	series := []Series{
		{"tetris", []float64{1.01, 1.02, 1.03, 1.05, 1.04}},
		{"bvn", []float64{1.2, 1.6, 2.5, 1.9, 1.4}},
		{"maxweight", []float64{1.06, 1.1, 1.09, 1.2, 1.08}},
	}
	img := renderBoth(t, "distribution-tiny", func(w *bytes.Buffer, f string) error {
		return Distribution(w, f, "completion / lower bound", "completion / lower bound", series)
	})
	for i := range series {
		if !hasColour(img, receiverColours[i]) {
			t.Errorf("no box filled with series %d's colour", i)
		}
	}
	// The first and last boxes keep clear of the frame: at least 40 px (half a slot; gonum's
	// default range leaves 17) between the image's y axis (its leftmost long dark vertical
	// line) and the first box, and between the last box and the right edge.
	b := img.Bounds()
	axis := -1
	for x := b.Min.X; x < b.Max.X && axis < 0; x++ {
		run := 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0x9000 && g < 0x9000 && bl < 0x9000 {
				if run++; run > b.Dy()/2 {
					axis = x
					break
				}
			} else {
				run = 0
			}
		}
	}
	first, _ := colourSpan(img, receiverColours[0])
	_, lastEnd := colourSpan(img, receiverColours[len(series)-1])
	if axis < 0 || first-axis < 40 || b.Max.X-lastEnd < 40 {
		t.Errorf("y axis at x = %d, first box from x = %d, last box to x = %d of %d: a box is on the frame", axis, first, lastEnd, b.Max.X)
	}
	for _, bad := range [][]Series{nil, {{"empty", nil}}, {{"nan", []float64{1, math.NaN()}}}} {
		if err := Distribution(&bytes.Buffer{}, "svg", "t", "y", bad); err == nil {
			t.Errorf("Distribution(%v): no error", bad)
		}
	}
}

// colourSpan is the least and greatest x of the pixels of colour c (-1, -1 when none).
func colourSpan(img image.Image, c color.RGBA) (lo, hi int) {
	lo, hi = -1, -1
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)) == c {
				if lo < 0 || x < lo {
					lo = x
				}
				hi = max(hi, x)
			}
		}
	}
	return lo, hi
}

func TestRoundEnds(t *testing.T) {
	s, tl := tinySchedule(t)
	if got := roundEnds(s, tl); got != nil {
		t.Errorf("partial mode: rules at %v, want none", got)
	}
	// As barrier rounds: round 0 (circuits 0 and 1) ends at 400 ns when its longer circuit does;
	// round 1 is the last and gets no rule.
	s.Mode = schedules.Barrier
	if got := roundEnds(s, tl); len(got) != 1 || got[0] != 400e-9 {
		t.Errorf("barrier mode: rules at %v, want [4e-07]", got)
	}
	s.Circuits[2].Group = 2 // an empty round 1 in between changes nothing: groups are sorted
	s.Circuits[1].Group = 1
	if got := roundEnds(s, tl); len(got) != 2 || got[0] != 400e-9 || got[1] != 200e-9 {
		t.Errorf("three rounds: rules at %v, want [4e-07 2e-07]", got)
	}
}

// Two grids drawn on one SharedScale paint equal ratios in equal colours, whatever each grid's
// own range (a 1.34 beside 1.67 must not look like a 6.1), and each carries the colour bar: its
// label and its top value, the largest ratio of both grids.
func TestHeatmapSharedScale(t *testing.T) {
	low := Grid{Title: "bff", Rows: []string{"a"}, Cols: []string{"x", "y"}, Values: [][]float64{{1.34, 1.67}}}
	high := Grid{Title: "bvn", Rows: []string{"a"}, Cols: []string{"x", "y"}, Values: [][]float64{{1.34, 6.1}}}
	sc := SharedScale("completion / tetris (×)", low.Values, high.Values)
	if sc.Lo != 1/minSaturation || sc.Hi != 6.1 {
		t.Fatalf("shared scale %+v, want 0.8..6.1", sc)
	}
	png := func(g Grid) image.Image {
		var b bytes.Buffer
		if err := Heatmap(&b, "png", g); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	want := RatioColour(1.34, math.Log(6.1))
	low.Scale, high.Scale = sc, sc
	for _, g := range []Grid{low, high} {
		if !hasColour(png(g), want) {
			t.Errorf("%s on the shared scale: no cell in 1.34's colour %v", g.Title, want)
		}
		var svg bytes.Buffer
		if err := Heatmap(&svg, "svg", g); err != nil {
			t.Fatal(err)
		}
		for _, label := range []string{">completion / tetris (×)<", ">6.1<", ">1<"} {
			if !strings.Contains(svg.String(), label) {
				t.Errorf("%s: SVG lacks the colour bar's %q", g.Title, label)
			}
		}
	}
	// On its own scale the low grid saturates at 1.67, and 1.34 is darker than on the shared one.
	low.Scale = Scale{}
	if own := RatioColour(1.34, math.Log(1.67)); !hasColour(png(low), own) || own == want {
		t.Errorf("own scale: 1.34 should be %v, unlike the shared %v", own, want)
	}
}

func TestBarTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []float64
	}{
		{0.8, 6.1, []float64{0.8, 1, 1.25, 1.5, 2, 3, 5, 6.1}},
		{1, 1.25, []float64{1, 1.25}},
		{0.5, 2, []float64{0.5, 2.0 / 3, 0.8, 1, 1.25, 1.5, 2}},
	}
	for _, tc := range tests {
		if got := barTicks(tc.lo, tc.hi); !slices.Equal(got, tc.want) {
			t.Errorf("barTicks(%g, %g) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}
