package plot

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestBarsAndLinesCheck(t *testing.T) {
	good := Bars{Title: "b", Groups: []string{"g1", "g2"}, Series: []string{"s"}, Values: [][]float64{{1, 2}}}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"bars ok", good.Check(), ""},
		{"no groups", Bars{Title: "b", Series: []string{"s"}}.Check(), "0 groups"},
		{"series count", Bars{Title: "b", Groups: []string{"g"}, Series: []string{"s", "t"}, Values: [][]float64{{1}}}.Check(), "1 series of values for 2"},
		{"short series", Bars{Title: "b", Groups: []string{"g", "h"}, Series: []string{"s"}, Values: [][]float64{{1}}}.Check(), "1 values for 2 groups"},
		{"negative", Bars{Title: "b", Groups: []string{"g"}, Series: []string{"s"}, Values: [][]float64{{-1}}}.Check(), `group "g": value -1`},
		{"lines ok", Lines{Title: "l", Series: []Line{{Name: "a", X: []float64{8, 16}, Y: []float64{1, 2}}}}.Check(), ""},
		{"no lines", Lines{Title: "l"}.Check(), "no series"},
		{"uneven", Lines{Title: "l", Series: []Line{{Name: "a", X: []float64{8}, Y: []float64{1, 2}}}}.Check(), "1 x and 2 y"},
		{"log of 0", Lines{Title: "l", LogX: true, Series: []Line{{Name: "a", X: []float64{0}, Y: []float64{1}}}}.Check(), "point 0 (0, 1)"},
		{"NaN", Lines{Title: "l", Series: []Line{{Name: "a", X: []float64{1}, Y: []float64{math.NaN()}}}}.Check(), "not drawable"},
	} {
		switch {
		case c.want == "" && c.err != nil:
			t.Errorf("%s: %v", c.name, c.err)
		case c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
}

// TestBarsAndLinesDeterministic: the same input gives the same bytes, in both formats (the ticks
// of a logarithmic axis come from a set, so their order must not depend on map iteration).
func TestBarsAndLinesDeterministic(t *testing.T) {
	b := Bars{Title: "completion", YLabel: "ms", Groups: []string{"arxiv", "book"}, Series: []string{"bvn", "tetris"},
		Values: [][]float64{{4.7, 4.6}, {2.5, 2.5}}}
	l := Lines{Title: "scaling", XLabel: "GPUs", YLabel: "ms", LogX: true,
		Series: []Line{{Name: "bvn", X: []float64{8, 16, 32}, Y: []float64{0.7, 2.6, 9.5}}, {Name: "tetris", X: []float64{8, 16, 32}, Y: []float64{0.38, 0.72, 1.35}}}}
	for _, format := range Formats {
		var first []byte
		for i := range 3 {
			var buf bytes.Buffer
			if err := BarChart(&buf, format, b); err != nil {
				t.Fatal(err)
			}
			if err := LinePlot(&buf, format, l); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = buf.Bytes()
			} else if !bytes.Equal(first, buf.Bytes()) {
				t.Fatalf("%s output differs between runs", format)
			}
		}
		if format == "svg" && (!bytes.Contains(first, []byte("arxiv")) || !bytes.Contains(first, []byte(">32<"))) {
			t.Errorf("svg lacks the group labels or the 32-GPU tick")
		}
	}
	if err := BarChart(&bytes.Buffer{}, "gif", b); err == nil {
		t.Error("gif format accepted")
	}
}
