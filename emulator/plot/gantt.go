package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tetris-hil/tetris-hil/internal/units"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Colours of the Gantt chart. Transmissions take the colour of their receiver (cycling through
// receiverColours), so a reader can follow one receiver's traffic across transmitters, as in seed
// Figure 4.
var (
	receiverColours = []color.RGBA{
		{0x4e, 0x79, 0xa7, 255}, {0xf2, 0x8e, 0x2b, 255}, {0xe1, 0x57, 0x59, 255},
		{0x76, 0xb7, 0xb2, 255}, {0x59, 0xa1, 0x4f, 255}, {0xed, 0xc9, 0x48, 255},
		{0xb0, 0x7a, 0xa1, 255}, {0xff, 0x9d, 0xa7, 255}, {0x9c, 0x75, 0x5f, 255},
		{0xba, 0xb0, 0xac, 255},
	}
	reconfigColour = color.RGBA{0x40, 0x40, 0x40, 255}
	waitColour     = color.RGBA{0xfe, 0xe3, 0x91, 255}
	barColour      = color.RGBA{0xc6, 0xdb, 0xef, 255}
	crossColour    = color.RGBA{0xfd, 0xae, 0x6b, 255}
	separatorGrey  = color.RGBA{0xbd, 0xbd, 0xbd, 255}
)

// Gantt layout, in points.
const (
	ganttWidth     = 720
	ganttMaxRowH   = 14
	ganttMinRowH   = 4
	ganttRowBudget = 1400 // total height the rows may take before each row shrinks
	ganttChrome    = 130  // title, time axis and the two legend lines
	legendHeight   = 40
	// ganttMargin keeps the row names and the last time label inside the image.
	ganttMargin = 8
)

// segment is one coloured interval on one row of a Gantt chart.
type segment struct {
	row    int // 0 is the top row
	x0, x1 float64
	fill   color.RGBA
	label  string
}

// Gantt draws one execution of s (its timeline tl) as a Gantt chart in format "svg" or "png": one
// row per transmitter showing, for each circuit, the time it waited on its path although both
// endpoints were free (an RNB conflict), the reconfiguration it waited for, and its transmission
// coloured by receiver; then, on a Beneš fabric, one row per 2×2 switch showing its state (bar or
// cross) over time and its transitions. In barrier mode dashed rules mark the end of each round.
func Gantt(w io.Writer, format string, s *schedules.Schedule, tl *schedules.Timeline) error {
	if s == nil || tl == nil {
		return fmt.Errorf("gantt: schedule and timeline are both required")
	}
	segs, names, txRows, err := ganttSegments(s, tl)
	if err != nil {
		return fmt.Errorf("gantt: %w", err)
	}
	span := tl.Completion()
	for _, ch := range tl.SwitchChanges {
		span = math.Max(span, ch.End)
	}
	if !(span > 0) {
		span = 1e-6
	}
	scale, unit := timeUnit(span)

	rows := len(names)
	rowH := vg.Length(math.Max(ganttMinRowH, math.Min(ganttMaxRowH, ganttRowBudget/float64(max(rows, 1)))))
	height := vg.Length(rows)*rowH + ganttChrome

	p := gplot.New()
	p.Title.Text = fmt.Sprintf("%s on %d×%d %s (%s): %d circuits, completion %s",
		s.Algorithm, s.N, s.N, s.Fabric, s.Mode, len(s.Circuits), units.FormatSeconds(tl.Completion()))
	if txRows < s.Ports {
		p.Title.Text += fmt.Sprintf("; rows for the %d of %d transmitters that carry traffic", txRows, s.Ports)
	}
	p.Title.TextStyle.Font.Size = 11
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "time (" + unit + ")"
	p.X.Min, p.X.Max = 0, span*scale
	p.X.Tick.Marker = timeTicks{}
	p.Y.Min, p.Y.Max = -0.5, float64(rows)-0.5
	// NominalY puts names[i] at y = i, counting upwards; the chart reads top-down.
	// Labels stay at least ganttMinLabel points: where rows are thinner (64 ports: 416 rows),
	// only every labelEvery-th row is named (Tx 0, Tx 2, ...; 0:0, 0:2, ...), so that the
	// names are readable and do not overlap.
	labelSize, labelEvery := ganttLabels(rowH)
	rev := make([]string, rows)
	for i, name := range names {
		if i%labelEvery == 0 {
			rev[rows-1-i] = name
		}
	}
	if rows > 0 {
		p.NominalY(rev...)
	}
	p.Y.Tick.Label.Font.Size = labelSize
	p.Add(&ganttRows{segs: segs, rows: rows, scale: scale, txRows: txRows, labelSize: p.Y.Tick.Label.Font.Size,
		barriers: roundEnds(s, tl)})

	legend := []legendEntry{
		{"transmit (colour = receiver)", receiverColours[0]},
		{"waiting on path (RNB)", waitColour},
		{"reconfiguring", reconfigColour},
	}
	if s.Fabric == schedules.Benes {
		legend = append(legend, legendEntry{"switch bar", barColour}, legendEntry{"switch cross", crossColour})
	}
	keys := receiverKey(s.Ports)
	return render(w, format, ganttWidth, height, func(c draw.Canvas) {
		p.Draw(draw.Crop(c, ganttMargin, -2*ganttMargin, legendHeight, -ganttMargin/2))
		drawLegend(draw.Crop(c, 0, 0, legendHeight/2, legendHeight-c.Max.Y+c.Min.Y), legend)
		drawLegend(draw.Crop(c, 0, 0, 0, legendHeight/2-c.Max.Y+c.Min.Y), keys)
	})
}

