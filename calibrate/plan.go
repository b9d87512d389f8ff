package calibrate

import (
	"fmt"
	"math"
	"slices"
)

// GeometricSizes returns sizes from min to max (both included), perOctave per doubling, each
// rounded to a multiple of 256 bytes (aligned for the SM copy kernel's 16-byte accesses) and
// distinct.
func GeometricSizes(min, max int64, perOctave float64) ([]int64, error) {
	if min <= 0 || max < min || !(perOctave > 0) || perOctave > 64 {
		return nil, fmt.Errorf("sizes %d..%d at %g per octave: want 0 < min <= max and 0 < per octave <= 64", min, max, perOctave)
	}
	steps := int(math.Round(math.Log2(float64(max)/float64(min)) * perOctave))
	var out []int64
	for k := 0; k <= steps; k++ {
		s := float64(min) * math.Pow(float64(max)/float64(min), float64(k)/float64(max1(steps)))
		n := int64(math.Round(s/256)) * 256
		if k == 0 {
			n = min
		}
		if k == steps {
			n = max
		}
		if n < min {
			n = min
		}
		if len(out) == 0 || n > out[len(out)-1] {
			out = append(out, n)
		}
	}
	return slices.Clip(out), nil
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}
