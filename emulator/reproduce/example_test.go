package reproduce_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/emulator/reproduce"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// Figure 6's ablations on one permutation of 1 MB demands (0→1→2→3→0): one matching, so every
// variant serves it in one round and meets the lower bound, 1 MB / 800 Gbps + α_r.
func Example() {
	d := schedules.NewDemand(4)
	for i := range 4 {
		d.Bytes[i][(i+1)%4] = 1_000_000
	}
	s := reproduce.Default()
	s.AblationReconfigs = []float64{10e-6}
	in := reproduce.Inputs{TraceName: "one permutation",
		Trace: []experiment.Matrix{{Demand: d, Ref: emulator.MatrixRef{Layer: -1, Label: "permutation"}}}}
	dir, err := os.MkdirTemp("", "reproduce-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	figs, err := reproduce.Run(context.Background(), []string{"fig6"}, s, in, dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	t := figs[0].Tables[0]
	fmt.Println(t.Title)
	for _, r := range t.Rows {
		fmt.Printf("%s: %s\n", r.Quantity, r.Ours)
	}
	// Output:
	// Figure 6 (Tetris §3): variant / Tetris completion at 800Gbps, α_r = 10µs
	// Tetris / lower bound (Figure 6(d)): 1.000
	// Tetris --no-partial (matching-wide barriers) / Tetris: 1.000
	// Tetris --naive-routing (partial, RNB-unaware routing) / Tetris: 1.000
	// Tetris --no-degree-coverage / Tetris: 1.000
	// tetris+ (best of five cost weightings; not in the paper) / Tetris: 1.000
}
