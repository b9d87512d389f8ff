package calibrate

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
)

// TestPropertyFitExactOnLines: noise-free medians on any α-β line, at any sizes, come back as
// that line (no piece, no outlier), and scaling every time by k scales α and β by k.
func TestPropertyFitExactOnLines(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alpha := rapid.Float64Range(1e-7, 1e-4).Draw(t, "alpha")
		bw := rapid.Float64Range(1e9, 2e12).Draw(t, "bandwidth")
		k := rapid.Float64Range(0.1, 10).Draw(t, "scale")
		lo := rapid.Int64Range(256, 1<<20).Draw(t, "min")
		per := rapid.Float64Range(0.5, 6).Draw(t, "perOctave")
		sizes, err := GeometricSizes(lo, lo<<rapid.IntRange(3, 18).Draw(t, "octaves"), per)
		if err != nil || len(sizes) < minPiece {
			t.Skip("too few sizes")
		}
		var ms, scaled []model.Median
		for _, n := range sizes {
			s := alpha + float64(n)/bw
			ms = append(ms, model.Median{Bytes: n, Seconds: s})
			scaled = append(scaled, model.Median{Bytes: n, Seconds: k * s})
		}
		f, err := Fit(ms, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(f.Alpha/alpha-1) > 1e-6 || math.Abs(f.Beta*bw-1) > 1e-6 || len(f.Pieces) != 0 || len(f.Outliers) != 0 || f.MaxRelResidual > 1e-9 {
			t.Fatalf("fit %+v of α %g, B %g", f, alpha, bw)
		}
		g, err := Fit(scaled, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(g.Alpha/(k*f.Alpha)-1) > 1e-6 || math.Abs(g.Beta/(k*f.Beta)-1) > 1e-6 {
			t.Fatalf("scaled by %g: α %g β %g, want %g, %g", k, g.Alpha, g.Beta, k*f.Alpha, k*f.Beta)
		}
	})
}

// TestPropertyGeometricSizes: sizes start and end where asked, increase, and are 256-byte
// multiples in between.
func TestPropertyGeometricSizes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lo := rapid.Int64Range(1, 1<<30).Draw(t, "min")
		hi := lo + rapid.Int64Range(0, 1<<34).Draw(t, "span")
		per := rapid.Float64Range(0.1, 16).Draw(t, "perOctave")
		s, err := GeometricSizes(lo, hi, per)
		if err != nil {
			t.Fatal(err)
		}
		if s[0] != lo || s[len(s)-1] != hi {
			t.Fatalf("sizes %v..%v, want %d..%d", s[0], s[len(s)-1], lo, hi)
		}
		for i := 1; i < len(s); i++ {
			if s[i] <= s[i-1] || (i < len(s)-1 && s[i]%256 != 0) {
				t.Fatalf("size %d: %d after %d", i, s[i], s[i-1])
			}
		}
	})
}

// TestPropertyMedian: selection gives the median a sort gives.
func TestPropertyMedian(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.SliceOfN(rapid.Float64Range(-1e3, 1e3), 1, 200).Draw(t, "v")
		if rapid.Bool().Draw(t, "ties") {
			for i := range v {
				v[i] = math.Round(v[i] / 300)
			}
		}
		s := slices.Clone(v)
		slices.Sort(s)
		want := s[len(s)/2]
		if len(s)%2 == 0 {
			want = (s[len(s)/2-1] + s[len(s)/2]) / 2
		}
		if got := median(slices.Clone(v)); got != want {
			t.Fatalf("median(%v) = %g, want %g", v, got, want)
		}
	})
}
