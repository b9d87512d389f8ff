// Package bff is Best First Fit (Liu, Gong, Yang, Xu, Fortnow, "Best First Fit (BFF): An Approach
// to Partially Reconfigurable Hybrid Circuit and Packet Switching", IEEE CLOUD 2018, pp. 426–433;
// arXiv 1712.06634), one of the Tetris paper's partial-reconfiguration baselines (§2.3, §4.1).
//
// This is a reading, not a transcription. The paper's full text is not in the public material
// this project could search (see README.md here for what was searched and found); the Tetris paper says
// only that BFF tracks when individual transmitters and receivers become free, assigns them new
// connections, assumes a strictly non-blocking fabric, and charges the reconfiguration delay only
// to the ports being reconfigured. The algorithm below is the one its name gives, first-fit
// decreasing:
//
//   - take the demand entries in decreasing size, equal sizes in (src, dst) order;
//   - place each as one circuit of duration α_r + bytes/b at the earliest time t at which both its
//     transmitter and its receiver are free for the whole of [t, t + α_r + bytes/b), including a
//     gap between circuits placed earlier when the gap is long enough;
//   - α_r is paid by that circuit's two ports only; no other port or circuit waits for it.
//
// Each entry becomes one schedule circuit in partial mode. Circuits that start at the same planned
// instant form a partial matching (all are live then); a circuit's Group is the rank of its start
// among the plan's distinct start times. On the Beneš fabric each circuit gets its path from
// package rnbmap.
package bff

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/rnbmap"
)

// Name is the name BFF is registered under.
const Name = "bff"

func init() {
	schedules.Register(Name,
		"Best First Fit (CLOUD 2018), read as first-fit decreasing on port timelines; SNB plan mapped onto the fabric",
		schedules.SchedulerFunc(Schedule))
}

// Schedule plans d with BFF and lays the plan out on the fabric o asks for (Beneš unless
// o.Fabric is crossbar).
func Schedule(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("bff: %w", err)
	}
	plan, err := Plan(ctx, d, o.Bandwidth, o.Reconfig)
	if err != nil {
		return nil, err
	}
	s, err := rnbmap.Schedule(Name, d, o, plan, map[string]string{"reading": "first-fit-decreasing"})
	if err != nil {
		return nil, fmt.Errorf("bff: %w", err)
	}
	return s, nil
}

// Plan returns BFF's circuits for d in placement order (decreasing size) at per-port bandwidth
// bandwidth (bytes/s) and reconfiguration delay alphaR (s).
func Plan(ctx context.Context, d *schedules.Demand, bandwidth, alphaR float64) ([]rnbmap.Circuit, error) {
	if !(bandwidth > 0) || !(alphaR >= 0) {
		return nil, fmt.Errorf("bff: bandwidth %g bytes/s must be positive and reconfiguration delay %g s non-negative",
			bandwidth, alphaR)
	}
	pairs := d.Pairs() // (src, dst) order; the stable sort keeps it among equal sizes
	slices.SortStableFunc(pairs, func(a, b schedules.Pair) int {
		switch {
		case a.Bytes > b.Bytes:
			return -1
		case a.Bytes < b.Bytes:
			return 1
		}
		return 0
	})
	n := d.N()
	tx, rx := make([]timeline, n), make([]timeline, n)
	plan := make([]rnbmap.Circuit, 0, len(pairs))
	for k, q := range pairs {
		if k%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("bff: %w", err)
			}
		}
		dur := alphaR + float64(q.Bytes)/bandwidth
		t := earliestFit(tx[q.Src], rx[q.Dst], dur)
		iv := interval{t, t + dur}
		tx[q.Src] = tx[q.Src].insert(iv)
		rx[q.Dst] = rx[q.Dst].insert(iv)
		plan = append(plan, rnbmap.Circuit{Src: q.Src, Dst: q.Dst, Bytes: q.Bytes, Start: iv.start, End: iv.end})
	}
	groupByStart(plan)
	return plan, nil
}

// interval is a port's busy time [start, end).
type interval struct{ start, end float64 }

// timeline is one port's busy intervals, sorted and disjoint.
type timeline []interval

func (tl timeline) insert(iv interval) timeline {
	i := sort.Search(len(tl), func(i int) bool { return tl[i].start > iv.start })
	return slices.Insert(tl, i, iv)
}

// earliestFit is the earliest t ≥ 0 such that [t, t+dur) meets no busy interval of a or b. The
// test t+dur ≤ next start is the same sum the circuit's end is computed with, so a circuit
// placed in a gap never overlaps the next one, even by rounding.
func earliestFit(a, b timeline, dur float64) float64 {
	t := 0.0
	i, j := 0, 0
	for {
		for i < len(a) && a[i].end <= t {
			i++
		}
		for j < len(b) && b[j].end <= t {
			j++
		}
		// The next busy interval on either port that ends after t.
		var next *interval
		if i < len(a) {
			next = &a[i]
		}
		if j < len(b) && (next == nil || b[j].start < next.start) {
			next = &b[j]
		}
		if next == nil || t+dur <= next.start {
			return t
		}
		// Either t is inside next, or the gap before it is too short; no start before next ends
		// can fit.
		t = next.end
	}
}

// groupByStart sets each circuit's Group to the rank of its start among the distinct starts.
func groupByStart(plan []rnbmap.Circuit) {
	starts := make([]float64, len(plan))
	for i, c := range plan {
		starts[i] = c.Start
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	for i := range plan {
		plan[i].Group, _ = slices.BinarySearch(starts, plan[i].Start)
	}
}
