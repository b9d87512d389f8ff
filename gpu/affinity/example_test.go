package affinity_test

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
)

func ExampleParse() {
	node0, _ := affinity.Parse("0-3,8-11")
	here := affinity.Of(0, 1, 9)
	fmt.Println(node0, len(node0), node0.Intersect(here))
	// Output: 0-3,8-11 8 0-1,9
}
