package calibrate

import (
	"fmt"
	"math"
)

// GeometricSizes returns sizes from lo to hi (both included), perOctave per doubling, those in
// between rounded to a multiple of 256 bytes (aligned for the SM copy kernel's 16-byte accesses),
// increasing.
func GeometricSizes(lo, hi int64, perOctave float64) ([]int64, error) {
	if lo <= 0 || hi < lo || !(perOctave > 0) || perOctave > 64 {
		return nil, fmt.Errorf("sizes %d..%d at %g per octave: want 0 < min <= max and 0 < per octave <= 64", lo, hi, perOctave)
	}
	steps := max(1, int(math.Round(math.Log2(float64(hi)/float64(lo))*perOctave)))
	out := []int64{lo}
	for k := 1; k < steps; k++ {
		s := float64(lo) * math.Pow(float64(hi)/float64(lo), float64(k)/float64(steps))
		if n := int64(math.Round(s/256)) * 256; n > out[len(out)-1] && n < hi {
			out = append(out, n)
		}
	}
	if hi > lo {
		out = append(out, hi)
	}
	return out, nil
}