// receiverKey is the legend line that keys the transmission colours to receivers: "→0" to
// "→9", and a note where colours repeat (more than ten ports).
func receiverKey(ports int) []legendEntry {
	var keys []legendEntry
	for r := range min(ports, len(receiverColours)) {
		name := fmt.Sprintf("→%d", r)
		if ports > len(receiverColours) {
			name = fmt.Sprintf("→%d, %d, …", r, r+len(receiverColours))
		}
		if r == 0 {
			name = "receiver " + name
		}
		keys = append(keys, legendEntry{name, receiverColours[r]})
	}
	return keys
}

// timeTicks labels the time axis every 1, 2 or 5 × 10^k units, 8 to 16 labels across it, with an
// unlabelled tick between two labelled ones.
type timeTicks struct{}

func (timeTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) {
		return []gplot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/8)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(m*step) <= 16 {
			step *= m
			break
		}
	}
	var ts []gplot.Tick
	for i := math.Ceil(lo / step * 2); i*step/2 <= hi*(1+1e-9); i++ {
		v := i * step / 2
		t := gplot.Tick{Value: v}
		if int(i)%2 == 0 {
			t.Label = strconv.FormatFloat(v, 'g', 4, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// ganttMinLabel is the smallest row label, in points, that still reads on screen and paper.
const ganttMinLabel = 6

// ganttLabels is the row labels' font size for rows rowH high, and the stride of labelled rows.
func ganttLabels(rowH vg.Length) (size vg.Length, every int) {
	size = vg.Length(math.Max(ganttMinLabel, math.Min(9, float64(rowH)*0.8)))
	every = 1
	for vg.Length(every)*rowH < size {
		every *= 2
	}
	return size, every
}

// roundEnds is, in barrier mode, the end of every round but the last: the matching-wide barriers
// that seed Figure 4 shows idling the endpoints that finished early.
func roundEnds(s *schedules.Schedule, tl *schedules.Timeline) []float64 {
	if s.Mode != schedules.Barrier {
		return nil
	}
	ends := map[int]float64{}
	for _, ct := range tl.Circuits {
		if ct.Circuit >= 0 && ct.Circuit < len(s.Circuits) {
			g := s.Circuits[ct.Circuit].Group
			ends[g] = math.Max(ends[g], ct.End)
		}
	}
	var gs []int
	for g := range ends {
		gs = append(gs, g)
	}
	slices.Sort(gs)
	var out []float64
	for _, g := range gs[:max(len(gs)-1, 0)] {
		out = append(out, ends[g])
	}
	return out
}

// ganttAllPorts is the most ports for which every transmitter gets a row, idle ones empty;
// above it only the transmitters that carry traffic do.
const ganttAllPorts = 256

// ganttSegments lays out the rows: the transmitters (txRows of them, in port order), then every
// switch in stage order. Up to ganttAllPorts ports every port has a row; above, only the ports
// that are the source of a circuit in tl, so that a large fabric with little traffic (a crossbar
// file of one circuit at 2^20 ports) draws rows for its traffic, not for its size.
func ganttSegments(s *schedules.Schedule, tl *schedules.Timeline) (segs []segment, names []string, txRows int, err error) {
	rowOf := map[int]int{}
	if s.Ports <= ganttAllPorts {
		for t := 0; t < s.Ports; t++ {
			rowOf[t] = 0
		}
	}
	for k, ct := range tl.Circuits {
		if ct.Circuit < 0 || ct.Circuit >= len(s.Circuits) {
			return nil, nil, 0, fmt.Errorf("timeline circuit %d refers to circuit %d of a %d-circuit schedule",
				k, ct.Circuit, len(s.Circuits))
		}
		c := s.Circuits[ct.Circuit]
		if c.Src < 0 || c.Src >= s.Ports {
			return nil, nil, 0, fmt.Errorf("circuit %d: src %d is not a port in [0, %d)", ct.Circuit, c.Src, s.Ports)
		}
		rowOf[c.Src] = 0
	}
	srcs := make([]int, 0, len(rowOf))
	for src := range rowOf {
		srcs = append(srcs, src)
	}
	slices.Sort(srcs)
	for i, src := range srcs {
		rowOf[src] = i
		names = append(names, fmt.Sprintf("Tx %d", src))
	}
	txRows = len(srcs)
	for _, ct := range tl.Circuits {
		c := s.Circuits[ct.Circuit]
		row := rowOf[c.Src]
		if ct.PathReady > ct.Ready {
			segs = append(segs, segment{row: row, x0: ct.Ready, x1: ct.PathReady, fill: waitColour})
		}
		if ct.TransmitStart > ct.ReconfigStart {
			segs = append(segs, segment{row: row, x0: ct.ReconfigStart, x1: ct.TransmitStart, fill: reconfigColour})
		}
		segs = append(segs, segment{row: row, x0: ct.TransmitStart, x1: ct.End,
			fill: receiverColours[c.Dst%len(receiverColours)], label: fmt.Sprintf("→%d", c.Dst)})
	}
	if s.Fabric != schedules.Benes {
		return segs, names, txRows, nil
	}
	f, err := benes.New(s.N)
	if err != nil {
		return nil, nil, 0, err
	}
	changes := make([][]schedules.SwitchChange, f.NumSwitches())
	for _, ch := range tl.SwitchChanges {
		stage, sw := int(ch.Stage), int(ch.Switch)
		if stage < 0 || stage >= f.Stages() || sw < 0 || sw >= f.SwitchesPerStage() {
			return nil, nil, 0, fmt.Errorf("switch change at stage %d switch %d is outside the %d-port fabric",
				ch.Stage, ch.Switch, s.N)
		}
		id := f.SwitchID(stage, sw)
		changes[id] = append(changes[id], ch)
	}
	end := tl.Completion()
	for _, ch := range tl.SwitchChanges {
		end = math.Max(end, ch.End)
	}
	for st := 0; st < f.Stages(); st++ {
		for sw := 0; sw < f.SwitchesPerStage(); sw++ {
			row := len(names)
			names = append(names, fmt.Sprintf("%d:%d", st, sw)) // as tetris-hil switch set names it
			chs := changes[f.SwitchID(st, sw)]
			slices.SortStableFunc(chs, func(a, b schedules.SwitchChange) int { return cmpFloat(a.Start, b.Start) })
			at, state := 0.0, benes.Bar
			for _, ch := range chs {
				segs = append(segs, stateSegment(row, at, ch.Start, state),
					segment{row: row, x0: ch.Start, x1: ch.End, fill: reconfigColour})
				at, state = ch.End, ch.To
			}
			segs = append(segs, stateSegment(row, at, end, state))
		}
	}
	return segs, names, txRows, nil
}

func stateSegment(row int, x0, x1 float64, st benes.State) segment {
	if st == benes.Cross {
		return segment{row: row, x0: x0, x1: x1, fill: crossColour}
	}
	return segment{row: row, x0: x0, x1: x1, fill: barColour}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ganttRows is the gonum plotter that draws the segments; row 0 is drawn at the top.
type ganttRows struct {
	segs      []segment
	rows      int
	txRows    int
	scale     float64
	labelSize vg.Length
	barriers  []float64 // times of dashed vertical rules
}

func (g *ganttRows) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	y := func(row int) float64 { return float64(g.rows - 1 - row) }
	for _, s := range g.segs {
		if !(s.x1 > s.x0) {
			continue
		}
		yc := y(s.row)
		rect(c, trX, trY, s.x0*g.scale, s.x1*g.scale, yc-0.38, yc+0.38, s.fill)
		if s.label == "" {
			continue
		}
		sty := textStyle(g.labelSize*0.9, labelColour(s.fill))
		if trX(s.x1*g.scale)-trX(s.x0*g.scale) > sty.Width(s.label)+2 {
			c.FillText(sty, vg.Point{X: (trX(s.x0*g.scale) + trX(s.x1*g.scale)) / 2, Y: trY(yc)}, s.label)
		}
	}
	dashed := draw.LineStyle{Color: color.Gray{Y: 0x50}, Width: vg.Points(0.75), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	for _, x := range g.barriers {
		c.StrokeLine2(dashed, trX(x*g.scale), c.Min.Y, trX(x*g.scale), c.Max.Y)
	}
	if g.rows > g.txRows && g.txRows > 0 {
		// A rule between the transmitter rows and the switch rows.
		ys := trY(y(g.txRows) + 0.5)
		c.StrokeLine2(draw.LineStyle{Color: separatorGrey, Width: vg.Points(0.75)}, c.Min.X, ys, c.Max.X, ys)
	}
}

// legendEntry is one swatch and its caption.
type legendEntry struct {
	name string
	fill color.RGBA
}

// drawLegend lays the entries out left to right on one line, centred vertically in c.
func drawLegend(c draw.Canvas, entries []legendEntry) {
	sty := textStyle(9, color.Black)
	sty.XAlign = draw.XLeft
	x := c.Min.X + 12
	yc := (c.Min.Y + c.Max.Y) / 2
	for _, e := range entries {
		c.FillPolygon(e.fill, []vg.Point{{X: x, Y: yc - 4}, {X: x + 12, Y: yc - 4}, {X: x + 12, Y: yc + 4}, {X: x, Y: yc + 4}})
		c.FillText(sty, vg.Point{X: x + 16, Y: yc}, e.name)
		x += 16 + sty.Width(e.name) + 18
	}
}
