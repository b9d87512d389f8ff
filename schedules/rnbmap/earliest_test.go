package rnbmap

import (
	"math"
	"testing"
)

func TestEarliestRejectsBadInput(t *testing.T) {
	f := fabric(t, 2)
	plan := []Circuit{{Src: 0, Dst: 1, Bytes: 1, Start: 0, End: 1}}
	for _, tm := range []Timing{{0, 1}, {-1, 0}, {math.Inf(1), 0}, {1, -1}, {1, math.NaN()}} {
		if _, err := EarliestPaths(f, plan, tm); err == nil {
			t.Errorf("EarliestPaths accepted timing %+v", tm)
		}
	}
	if _, err := EarliestPaths(f, []Circuit{{Src: 0, Dst: 4}}, Timing{1, 0}); err == nil {
		t.Error("EarliestPaths accepted a port out of range")
	}
}

// TestEarliestKeepsPlanOrder: circuits at one transmitter run in the plan's order, and the second
// starts only after the first ends and a switch on its path turns (α_r).
func TestEarliestKeepsPlanOrder(t *testing.T) {
	f := fabric(t, 4)
	plan := []Circuit{
		{Src: 0, Dst: 3, Bytes: 5, Start: 0, End: 6},
		{Src: 0, Dst: 2, Bytes: 1, Start: 6, End: 8},
	}
	m, err := EarliestPaths(f, plan, Timing{Bandwidth: 1, AlphaR: 1})
	if err != nil {
		t.Fatal(err)
	}
	// 0->3: one switch change from all-Bar, [1, 6). 0->2 leaves port 0 on the same lane, so a
	// switch on its path must turn after 0->3 ends: [7, 8).
	if m.Start[0] != 1 || m.End[0] != 6 || m.Start[1] != 7 || m.End[1] != 8 {
		t.Errorf("intervals [%g, %g) and [%g, %g), want [1, 6) and [7, 8)", m.Start[0], m.End[0], m.Start[1], m.End[1])
	}
}
