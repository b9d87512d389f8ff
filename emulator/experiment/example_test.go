package experiment_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/schedules"
	_ "github.com/tetris-hil/tetris-hil/schedules/barrier"
	_ "github.com/tetris-hil/tetris-hil/schedules/tetris"
)

// Tetris and BvN on two 4-port matrices at 100 GB/s per port and α_r = 10 µs: each run against
// both lower bounds, BvN's speedup over Tetris (above 1: Tetris is faster), and the totals over
// the two matrices (one inference pass). On a, every row and column carries 5 MB to two
// partners: 50 µs at 100 GB/s, 60 µs with one α_r more; both algorithms need two configurations
// (α_r + 40 µs, then α_r + 10 µs): 70 µs.
func ExampleRun() {
	a, _ := schedules.DemandFromRows([][]int64{{0, 4e6, 1e6, 0}, {0, 0, 4e6, 1e6}, {1e6, 0, 0, 4e6}, {4e6, 1e6, 0, 0}})
	b, _ := schedules.DemandFromRows([][]int64{{0, 8e6, 0, 0}, {2e6, 0, 2e6, 2e6}, {0, 2e6, 0, 2e6}, {2e6, 0, 2e6, 0}})
	ms := []experiment.Matrix{
		{Ref: emulator.MatrixRef{Index: 0, Layer: -1, Label: "a"}, Demand: a},
		{Ref: emulator.MatrixRef{Index: 1, Layer: -1, Label: "b"}, Demand: b},
	}
	cfg := experiment.Config{
		Algorithms: []string{"tetris", "bvn"},
		Options:    schedules.Options{Bandwidth: 100e9, Reconfig: 10e-6},
		Exec:       emulator.Config{Transfer: emulator.BandwidthModel(100e9), Reconfig: emulator.ParallelReconfig(10e-6)},
	}
	out, err := experiment.Run(context.Background(), ms, cfg, experiment.Pool{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range out.Records {
		fmt.Printf("%s %-6s %5.1f µs  /bw %.2f  /reconf %.2f  speedup %.2f\n", r.Matrix.Label, r.Algorithm,
			r.CompletionSeconds*1e6, r.Result.RatioBandwidth, r.Result.RatioReconfig, r.Speedup)
	}
	for _, t := range out.Totals {
		fmt.Printf("total %-6s %5.1f µs over %d matrices, speedup %.2f\n", t.Algorithm, t.CompletionSeconds*1e6, t.Matrices, t.Speedup)
	}
	// Output:
	// a tetris  70.0 µs  /bw 1.40  /reconf 1.00  speedup 1.00
	// a bvn     70.0 µs  /bw 1.40  /reconf 1.00  speedup 1.00
	// b tetris 120.0 µs  /bw 1.20  /reconf 1.00  speedup 1.00
	// b bvn    130.0 µs  /bw 1.30  /reconf 1.08  speedup 1.08
	// total tetris 190.0 µs over 2 matrices, speedup 1.00
	// total bvn    200.0 µs over 2 matrices, speedup 1.05
}
