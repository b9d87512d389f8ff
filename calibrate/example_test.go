package calibrate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tetris-hil/tetris-hil/calibrate"
	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"
)

// Calibrating two GPUs of the fake server through real worker processes (here the test binary;
// in the CLI, `tetris-hil worker`), on a noise-free fake model of 3 µs and 370 GB/s.
func ExampleRun() {
	lib, _ := nvml.Open(nvml.Options{Fake: true})
	inv, _ := lib.Inventory(nil)
	m := fake.Defaults
	m.Spread, m.Noise, m.Outliers = 0, 0, 0
	sizes, _ := calibrate.GeometricSizes(4<<10, 1<<30, 1)
	command, env := workertest.Command(workertest.WorkerRole)
	res, err := calibrate.Run(context.Background(), calibrate.Config{
		Plan: model.Plan{Pairs: calibrate.DefaultPairs([]int{0, 1}), Sizes: sizes, Reps: 5, Warmup: 1, Copy: "ce",
			Patterns: []string{model.Isolated}, VerifyEvery: 4, Engine: "fake", EngineOptions: m.String()},
		Workers:   bench.Config{Lib: lib, Command: command, Env: env, Timeout: 10 * time.Second},
		Inventory: calibrate.InventoryFrom(inv, "example"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range res.Calibration.Pairs {
		fmt.Printf("GPU %d → GPU %d: α %.2f µs, %.0f GB/s, %d sizes\n", p.Src, p.Dst, p.Alpha*1e6, p.Bandwidth/1e9, len(p.Medians))
	}
	// Output:
	// GPU 0 → GPU 1: α 3.00 µs, 370 GB/s, 19 sizes
	// GPU 1 → GPU 0: α 3.00 µs, 370 GB/s, 19 sizes
}
