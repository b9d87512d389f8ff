package tetris

import (
	"context"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
)

// tb is what checkSchedule needs from *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkSchedule asserts what every Tetris schedule must satisfy, against definitions that do not
// come from the planner: the verifier; one circuit per demand; planned times equal to the
// emulator's event-driven execution of the schedule under the bandwidth model (1e-9 relative);
// completion at or above both lower bounds; and, with degree coverage, exactly Δ planning
// matchings, each covering every endpoint of maximum residual degree.
func checkSchedule(t tb, d *schedules.Demand, o schedules.Options, s *schedules.Schedule) {
	t.Helper()
	if vs := schedules.Verify(s, d); len(vs) > 0 {
		t.Fatalf("verifier: %v", schedules.ViolationsError(vs))
	}
	if got, want := len(s.Circuits), len(d.Pairs()); got != want {
		t.Fatalf("%d circuits for %d demands: Tetris never splits a demand", got, want)
	}
	wantFabric := schedules.Benes
	if o.Fabric == schedules.Crossbar {
		wantFabric = schedules.Crossbar
	}
	if s.Fabric != wantFabric || (s.Mode == schedules.Barrier) != o.NoPartial {
		t.Fatalf("schedule is %s/%s for options %+v", s.Fabric, s.Mode, o)
	}
	_, tl, err := emulator.Run(context.Background(), s, d, emulator.Config{
		Transfer: emulator.BandwidthModel(o.Bandwidth), Reconfig: emulator.ParallelReconfig(o.Reconfig)})
	if err != nil {
		t.Fatalf("emulator: %v", err)
	}
	if vs := schedules.VerifyTimeline(s, tl); len(vs) > 0 {
		t.Fatalf("timeline: %v", schedules.ViolationsError(vs))
	}
	for _, ct := range tl.Circuits {
		c := s.Circuits[ct.Circuit]
		if !close9(*c.PlannedStart, ct.TransmitStart) || !close9(*c.PlannedEnd, ct.End) {
			t.Fatalf("circuit %d (%d→%d, group %d): planned %g..%g, emulated %g..%g",
				ct.Circuit, c.Src, c.Dst, c.Group, *c.PlannedStart, *c.PlannedEnd, ct.TransmitStart, ct.End)
		}
	}
	lb := schedules.LowerBound(d, o.Bandwidth, o.Reconfig)
	if c := completion(s); c < lb.Bandwidth*(1-1e-12) || c < lb.Reconfig*(1-1e-12) {
		t.Fatalf("completion %g below a lower bound %+v", c, lb)
	}
	if !o.NoDegreeCoverage {
		checkCoverage(t, d, s)
	}
}

func close9(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b), 1e-12) }

// checkCoverage replays the residual degrees group by group: group g must touch every endpoint
// whose residual degree is the maximum before it, and there must be exactly Δ groups.
func checkCoverage(t tb, d *schedules.Demand, s *schedules.Schedule) {
	t.Helper()
	n := d.N()
	deg := make([]int, 2*n)
	for i := 0; i < n; i++ {
		deg[i], deg[n+i] = d.RowDegree(i), d.ColDegree(i)
	}
	if g := s.Groups(); g != d.MaxDegree() {
		t.Fatalf("%d planning matchings, Δ = %d", g, d.MaxDegree())
	}
	lo := 0
	for g := 0; g < s.Groups(); g++ {
		hi := lo
		in := make([]bool, 2*n)
		for hi < len(s.Circuits) && s.Circuits[hi].Group == g {
			in[s.Circuits[hi].Src], in[n+s.Circuits[hi].Dst] = true, true
			hi++
		}
		delta := 0
		for _, x := range deg {
			delta = max(delta, x)
		}
		for e, x := range deg {
			if x == delta && !in[e] {
				t.Fatalf("matching %d does not cover endpoint %v of maximum residual degree %d", g, schedules.Endpoint{Port: e % n, Rx: e >= n}, delta)
			}
		}
		for _, c := range s.Circuits[lo:hi] {
			deg[c.Src]--
			deg[n+c.Dst]--
		}
		lo = hi
	}
}

// TestPropertiesRandomSkewed runs the checks on random skewed demands, n = 4..64 (powers of two
// and padded sizes), both fabrics, every ablation, α_r from zero to 1 ms.
func TestPropertiesRandomSkewed(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.SampledFrom([]int{4, 5, 6, 8, 11, 16, 23, 32, 64}).Draw(rt, "n")
		seed := rapid.Uint64().Draw(rt, "seed")
		skew := rapid.Float64Range(0, 2).Draw(rt, "skew")
		sparse := rapid.SampledFrom([]float64{0, 0.2, 0.6}).Draw(rt, "sparse")
		d := moetest.Demand(seed, n, skew, sparse)
		o := schedules.Options{
			Bandwidth: 100e9,
			Reconfig:  rapid.SampledFrom([]float64{0, 10e-9, 10e-6, 1e-3}).Draw(rt, "alpha"),
			Fabric:    rapid.SampledFrom([]schedules.FabricKind{"", schedules.Benes, schedules.Crossbar}).Draw(rt, "fabric"),
		}
		switch rapid.IntRange(0, 3).Draw(rt, "ablation") {
		case 1:
			o.NoPartial = true
		case 2:
			o.NaiveRouting = true
		case 3:
			o.NoDegreeCoverage = true
		}
		s, err := Schedule(context.Background(), d, o)
		if err != nil {
			rt.Fatal(err)
		}
		checkSchedule(rt, d, o, s)
	})
}
