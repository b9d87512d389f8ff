// Package rnbmap puts the plans of partial-reconfiguration schedulers that assume a strictly
// non-blocking (SNB) fabric, Sunflow and BFF, onto the rearrangeably non-blocking Beneš fabric
// (Tetris §2.3, §4.1).
//
// Those schedulers only track when transmitters and receivers are free; they never model the
// fabric's internal 2×2 switches. Tetris §4.1 executes "all schedules over the same Beneš
// interconnect" under "the same RNB routing constraints", without saying how a path is picked for
// a planner that never picked one; the three strategies here are three readings of that.
//
// Earliest (the default): the plan's circuits, in the plan's order (planned start, ties in
// creation order), are routed one at a time with the earliest-start path query Tetris itself
// uses (Tetris §3.3's Start(S,p) over all n/2 paths, benes.Plan.Query) and committed to the
// planning state as Tetris commits a circuit, so each starts as soon as its endpoints and some
// path of it are ready. The plan decides which circuits run and in what order; the fabric decides
// when. This gives the SNB planners the fabric knowledge a mapper can give without changing their
// decisions, and gives the shape of Tetris Figure 8(b, c), a gap to Tetris that grows with α_r to
// about 1.3× (on the built-in trace Sunflow is 1.18× Tetris at 10 ns and 1.30× at 10 ms; the
// paper has 1.06–1.07× at cheap reconfiguration, where our Sunflow plan is 1.09× even on the
// crossbar).
//
// Looping: when a circuit starts in the plan, the set of circuits the plan has live at that
// instant (the new circuit included) is a partial permutation; it is routed with the looping
// algorithm, and the new circuit keeps the path it got in that routing. Circuits already running
// keep the paths they were given earlier, so the routing at one instant can disagree with theirs:
// that disagreement is exactly what execution then pays for.
//
// AvoidLive: the new circuit takes, among its n/2 paths, one that shares no lane with a circuit
// live at its start and needs no switch such a circuit uses in the other state, given the paths
// those circuits already hold; among those, the one with the fewest state changes from the states
// the previously mapped circuits left, then the smallest choices. When no path is free it takes
// the looping path and is counted as a fallback. It asks what a mapper that remembers its own
// earlier paths, but not when switches are ready, would give these planners.
//
// Looping and AvoidLive read only the plan's intervals and keep them as planned times; Earliest
// re-times the circuits, and its times are the executed ones.
package rnbmap

import (
	"cmp"
	"fmt"
	"slices"
)

// Circuit is one circuit of a plan made on a non-blocking model: Src sends Bytes to Dst over the
// planned interval [Start, End), which includes the reconfiguration delay the planner charged.
type Circuit struct {
	Src, Dst int
	Bytes    int64
	// Group is the planner's own index for the step that created the circuit (documented by
	// each planner); it is copied to the schedule unchanged.
	Group      int
	Start, End float64
}

// StartOrder returns the indices of plan in order of planned start, ties broken by position in
// plan (the planner's creation order). This is the order the schedule lists circuits in, so
// every port and every switch is used in the order the plan uses it.
func StartOrder(plan []Circuit) []int {
	idx := make([]int, len(plan))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(plan[a].Start, plan[b].Start) })
	return idx
}

// CheckPlan reports the first way plan fails to be a non-blocking plan on ports ports: a port out
// of range, a circuit that ends before it starts, or a transmitter or receiver in two circuits
// whose planned intervals overlap. On such a plan the live set at every instant is a partial
// permutation, which is what routing needs.
func CheckPlan(plan []Circuit, ports int) error {
	for i, c := range plan {
		if c.Src < 0 || c.Src >= ports || c.Dst < 0 || c.Dst >= ports {
			return fmt.Errorf("circuit %d (%d->%d): port out of range [0, %d)", i, c.Src, c.Dst, ports)
		}
		if !(c.End >= c.Start) || c.Start < 0 {
			return fmt.Errorf("circuit %d (%d->%d): planned interval [%g, %g) is not an interval from t ≥ 0",
				i, c.Src, c.Dst, c.Start, c.End)
		}
	}
	for _, rx := range []bool{false, true} {
		byPort := make([][]int, ports)
		for i, c := range plan {
			p := c.Src
			if rx {
				p = c.Dst
			}
			byPort[p] = append(byPort[p], i)
		}
		for p, is := range byPort {
			slices.SortStableFunc(is, func(a, b int) int { return cmp.Compare(plan[a].Start, plan[b].Start) })
			for k := 1; k < len(is); k++ {
				a, b := plan[is[k-1]], plan[is[k]]
				if b.Start < a.End || b.Start == a.Start {
					side := "transmitter"
					if rx {
						side = "receiver"
					}
					return fmt.Errorf("%s %d: circuit %d (%d->%d, [%g, %g)) overlaps circuit %d (%d->%d, [%g, %g))",
						side, p, is[k-1], a.Src, a.Dst, a.Start, a.End, is[k], b.Src, b.Dst, b.Start, b.End)
				}
			}
		}
	}
	return nil
}
