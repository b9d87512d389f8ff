package program_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/gpu/program"
)

type alphaR float64

func (a alphaR) Command(t float64, _ int) (float64, float64) { return t, t + float64(a) }

// Two endpoints: endpoint 1's copy needs a switch change, requested once endpoint 0's copy has
// ended; the change takes 10 µs. On the virtual clock the stamps are exactly the semantics.
func ExampleFake_Execute() {
	p := &program.Program{Circuits: 2, Batch: true,
		Endpoints: [][]program.Step{
			{{Circuit: 0, Dst: 1, Bytes: 4 << 20}},
			{{Circuit: 1, Dst: 0, Bytes: 4 << 20, Signals: []int32{0}}},
		},
		Signals: []program.Signal{{Requires: []int32{0}, After: -1, Changes: 1}},
	}
	dev := program.Fake{Virtual: true, Duration: func(_, _ int, bytes int64) (float64, error) {
		return 5e-6 + float64(bytes)/370e9, nil // α + bytes/B
	}}
	st, err := dev.Execute(context.Background(), p, alphaR(10e-6))
	if err != nil {
		fmt.Println(err)
		return
	}
	for c := range 2 {
		fmt.Printf("circuit %d: %.2f..%.2f µs\n", c, st.Start[c]*1e6, st.End[c]*1e6)
	}
	// Output:
	// circuit 0: 0.00..16.34 µs
	// circuit 1: 26.34..42.67 µs
}
