package schedules

import (
	"math"
	"testing"
)

func TestLowerBoundHandWorked(t *testing.T) {
	// Receiver 2 takes 30+40 = 70 B from 2 partners; transmitter 0 sends 10+40+5 = 55 B to 3.
	d, _ := DemandFromRows([][]int64{
		{0, 10, 40, 5},
		{0, 0, 30, 0},
		{0, 0, 0, 0},
		{0, 0, 0, 0},
	})
	cases := []struct {
		b, alpha           float64
		wantBW, wantReconf float64
	}{
		// At 10 B/s: bandwidth bound 70/10 = 7 s (Rx2). Reconfig: Rx2 7 + 2·α, Tx0 5.5 + 3·α
		// (every circuit, the first included, waits for a switch to leave Bar).
		{10, 0, 7, 7},
		{10, 1, 7, 9},    // Rx2: 7+2 = 9; Tx0: 5.5+3 = 8.5
		{10, 2, 7, 11.5}, // Rx2: 7+4 = 11; Tx0: 5.5+6 = 11.5
		{1e9, 1e-6, 7e-8, 3e-6 + 5.5e-8},
	}
	for _, c := range cases {
		got := LowerBound(d, c.b, c.alpha)
		if math.Abs(got.Bandwidth-c.wantBW) > 1e-12*c.wantBW || math.Abs(got.Reconfig-c.wantReconf) > 1e-12*c.wantReconf {
			t.Errorf("LowerBound(b=%g, α=%g) = %+v, want bandwidth %g, reconfig %g", c.b, c.alpha, got, c.wantBW, c.wantReconf)
		}
		if got.Max() != max(got.Bandwidth, got.Reconfig) {
			t.Errorf("Max() = %g", got.Max())
		}
	}
}

// A counted local demand may run first on the all-Bar path, so its endpoint is charged one
// reconfiguration fewer; an uncounted one changes nothing.
func TestLowerBoundLocalDemand(t *testing.T) {
	d, _ := DemandFromRows([][]int64{{10, 10}, {0, 0}})
	if got := LowerBound(d, 10, 1).Reconfig; got != 2 { // Tx0: 1 + 1·α
		t.Errorf("diagonal ignored: reconfig bound %g, want 2", got)
	}
	d.CountDiagonal = true
	// Tx0: 2 + (2−1)·α = 3; Rx0: 1 + 0·α; Rx1: 1 + 1·α.
	if got := LowerBound(d, 10, 1).Reconfig; got != 3 {
		t.Errorf("diagonal counted: reconfig bound %g, want 3", got)
	}
}

func TestLowerBoundIgnoresDiagonalByDefault(t *testing.T) {
	d, _ := DemandFromRows([][]int64{{1000, 1}, {1, 0}})
	if got := LowerBound(d, 1, 0).Bandwidth; got != 1 {
		t.Errorf("diagonal ignored: bound %g, want 1", got)
	}
	d.CountDiagonal = true
	if got := LowerBound(d, 1, 0).Bandwidth; got != 1001 {
		t.Errorf("diagonal counted: bound %g, want 1001", got)
	}
}

func TestDemandStatistics(t *testing.T) {
	d, _ := DemandFromRows([][]int64{
		{5, 10, 40, 5},
		{0, 0, 30, 0},
		{0, 0, 0, 0},
		{5, 0, 10, 0},
	})
	s := d.Statistics()
	if s.Total != 100 || s.MaxRowLoad != 55 || s.MaxColLoad != 80 || s.MaxDegree != 3 || s.NonzeroPairs != 6 {
		t.Fatalf("stats %+v", s)
	}
	if len(s.Bottlenecks) != 1 || s.Bottlenecks[0] != (Endpoint{Port: 2, Rx: true}) {
		t.Errorf("bottlenecks %v, want [Rx2]", s.Bottlenecks)
	}
	if s.Skew != 80/25.0 {
		t.Errorf("skew %g, want 3.2", s.Skew)
	}
}
