package hil

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// DiffOf: the median and p99 are magnitudes of the differences, ordered, and the worst is the
// difference of largest magnitude, sign kept.
func TestDiffOfProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ds := rapid.SliceOfN(rapid.Float64Range(-1, 1), 1, 300).Draw(t, "ds")
		d := DiffOf(ds)
		maxAbs := 0.0
		for _, x := range ds {
			maxAbs = max(maxAbs, math.Abs(x))
		}
		if !(0 <= d.Median && d.Median <= d.P99 && d.P99 <= maxAbs) {
			t.Fatalf("median %g, p99 %g, max |d| %g", d.Median, d.P99, maxAbs)
		}
		if math.Abs(d.Worst) != maxAbs || !slices.Contains(ds, d.Worst) {
			t.Fatalf("worst %g, max |d| %g", d.Worst, maxAbs)
		}
	})
}

// SerialControllerModel: commands are served one at a time in order of request, each taking
// k·T_r + T_w, so they never overlap, never start before their request, and an idle controller
// starts at once.
func TestSerialControllerModelProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := rapid.Float64Range(0, 1e-2).Draw(t, "tr")
		tw := rapid.Float64Range(0, 1e-2).Draw(t, "tw")
		rc := SerialControllerModel(tr, tw).NewReconfigurer()
		n := rapid.IntRange(1, 50).Draw(t, "n")
		req, prevEnd := 0.0, math.Inf(-1)
		for i := 0; i < n; i++ {
			req += rapid.Float64Range(0, 2e-2).Draw(t, "gap")
			k := rapid.IntRange(1, 20).Draw(t, "k")
			start, end := rc.Command(req, k)
			if start < req || start < prevEnd-1e-12 || math.Abs(end-start-(float64(k)*tr+tw)) > 1e-12 {
				t.Fatalf("command %d (request %g, %d changes): %g..%g after a command ending %g", i, req, k, start, end, prevEnd)
			}
			if prevEnd <= req && start != req {
				t.Fatalf("command %d: the controller was idle at %g but started at %g", i, req, start)
			}
			prevEnd = end
		}
	})
}
