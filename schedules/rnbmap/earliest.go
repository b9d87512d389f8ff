package rnbmap

import (
	"fmt"
	"math"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Timing is what Earliest needs to re-time a plan: the per-port bandwidth (bytes per second,
// > 0) that turns a circuit's bytes into its transmission time, and α_r (seconds, ≥ 0). Looping
// and AvoidLive read only the plan's intervals and ignore it.
type Timing struct {
	Bandwidth, AlphaR float64
}

// EarliestPaths gives every circuit of plan a path through f, and new planned times, with the
// Earliest strategy: the circuits are taken in the plan's order of planned start (StartOrder,
// ties in creation order), and each in turn is routed on its own with the earliest-start query
// Tetris uses (benes.Plan.Query: over all n/2 paths, the least Start(S,p) = max over the path's
// traversals of input-lane, output-lane and switch-state readiness, Tetris §3.3; ties to the
// fewest switch state changes, then the smallest choices, a fixed enumeration order), and
// committed to the planning state S as Tetris commits a circuit: it transmits over [Start(S,p),
// Start(S,p) + bytes/b) and its switches take their new states. The plan's order is kept; its
// times are not, because on the Beneš fabric a circuit can start only when its path is ready.
// Since S is the executor's rule run in planning, the times equal the emulated ones under the
// bandwidth model and parallel reconfiguration at t.
//
// It returns an error for a port out of range or a timing that is not positive bandwidth and
// non-negative α_r.
func EarliestPaths(f *benes.Fabric, plan []Circuit, t Timing) (Mapping, error) {
	if err := checkPorts(f, plan); err != nil {
		return Mapping{}, err
	}
	if !(t.Bandwidth > 0) || math.IsInf(t.Bandwidth, 0) || !(t.AlphaR >= 0) || math.IsInf(t.AlphaR, 0) {
		return Mapping{}, fmt.Errorf("rnbmap: earliest mapping needs a positive bandwidth and a non-negative α_r, got %g B/s and %g s", t.Bandwidth, t.AlphaR)
	}
	m := Mapping{
		Paths: make([]benes.Path, len(plan)),
		Start: make([]float64, len(plan)),
		End:   make([]float64, len(plan)),
	}
	s := benes.NewPlan(f, t.AlphaR)
	for _, i := range StartOrder(plan) {
		c := plan[i]
		choices, start, _ := s.Query(c.Src, c.Dst)
		end := start + float64(c.Bytes)/t.Bandwidth
		s.Commit(c.Src, c.Dst, choices, start, end)
		m.Paths[i] = f.NewPath(c.Src, c.Dst, choices)
		m.Start[i], m.End[i] = start, end
	}
	return m, nil
}
