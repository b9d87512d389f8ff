package bff_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/bff"
)

// First-fit decreasing at 1 B/s with α_r = 1 s. 1->2 is placed after 1->0 but fits in the
// six-second gap before it on transmitter 1.
func ExamplePlan() {
	d, _ := schedules.DemandFromRows([][]int64{
		{0, 4, 2},
		{4, 0, 3},
		{5, 1, 0},
	})
	plan, err := bff.Plan(context.Background(), d, 1, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range plan {
		fmt.Printf("%d->%d %d B over [%g, %g), group %d\n", c.Src, c.Dst, c.Bytes, c.Start, c.End, c.Group)
	}
	// Output:
	// 2->0 5 B over [0, 6), group 0
	// 0->1 4 B over [0, 5), group 0
	// 1->0 4 B over [6, 11), group 2
	// 1->2 3 B over [0, 4), group 0
	// 0->2 2 B over [5, 8), group 1
	// 2->1 1 B over [6, 8), group 2
}

// On the crossbar (the plan's strictly non-blocking reference) circuits have no internal path and
// are listed by planned start.
func ExampleSchedule() {
	d, _ := schedules.DemandFromRows([][]int64{
		{0, 4, 2},
		{4, 0, 3},
		{5, 1, 0},
	})
	s, err := bff.Schedule(context.Background(), d, schedules.Options{Bandwidth: 1, Reconfig: 1, Fabric: schedules.Crossbar})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range s.Circuits {
		fmt.Printf("%d->%d starts %g, path %v\n", c.Src, c.Dst, *c.PlannedStart, c.Path)
	}
	// Output:
	// 2->0 starts 0, path []
	// 0->1 starts 0, path []
	// 1->2 starts 0, path []
	// 0->2 starts 5, path []
	// 1->0 starts 6, path []
	// 2->1 starts 6, path []
}
