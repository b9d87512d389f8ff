package ctlmodel_test

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/internal/ctlmodel"
)

// A serial board that takes 16 changes a request: 20 changes are two requests.
func Example() {
	m := ctlmodel.Model{TR: 0.002, TW: 0.010, Batch: 16}
	fmt.Printf("%d requests, %.0f ms\n", m.Requests(20), m.Cost(20)*1e3)
	s := m.NewStation()
	s.Command(0, 20)                         // holds the station until 4 ms
	start, _, settled := s.Command(0.001, 1) // queued behind it; its settle overlaps the first's
	fmt.Printf("second command: %.0f–%.0f ms\n", start*1e3, settled*1e3)
	// Output:
	// 2 requests, 14 ms
	// second command: 4–16 ms
}
