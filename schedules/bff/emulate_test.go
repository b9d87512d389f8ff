package bff

import (
	"context"
	"fmt"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
	"math"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

// testDemands are the built-in trace's matrices and two seeded skewed ones with idle padding.
func testDemands(t *testing.T) map[string]*schedules.Demand {
	t.Helper()
	tr, err := trace.Default()
	if err != nil {
		t.Fatal(err)
	}
	ds := map[string]*schedules.Demand{}
	for i := range tr.Matrices {
		ds[fmt.Sprintf("built-in %d %s", i, tr.Matrices[i].Label())] = tr.Matrices[i].Demand()
	}
	ds["skewed n=12"] = moetest.Skewed(3, 12)
	ds["skewed n=24"] = moetest.Skewed(4, 24)
	return ds
}

// TestExecution runs every test demand through the emulator at the seed's defaults. On the
// crossbar the execution must be the plan itself, circuit by circuit: BFF places a circuit at the
// end of the later of the previous circuits on its two ports (or at 0), and the crossbar
// re-points the transmitter (α_r) exactly then. On the Beneš fabric the execution must verify
// and, like every execution, end no earlier than both lower bounds. (It is not always later than
// the crossbar's: a circuit whose path finds its switches already set transmits without paying
// α_r.)
func TestExecution(t *testing.T) {
	const b, alpha = 100e9, 10e-6
	cfg := emulator.Config{Transfer: emulator.BandwidthModel(b), Reconfig: emulator.ParallelReconfig(alpha)}
	for name, d := range testDemands(t) {
		for _, fabric := range []schedules.FabricKind{schedules.Crossbar, schedules.Benes} {
			s, err := Schedule(context.Background(), d, schedules.Options{Bandwidth: b, Reconfig: alpha, Fabric: fabric})
			if err != nil {
				t.Fatal(err)
			}
			if vs := schedules.Verify(s, d); len(vs) != 0 {
				t.Fatalf("%s %s: %v", name, fabric, schedules.ViolationsError(vs))
			}
			res, tl, err := emulator.Run(context.Background(), s, d, cfg)
			if err != nil {
				t.Fatalf("%s %s: %v", name, fabric, err)
			}
			if vs := schedules.VerifyTimeline(s, tl); len(vs) != 0 {
				t.Fatalf("%s %s: timeline: %v", name, fabric, schedules.ViolationsError(vs))
			}
			if res.Completion < res.Bounds.Max()*(1-1e-12) {
				t.Fatalf("%s %s: completion %g below the lower bounds %+v", name, fabric, res.Completion, res.Bounds)
			}
			if fabric != schedules.Crossbar {
				continue
			}
			for _, ct := range tl.Circuits {
				c := s.Circuits[ct.Circuit]
				if !near(ct.Ready, *c.PlannedStart) || !near(ct.End, *c.PlannedEnd) {
					t.Fatalf("%s crossbar: circuit %d (%d->%d) ran [%g, %g), planned [%g, %g)",
						name, ct.Circuit, c.Src, c.Dst, ct.Ready, ct.End, *c.PlannedStart, *c.PlannedEnd)
				}
			}
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1e-9, math.Abs(b)) }
