package rnbmap_test

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
	"github.com/tetris-hil/tetris-hil/schedules/rnbmap"
)

// A non-blocking plan on a 4-port Beneš fabric: 1->0 runs over [0, 10), 0->1 starts at 1. The
// second is routed together with the first (both are live at 1) and keeps the path it gets there,
// even though that routing would move the first circuit to the other middle switch: both now
// leave input switch 0 on lane 0, so on the fabric 0->1 waits for 1->0.
func ExamplePaths() {
	f, _ := benes.New(4)
	plan := []rnbmap.Circuit{
		{Src: 1, Dst: 0, Bytes: 9, Start: 0, End: 10},
		{Src: 0, Dst: 1, Bytes: 3, Start: 1, End: 5},
	}
	paths, err := rnbmap.Paths(f, plan)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, p := range paths {
		h := p.At(0)
		fmt.Printf("%d->%d: first hop stage %d switch %d lane %d->%d\n",
			plan[i].Src, plan[i].Dst, h.Stage, h.Switch, h.In, h.Out)
	}
	// Output:
	// 1->0: first hop stage 0 switch 0 lane 1->0
	// 0->1: first hop stage 0 switch 0 lane 0->0
}

// The same plan under AvoidLive: 0->1 leaves input switch 0 on lane 1 instead, in the cross
// state 1->0 already holds it in, so it can start while 1->0 runs.
func ExampleMap() {
	f, _ := benes.New(4)
	plan := []rnbmap.Circuit{
		{Src: 1, Dst: 0, Bytes: 9, Start: 0, End: 10},
		{Src: 0, Dst: 1, Bytes: 3, Start: 1, End: 5},
	}
	m, err := rnbmap.Map(f, plan, rnbmap.AvoidLive, rnbmap.Timing{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, p := range m.Paths {
		h := p.At(0)
		fmt.Printf("%d->%d: first hop stage %d switch %d lane %d->%d\n",
			plan[i].Src, plan[i].Dst, h.Stage, h.Switch, h.In, h.Out)
	}
	fmt.Println("fallbacks:", len(m.Fallbacks))
	// Output:
	// 1->0: first hop stage 0 switch 0 lane 1->0
	// 0->1: first hop stage 0 switch 0 lane 0->1
	// fallbacks: 0
}

// CheckPlan finds the circuits of a plan that share a port while both are planned to be live.
func ExampleCheckPlan() {
	plan := []rnbmap.Circuit{
		{Src: 0, Dst: 1, Start: 0, End: 2},
		{Src: 2, Dst: 1, Start: 2, End: 3}, // starts as the first ends: fine
		{Src: 0, Dst: 2, Start: 1, End: 3}, // transmitter 0 is still busy at 1
	}
	fmt.Println(rnbmap.CheckPlan(plan, 3))
	// Output:
	// transmitter 0: circuit 0 (0->1, [0, 2)) overlaps circuit 2 (0->2, [1, 3))
}

// The same plan under Earliest, at 1 B/s and α_r = 1 s: 1->0 waits one α_r for a switch to leave
// Bar and sends its 9 B over [1, 10); 0->1 finds a path whose switches can be set by t = 1 without
// touching 1->0's lanes, so it too starts at 1.
func ExampleEarliestPaths() {
	f, _ := benes.New(4)
	plan := []rnbmap.Circuit{
		{Src: 1, Dst: 0, Bytes: 9, Start: 0, End: 10},
		{Src: 0, Dst: 1, Bytes: 3, Start: 1, End: 5},
	}
	m, err := rnbmap.EarliestPaths(f, plan, rnbmap.Timing{Bandwidth: 1, AlphaR: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range plan {
		fmt.Printf("%d->%d: [%g, %g)\n", plan[i].Src, plan[i].Dst, m.Start[i], m.End[i])
	}
	// Output:
	// 1->0: [1, 10)
	// 0->1: [1, 4)
}
