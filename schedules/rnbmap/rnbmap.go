package rnbmap

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Paths gives every circuit of plan a path through f: for each distinct planned start t, the
// circuits live at t (Start ≤ t < End, or starting at t) are routed together with plain looping,
// and those starting at t take the paths they get. The result is indexed like plan.
//
// It returns an error if a live set is not a partial permutation of f's ports (two live circuits
// share a transmitter or a receiver, or a port is out of range): a valid non-blocking plan never
// has one.
func Paths(f *benes.Fabric, plan []Circuit) ([]benes.Path, error) {
	paths := make([]benes.Path, len(plan))
	conns := make([]benes.Conn, 0, f.Ports())
	err := sweepLive(f, plan, nil, func(t float64, live, starting []int) error {
		conns = conns[:0]
		for _, c := range live {
			conns = append(conns, benes.Conn{Src: plan[c].Src, Dst: plan[c].Dst})
		}
		choices, err := f.Route(conns, nil)
		if err != nil {
			return fmt.Errorf("rnbmap: routing the %d circuits live at t = %g s: %w", len(conns), t, err)
		}
		// The starting circuits are the last len(starting) of live, in the same order.
		for k, c := range starting {
			paths[c] = f.NewPath(plan[c].Src, plan[c].Dst, choices[len(live)-len(starting)+k])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return paths, nil
}

// sweepLive walks plan by distinct planned start t, in StartOrder. At each t the circuits that
// ended by t leave the live set (ended, if not nil, is called for each; an empty circuit, live
// only at its own start, leaves at the next t), the circuits starting at t join it at its end, in
// start order, and at(t, live, starting) runs. It returns an error if a port is out of range or
// a live set is not a partial permutation of f's ports: a valid non-blocking plan never has one.
// Both mapping strategies see the plan through this one walk, so they agree on what is live.
func sweepLive(f *benes.Fabric, plan []Circuit, ended func(c int), at func(t float64, live, starting []int) error) error {
	if err := checkPorts(f, plan); err != nil {
		return err
	}
	n := f.Ports()
	byStart := StartOrder(plan)
	// liveAtTx[p] is the live circuit holding transmitter p, or -1; liveAtRx likewise.
	liveAtTx, liveAtRx := make([]int, n), make([]int, n)
	for p := range n {
		liveAtTx[p], liveAtRx[p] = -1, -1
	}
	live := make([]int, 0, n) // never longer than n once the checks below pass
	for i := 0; i < len(byStart); {
		t := plan[byStart[i]].Start
		kept := live[:0]
		for _, c := range live {
			if plan[c].End > t {
				kept = append(kept, c)
				continue
			}
			liveAtTx[plan[c].Src], liveAtRx[plan[c].Dst] = -1, -1
			if ended != nil {
				ended(c)
			}
		}
		live = kept
		first := len(live)
		for ; i < len(byStart) && plan[byStart[i]].Start == t; i++ {
			c := byStart[i]
			if o := liveAtTx[plan[c].Src]; o >= 0 {
				return conflict("transmitter", plan[c].Src, t, plan, o, c)
			}
			if o := liveAtRx[plan[c].Dst]; o >= 0 {
				return conflict("receiver", plan[c].Dst, t, plan, o, c)
			}
			liveAtTx[plan[c].Src], liveAtRx[plan[c].Dst] = c, c
			live = append(live, c)
		}
		if err := at(t, live, live[first:]); err != nil {
			return err
		}
	}
	return nil
}

func conflict(side string, port int, t float64, plan []Circuit, a, b int) error {
	return fmt.Errorf("rnbmap: at t = %g s %s %d is in two live circuits, %d (%d->%d, [%g, %g)) and %d (%d->%d, [%g, %g)): "+
		"the live set is not a partial permutation", t, side, port,
		a, plan[a].Src, plan[a].Dst, plan[a].Start, plan[a].End,
		b, plan[b].Src, plan[b].Dst, plan[b].Start, plan[b].End)
}

// Schedule lays plan out as a partial-reconfiguration schedule for demand d: circuits in order of
// planned start (ties in plan order), each with its planned interval and group; on the Beneš
// fabric (o.Fabric empty or benes) with the paths Map gives under strategy o.RNBMapping (empty:
// Earliest, which also re-times the circuits to when their paths are ready), on the crossbar with
// none (the plan's own strictly non-blocking reference). The fabric
// has benes.SizeFor(d.N()) ports, the ones above d.N() idle. options is recorded in the schedule's
// parameters; on the Beneš fabric so are the strategy ("rnb_mapping") and, under AvoidLive, the
// number of circuits that fell back to the looping path ("rnb_fallbacks").
func Schedule(algorithm string, d *schedules.Demand, o schedules.Options, plan []Circuit, options map[string]string) (*schedules.Schedule, error) {
	ports := d.N()
	if ports < 1 {
		return nil, fmt.Errorf("rnbmap: demand for %s has no ports", algorithm)
	}
	if err := CheckPlan(plan, ports); err != nil {
		return nil, fmt.Errorf("rnbmap: plan of %s: %w", algorithm, err)
	}
	fabric := o.Fabric
	if fabric == "" {
		fabric = schedules.Benes
	}
	strategy, err := ParseStrategy(o.RNBMapping)
	if err != nil {
		return nil, err
	}
	n := benes.SizeFor(ports)
	var paths []benes.Path
	var times [2][]float64 // Earliest's re-timed intervals, indexed like plan
	switch fabric {
	case schedules.Benes:
		f, err := benes.New(n)
		if err != nil {
			return nil, fmt.Errorf("rnbmap: %w", err)
		}
		m, err := Map(f, plan, strategy, Timing{Bandwidth: o.Bandwidth, AlphaR: o.Reconfig})
		if err != nil {
			return nil, err
		}
		paths = m.Paths
		if m.Start != nil {
			times = [2][]float64{m.Start, m.End}
		}
		options = maps.Clone(options)
		if options == nil {
			options = map[string]string{}
		}
		options["rnb_mapping"] = string(strategy)
		if strategy == AvoidLive {
			options["rnb_fallbacks"] = strconv.Itoa(len(m.Fallbacks))
		}
	case schedules.Crossbar:
	default:
		return nil, fmt.Errorf("rnbmap: fabric %q is not \"benes\" or \"crossbar\"", fabric)
	}
	s := &schedules.Schedule{
		Version:   schedules.FormatVersion,
		Algorithm: algorithm,
		N:         n,
		Ports:     ports,
		Fabric:    fabric,
		Mode:      schedules.Partial,
		Params: schedules.Params{
			BandwidthBytesPerSecond: o.Bandwidth,
			ReconfigSeconds:         o.Reconfig,
			Options:                 options,
		},
		Circuits: make([]schedules.Circuit, 0, len(plan)),
	}
	for _, i := range StartOrder(plan) {
		c := plan[i]
		path := benes.EmptyPath()
		if paths != nil {
			path = paths[i]
		}
		start, end := c.Start, c.End
		if times[0] != nil {
			start, end = times[0][i], times[1][i]
		}
		s.Circuits = append(s.Circuits, schedules.Circuit{
			Src: c.Src, Dst: c.Dst, Bytes: c.Bytes, Group: c.Group, Path: path,
			PlannedStart: &start, PlannedEnd: &end,
		})
	}
	return s, nil
}
