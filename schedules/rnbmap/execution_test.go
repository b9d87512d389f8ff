package rnbmap_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/bff"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
	"github.com/tetris-hil/tetris-hil/schedules/rnbmap"
	"github.com/tetris-hil/tetris-hil/schedules/sunflow"
	"github.com/tetris-hil/tetris-hil/schedules/trace"
)

// TestExecutionOfSNBPlans runs Sunflow's (in both orders) and BFF's schedules of the built-in
// trace and two padded MoE-like demands through the emulator at the seed's defaults. On the
// crossbar the execution must be the plan itself, circuit by circuit: both start a circuit when
// the later of the previous circuits on its two ports ends, and the crossbar re-points the
// transmitter (α_r) exactly then. On the Beneš fabric the execution must verify and, like every
// execution, end no earlier than both lower bounds. (It is not always later than the crossbar's:
// a circuit whose path finds its switches already set transmits without paying α_r.) Under the
// default Earliest mapping each circuit's planned transmission on the Beneš fabric must be the
// emulated one: the mapping commits circuits with the executor's own rule.
func TestExecutionOfSNBPlans(t *testing.T) {
	tr, err := trace.Default()
	if err != nil {
		t.Fatal(err)
	}
	demands := map[string]*schedules.Demand{
		"skewed n=12": moetest.Skewed(3, 12),
		"skewed n=24": moetest.Skewed(4, 24),
	}
	for i := range tr.Matrices {
		demands[fmt.Sprintf("built-in %d %s", i, tr.Matrices[i].Label())] = tr.Matrices[i].Demand()
	}
	planners := []struct {
		name     string
		schedule schedules.SchedulerFunc
		bySize   bool
	}{
		{"sunflow", sunflow.Schedule, false},
		{"sunflow by size", sunflow.Schedule, true},
		{"bff", bff.Schedule, false},
	}
	const b, alpha = 100e9, 10e-6
	cfg := emulator.Config{Transfer: emulator.BandwidthModel(b), Reconfig: emulator.ParallelReconfig(alpha)}
	for name, d := range demands {
		for _, p := range planners {
			for _, fabric := range []schedules.FabricKind{schedules.Crossbar, schedules.Benes} {
				o := schedules.Options{Bandwidth: b, Reconfig: alpha, Fabric: fabric, SunflowBySize: p.bySize}
				s, err := p.schedule(context.Background(), d, o)
				if err != nil {
					t.Fatal(err)
				}
				if vs := schedules.Verify(s, d); len(vs) != 0 {
					t.Fatalf("%s, %s on %s: %v", name, p.name, fabric, schedules.ViolationsError(vs))
				}
				res, tl, err := emulator.Run(context.Background(), s, d, cfg)
				if err != nil {
					t.Fatalf("%s, %s on %s: %v", name, p.name, fabric, err)
				}
				if vs := schedules.VerifyTimeline(s, tl); len(vs) != 0 {
					t.Fatalf("%s, %s on %s: timeline: %v", name, p.name, fabric, schedules.ViolationsError(vs))
				}
				if res.Completion < res.Bounds.Max()*(1-1e-12) {
					t.Fatalf("%s, %s on %s: completion %g below the lower bounds %+v", name, p.name, fabric, res.Completion, res.Bounds)
				}
				if fabric != schedules.Crossbar {
					if s.Params.Options["rnb_mapping"] != string(rnbmap.Earliest) {
						t.Fatalf("%s, %s: default mapping %q, want earliest", name, p.name, s.Params.Options["rnb_mapping"])
					}
					for _, ct := range tl.Circuits {
						c := s.Circuits[ct.Circuit]
						if !near(ct.TransmitStart, *c.PlannedStart) || !near(ct.End, *c.PlannedEnd) {
							t.Fatalf("%s, %s on Beneš (earliest): circuit %d (%d->%d) sent [%g, %g), planned [%g, %g)",
								name, p.name, ct.Circuit, c.Src, c.Dst, ct.TransmitStart, ct.End, *c.PlannedStart, *c.PlannedEnd)
						}
					}
					continue
				}
				for _, ct := range tl.Circuits {
					c := s.Circuits[ct.Circuit]
					if !near(ct.Ready, *c.PlannedStart) || !near(ct.End, *c.PlannedEnd) {
						t.Fatalf("%s, %s on the crossbar: circuit %d (%d->%d) ran [%g, %g), planned [%g, %g)",
							name, p.name, ct.Circuit, c.Src, c.Dst, ct.Ready, ct.End, *c.PlannedStart, *c.PlannedEnd)
					}
				}
			}
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1e-9, math.Abs(b)) }
