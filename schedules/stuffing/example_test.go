package stuffing_test

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules/stuffing"
)

func ExampleStuff() {
	// Transmitter 0 sends 4+1 bytes; receiver 1 takes 4+1: the norm is 5.
	m := [][]int64{
		{0, 4, 1},
		{2, 0, 0},
		{1, 1, 0},
	}
	s, norm, err := stuffing.Stuff(m)
	fmt.Println(norm, err)
	for _, row := range s {
		fmt.Println(row)
	}
	// Output:
	// 5 <nil>
	// [0 4 1]
	// [4 0 1]
	// [1 1 3]
}
