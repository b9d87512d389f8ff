package plot_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tetris-hil/tetris-hil/emulator/plot"
)

// A speedup grid in the layout of Tetris Figure 8: rows bandwidth, columns α_r.
func ExampleHeatmap() {
	g := plot.Grid{
		Title:    "BvN / Tetris completion",
		RowTitle: "bandwidth",
		ColTitle: "reconfiguration delay α_r",
		Rows:     []string{"800Gbps"},
		Cols:     []string{"10ns", "100us", "1ms", "10ms"},
		Values:   [][]float64{{0.99, 2.58, 5.55, 6.60}},
	}
	var svg bytes.Buffer
	if err := plot.Heatmap(&svg, "svg", g); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Contains(svg.String(), ">5.55<"), strings.Contains(svg.String(), ">6.60<"))
	// Output: true true
}

// The completion-over-lower-bound distribution of Tetris Figure 7(b).
func ExampleDistribution() {
	var png bytes.Buffer
	err := plot.Distribution(&png, "png", "completion / lower bound", "ratio", []plot.Series{
		{Name: "tetris", Values: []float64{1.0, 1.02, 1.05}},
		{Name: "bvn", Values: []float64{1.3, 1.9, 2.4}},
	})
	fmt.Println(err, bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")))
	// Output: <nil> true
}

// Completion per workload, one bar per scheduler: the layout of Tetris Figure 7(a).
func ExampleBarChart() {
	var svg bytes.Buffer
	err := plot.BarChart(&svg, "svg", plot.Bars{
		Title: "completion per workload", YLabel: "ms",
		Groups: []string{"arxiv", "github"}, Series: []string{"bvn", "tetris"},
		Values: [][]float64{{4.7, 4.8}, {2.5, 2.7}},
	})
	fmt.Println(err, strings.Contains(svg.String(), ">github<"))
	// Output: <nil> true
}

// Completion against fabric size on a base-2 axis: the layout of Tetris Figure 9.
func ExampleLinePlot() {
	var png bytes.Buffer
	err := plot.LinePlot(&png, "png", plot.Lines{
		Title: "mean completion per matrix", XLabel: "GPUs", YLabel: "ms", LogX: true,
		Series: []plot.Line{{Name: "tetris", X: []float64{8, 16, 32}, Y: []float64{0.38, 0.72, 1.35}}},
	})
	fmt.Println(err, bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")))
	// Output: <nil> true
}
