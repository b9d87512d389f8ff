package tetris_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/tetris"
)

// Plan a skewed 4-GPU demand on a 4-port Beneš network at 1 byte/s with α_r = 1 s: receiver 2 is
// the bottleneck and is kept busy; each matching is a planning group, not a barrier.
func ExampleSchedule() {
	d, _ := schedules.DemandFromRows([][]int64{
		{0, 4, 2, 0},
		{3, 0, 0, 0},
		{0, 1, 0, 0},
		{0, 0, 5, 0},
	})
	s, err := tetris.Schedule(context.Background(), d, schedules.Options{Bandwidth: 1, Reconfig: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range s.Circuits {
		fmt.Printf("matching %d: Tx%d→Rx%d %d bytes over %g..%g s\n", c.Group, c.Src, c.Dst, c.Bytes, *c.PlannedStart, *c.PlannedEnd)
	}
	// Output:
	// matching 0: Tx3→Rx2 5 bytes over 1..6 s
	// matching 0: Tx0→Rx1 4 bytes over 1..5 s
	// matching 0: Tx1→Rx0 3 bytes over 1..4 s
	// matching 1: Tx0→Rx2 2 bytes over 7..9 s
	// matching 1: Tx2→Rx1 1 bytes over 6..7 s
}

// The ablations of Tetris Figure 6 are options of the same planner.
func ExampleSchedule_ablation() {
	d, _ := schedules.DemandFromRows([][]int64{
		{0, 1, 5},
		{1, 0, 5},
		{0, 0, 0},
	})
	for _, o := range []schedules.Options{
		{Bandwidth: 1, Fabric: schedules.Crossbar},
		{Bandwidth: 1, Fabric: schedules.Crossbar, NoDegreeCoverage: true},
	} {
		s, _ := tetris.Schedule(context.Background(), d, o)
		end := 0.0
		for _, c := range s.Circuits {
			end = max(end, *c.PlannedEnd)
		}
		fmt.Printf("no-degree-coverage=%s: %d matchings, done at %g s\n", s.Params.Options["no-degree-coverage"], s.Groups(), end)
	}
	// Output:
	// no-degree-coverage=false: 2 matchings, done at 10 s
	// no-degree-coverage=true: 3 matchings, done at 11 s
}
