package units

import (
	"math"
	"strconv"
)

// Column is the unit of one table column of times, so that its heading names the unit and its
// cells hold bare numbers (awk reads them as they are): the largest magnitude has at most four
// digits before the point, and the smallest nonzero one keeps four significant digits.
type Column struct {
	Unit     string
	scale    float64
	decimals int
}

// SecondsColumn chooses the column's unit and decimals for the times vs (seconds; signs ignored).
func SecondsColumn(vs []float64) Column {
	hi, lo := 0.0, math.Inf(1)
	for _, v := range vs {
		if v = math.Abs(v); v > 0 {
			hi, lo = max(hi, v), min(lo, v)
		}
	}
	c := Column{Unit: "s", scale: 1}
	switch {
	case hi == 0:
		return c
	case hi < 1e-6:
		c.Unit, c.scale = "ns", 1e9
	case hi < 1e-3:
		c.Unit, c.scale = "µs", 1e6
	case hi < 1:
		c.Unit, c.scale = "ms", 1e3
	}
	c.decimals = min(6, max(0, 3-int(math.Floor(math.Log10(lo*c.scale)))))
	return c
}

// Format writes v (seconds) in the column's unit.
func (c Column) Format(v float64) string {
	return strconv.FormatFloat(v*c.scale, 'f', c.decimals, 64)
}

// Signed is Format with a + before a value that is not negative.
func (c Column) Signed(v float64) string {
	if v < 0 {
		return c.Format(v)
	}
	return "+" + c.Format(v)
}
