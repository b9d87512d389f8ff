package sunflow_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/sunflow"
)

// Sunflow's reservation timeline for a 3×3 demand at 1 B/s with α_r = 1 s: every circuit lasts
// one second of reconfiguration plus one second per byte.
func ExamplePlan() {
	d, _ := schedules.DemandFromRows([][]int64{
		{0, 4, 2},
		{4, 0, 3},
		{5, 1, 0},
	})
	plan, err := sunflow.Plan(context.Background(), d, 1, 1, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range plan {
		fmt.Printf("scan %d: %d->%d %d B over [%g, %g)\n", c.Group, c.Src, c.Dst, c.Bytes, c.Start, c.End)
	}
	// Output:
	// scan 0: 0->1 4 B over [0, 5)
	// scan 0: 1->0 4 B over [0, 5)
	// scan 1: 0->2 2 B over [5, 8)
	// scan 1: 2->1 1 B over [5, 7)
	// scan 2: 2->0 5 B over [7, 13)
	// scan 3: 1->2 3 B over [8, 12)
}

// The same plan as a schedule on the Beneš fabric (the default): a 3-port demand runs on a
// 4-port fabric, and every circuit carries the path the RNB mapping gave it.
func ExampleSchedule() {
	d, _ := schedules.DemandFromRows([][]int64{
		{0, 4, 2},
		{4, 0, 3},
		{5, 1, 0},
	})
	s, err := sunflow.Schedule(context.Background(), d, schedules.Options{Bandwidth: 1, Reconfig: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Fabric, s.Mode, s.N, s.Ports, len(s.Circuits), len(schedules.Verify(s, d)))
	for _, c := range s.Circuits {
		fmt.Printf("%d->%d %d traversals\n", c.Src, c.Dst, c.Path.Len())
	}
	// Output:
	// benes partial 4 3 6 0
	// 0->1 3 traversals
	// 1->0 3 traversals
	// 0->2 3 traversals
	// 2->1 3 traversals
	// 2->0 3 traversals
	// 1->2 3 traversals
}
