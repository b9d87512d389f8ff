package tetris

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestBestRowsEqualsGo: the all-pairs inner loop as the platform runs it (SSE2 on amd64) writes
// exactly the rows bestRowsGo writes, on times drawn the way plans make them (non-negative,
// often equal or zero, sometimes huge or subnormal), for every row length up to 512 ports.
func TestBestRowsEqualsGo(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := rapid.IntRange(1, 256).Draw(rt, "h")
		m := 2 * h
		pool := []float64{0, 1, 2.5, 1e-6, 10e-6, math.SmallestNonzeroFloat64, math.MaxFloat64, math.Inf(1)}
		draw := func(name string) uint64 {
			if rapid.Bool().Draw(rt, name+"-pooled") {
				return math.Float64bits(rapid.SampledFrom(pool).Draw(rt, name))
			}
			return math.Float64bits(rapid.Float64Range(0, 1e3).Draw(rt, name))
		}
		fill := func(name string, n int) []uint64 {
			s := make([]uint64, n)
			for i := range s {
				s[i] = draw(name)
			}
			return s
		}
		o0, o1, c0, c1 := fill("o0", m), fill("o1", m), fill("c0", h), fill("c1", h)
		r00, r01, r10, r11 := draw("r00"), draw("r01"), draw("r10"), draw("r11")
		// Rows longer than needed: nothing past 2h may be written.
		got0, got1 := fill("row0", m+3), fill("row1", m+3)
		want0, want1 := slices.Clone(got0), slices.Clone(got1)
		bestRows(got0[:m+3], got1[:m+3], o0, o1, c0, c1, r00, r01, r10, r11)
		bestRowsGo(want0[:m+3], want1[:m+3], o0, o1, c0, c1, r00, r01, r10, r11)
		if !slices.Equal(got0, want0) || !slices.Equal(got1, want1) {
			rt.Fatalf("bestRows rows\n%x\n%x\nbestRowsGo rows\n%x\n%x", got0, got1, want0, want1)
		}
		// And the definition itself, for one port: the earlier of the two children.
		j := rapid.IntRange(0, m-1).Draw(rt, "j")
		x, y := c0[j/2], c1[j/2]
		if w := min(max(r00, x, o0[j]), max(r01, y, o1[j])); got0[j] != w {
			rt.Fatalf("row0[%d] = %x, want %x", j, got0[j], w)
		}
		if w := min(max(r10, x, o0[j]), max(r11, y, o1[j])); got1[j] != w {
			rt.Fatalf("row1[%d] = %x, want %x", j, got1[j], w)
		}
	})
}
