package bench_test

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

func ExampleSizes() {
	sizes, _ := bench.Sizes(4<<10, 64<<10)
	for _, s := range sizes {
		fmt.Print(units.FormatBinary(s), "; ")
	}
	fmt.Println()
	// Output: 4 KiB; 8 KiB; 16 KiB; 32 KiB; 64 KiB;
}
