package matching_test

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules/matching"
)

func ExampleMaxMatching() {
	// Transmitter 0 can reach receivers 0 and 1, transmitter 1 only receiver 0.
	g := matching.Graph{Adj: [][]int{{0, 1}, {0}}, Right: 2}
	mate, size, err := matching.MaxMatching(g, nil)
	fmt.Println(mate, size, err)
	// Output: [1 0] 2 <nil>
}

func ExamplePerfectOnSupport() {
	m := [][]int64{
		{0, 3, 0},
		{2, 0, 1},
		{0, 4, 5},
	}
	perm, ok, err := matching.PerfectOnSupport(m, nil)
	fmt.Println(perm, ok, err)
	// Output: [1 0 2] true <nil>
}

func ExampleBottleneck() {
	// The identity carries more in total, but its smallest entry is 1; the swap keeps 50.
	m := [][]int64{
		{100, 50},
		{50, 1},
	}
	perm, smallest, ok, err := matching.Bottleneck(m)
	fmt.Println(perm, smallest, ok, err)
	// Output: [1 0] 50 true <nil>
}

func ExampleMaxWeightAssignment() {
	w := [][]float64{
		{4, 1, 3},
		{2, 0, 5},
		{3, 2, 2},
	}
	perm, total, err := matching.MaxWeightAssignment(w)
	fmt.Println(perm, total, err)
	// Output: [0 2 1] 11 <nil>
}
