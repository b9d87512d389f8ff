package holo_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/emulator/holo"
)

// A broadcast to 1024 nodes with T_c = 5 ms, T_b = 1 µs, T_f = 10 ns and 1 KiB messages: the
// simulated time of each algorithm next to the paper's closed form.
func ExampleEvaluate() {
	p := holo.Params{Nodes: 1024, TW: 5e-3, TB: 1e-6, TF: 10e-9, Size: 1024, Header: holo.DefaultHeader}
	for _, a := range holo.Algorithms {
		pt, err := holo.Evaluate(context.Background(), a, p, false)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-13s simulated %8.3f ms  closed form %8.3f ms  %4d changes\n",
			a, pt.SimulatedSeconds*1e3, pt.ClosedFormSeconds*1e3, pt.ConfigChanges)
	}
	// Output:
	// naive         simulated 6162.552 ms  closed form 6162.552 ms  1023 changes
	// ring          simulated   17.503 ms  closed form   17.503 ms  1023 changes
	// tree          simulated   52.139 ms  closed form   52.140 ms  1023 changes
	// tree-ring     simulated   14.782 ms  closed form   40.671 ms  1023 changes
	// tree-ring-alt simulated   14.782 ms  closed form   18.269 ms  1023 changes
}

// A configuration in which two nodes point at the same receiver while both transmit is reported
// as a collision, never merged.
func ExampleRun_collision() {
	p := holo.Params{Nodes: 3, TB: 1e-6, TF: 10e-9, Size: 1024, Header: 1} // T_c = 0
	plan := &holo.Plan{Algorithm: "colliding", Nodes: 3,
		Setup: []holo.SetLink{{Node: 0, To: 1}, {Node: 1, To: 2}},
		Sends: [][]holo.Send{{
			{To: 1, TTL: 2, FromApp: true, Broadcast: true}, // node 1's FU forwards to node 2...
			{To: 2, TTL: 1, Broadcast: true},                // ...while node 0 re-points at node 2
		}, nil, nil},
	}
	_, err := holo.Run(context.Background(), p, plan)
	fmt.Println(err)
	// Output: colliding, N = 3: collision at node 2: node 0 transmits from 1.024ms while node 1's packet arrives until 1.034ms
}
