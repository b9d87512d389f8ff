package plot

import (
	"io"
	"testing"
)

// BenchmarkGantt draws the hand-made 4-port chart; most of the time is the fixed cost of a page
// (axes, fonts, and for PNG rasterising 960×340 pixels).
func BenchmarkGantt(b *testing.B) {
	s, tl := tinySchedule(b)
	for _, format := range Formats {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				if err := Gantt(io.Discard, format, s, tl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHeatmap draws a Figure 8 grid: 4 bandwidths × 7 delays.
func BenchmarkHeatmap(b *testing.B) {
	g := Grid{Title: "bvn / tetris", RowTitle: "bandwidth", ColTitle: "α_r",
		Rows: []string{"100Gbps", "200Gbps", "400Gbps", "800Gbps"},
		Cols: []string{"10ns", "100ns", "1µs", "10µs", "100µs", "1ms", "10ms"}}
	for range g.Rows {
		g.Values = append(g.Values, []float64{1, 1.01, 1.03, 1.3, 2.9, 5.3, 5.9})
	}
	for _, format := range Formats {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				if err := Heatmap(io.Discard, format, g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
