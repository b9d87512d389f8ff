package bench_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"
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

// One pinned worker per GPU of a set, here on the fake server with this test binary as the
// workers (the CLI uses `tetris-hil worker`); Close stops them all.
func ExampleStartWorkers() {
	lib, _ := nvml.Open(nvml.Options{Fake: true})
	command, env := workertest.Command(workertest.WorkerRole)
	ws, err := bench.StartWorkers(context.Background(), bench.Config{Lib: lib, Engine: "fake", Command: command, Env: env}, []int{3, 0, 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ws.Close()
	fmt.Println(ws.GPUs(), ws.Device(3).BusID)
	// Output: [3 0] 00000000:5d:00.0
}
