package plot

import (
	"testing"

	"gonum.org/v1/plot/vg"
)

// Row labels never shrink below ganttMinLabel points; thinner rows are labelled every 2nd, 4th, ...
// row so that a label never takes more height than its rows.
func TestGanttLabels(t *testing.T) {
	for _, c := range []struct {
		rowH  vg.Length
		size  vg.Length
		every int
	}{
		{20, 9, 1},  // 8 ports: room to spare
		{8, 6.4, 1}, // 0.8 of the row
		{6, 6, 1},   // at the floor, one row fits
		{3.5, 6, 2}, // 64 ports
		{1.2, 6, 8},
	} {
		size, every := ganttLabels(c.rowH)
		if size != c.size || every != c.every {
			t.Errorf("rows of %vpt: labels %vpt every %d rows, want %vpt every %d", c.rowH, size, every, c.size, c.every)
		}
		if vg.Length(every)*c.rowH < size {
			t.Errorf("rows of %vpt: a %vpt label over %d rows overlaps its neighbour", c.rowH, size, every)
		}
	}
}
