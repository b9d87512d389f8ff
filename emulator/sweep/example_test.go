package sweep_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tetris-hil/tetris-hil/emulator/sweep"
	"github.com/tetris-hil/tetris-hil/schedules"
	_ "github.com/tetris-hil/tetris-hil/schedules/barrier"
	_ "github.com/tetris-hil/tetris-hil/schedules/tetris"
)

// A one-row grid over a demand that is a single permutation (GPU i sends 1 MB to GPU i+1): every
// scheduler serves it in one matching, so BvN and Tetris tie in every cell. Both pay one α_r to
// set the fabric up from all-bar, which the lower bound does not count (every endpoint has a
// single partner), hence completion = α_r + 2^20 B / b.
func ExampleRun() {
	d := schedules.NewDemand(4)
	for i := range 4 {
		d.Bytes[i][(i+1)%4] = 1 << 20
	}
	res, err := sweep.Run(context.Background(), []*schedules.Demand{d}, sweep.Config{
		Algorithms: []string{"tetris", "bvn"},
		Bandwidths: []float64{100e9},        // 800 Gbps
		Reconfigs:  []float64{10e-9, 10e-3}, // 10 ns and 10 ms
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, _ := res.RatioGrid("bvn")
	fmt.Printf("bvn / tetris: %.2f %.2f\n", g[0][0], g[0][1])
	if err := res.WriteCSV(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// bvn / tetris: 1.00 1.00
	// bandwidth,bandwidth_bytes_per_second,reconfig,reconfig_seconds,algorithm,matrices,completion_sum_seconds,lower_bound_sum_seconds,ratio_vs_tetris,completion_over_lower_bound,state_changes,state_changes_max
	// 800Gbps,1e+11,10ns,1e-08,tetris,1,1.049576e-05,1.049576e-05,1,1,3,1
	// 800Gbps,1e+11,10ns,1e-08,bvn,1,1.049576e-05,1.049576e-05,1,1,3,1
	// 800Gbps,1e+11,10ms,0.01,tetris,1,0.01001048576,0.01001048576,1,1,3,1
	// 800Gbps,1e+11,10ms,0.01,bvn,1,0.01001048576,0.01001048576,1,1,3,1
}
