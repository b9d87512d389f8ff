package barrier_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/barrier"
	"github.com/tetris-hil/tetris-hil/schedules/stuffing"
)

func ExampleDecomposeBvN() {
	real := [][]int64{
		{0, 4, 1},
		{2, 0, 0},
		{1, 1, 0},
	}
	stuffed, _, _ := stuffing.Stuff(real)
	slices, err := barrier.DecomposeBvN(context.Background(), stuffed, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range slices {
		fmt.Println(s.Perm, "for", s.Duration)
	}
	// Output:
	// [1 0 2] for 3
	// [1 2 0] for 1
	// [2 0 1] for 1
}

func ExampleDecomposeSolstice() {
	stuffed := [][]int64{
		{0, 4, 1},
		{4, 0, 1},
		{1, 1, 3},
	}
	slices, err := barrier.DecomposeSolstice(context.Background(), stuffed)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range slices {
		fmt.Println(s.Perm, "for", s.Duration)
	}
	// Output:
	// [1 0 2] for 3
	// [1 2 0] for 1
	// [2 0 1] for 1
}

func ExampleMaxWeight() {
	d, _ := schedules.DemandFromRows([][]int64{
		{0, 5, 2},
		{3, 0, 0},
		{1, 4, 0},
	})
	// 1 byte per second, no reconfiguration delay, an ideal crossbar: times are byte counts.
	s, err := barrier.MaxWeight(context.Background(), d, schedules.Options{Bandwidth: 1, Fabric: schedules.Crossbar})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range s.Circuits {
		fmt.Printf("round %d: %d→%d %d bytes, %g..%g s\n", c.Group, c.Src, c.Dst, c.Bytes, *c.PlannedStart, *c.PlannedEnd)
	}
	// Output:
	// round 0: 0→2 2 bytes, 0..2 s
	// round 0: 1→0 3 bytes, 0..3 s
	// round 0: 2→1 4 bytes, 0..4 s
	// round 1: 0→1 5 bytes, 4..9 s
	// round 1: 2→0 1 bytes, 4..5 s
}

func ExampleBvN() {
	d, _ := schedules.DemandFromRows([][]int64{
		{0, 4, 1},
		{2, 0, 0},
		{1, 1, 0},
	})
	// Schedulers are also found by name once the package is imported.
	bvn, err := schedules.Lookup("bvn")
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := bvn.Schedule(context.Background(), d, schedules.Options{Bandwidth: 1e9, Reconfig: 1e-6})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Fabric, s.N, "ports padded from", s.Ports)
	fmt.Println("rounds:", s.Params.Options["rounds"], "stuffed bytes:", s.Params.Options["stuffed_bytes"])
	for _, r := range s.Rounds {
		fmt.Printf("round %d lasts at least %g s\n", r.Group, r.PlannedDuration)
	}
	fmt.Println("violations:", len(schedules.Verify(s, d)))
	// Output:
	// benes 4 ports padded from 3
	// rounds: 3 stuffed bytes: 6
	// round 0 lasts at least 3e-09 s
	// round 1 lasts at least 1e-09 s
	// round 2 lasts at least 1e-09 s
	// violations: 0
}
