package schedules_test

import (
	"fmt"
	"os"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// A schedule written to standard output; to a file, safefile.WriteStream(path, s.WriteJSON)
// writes the same bytes safely.
func ExampleSchedule_WriteJSON() {
	end := 1e-7
	tenth, fifth := 0.1, 0.2 // variables: 0.1 + 0.2 as constants is exactly 0.3
	s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "hand", N: 2, Ports: 2,
		Fabric: schedules.Crossbar, Mode: schedules.Partial,
		Params:   schedules.Params{BandwidthBytesPerSecond: 1e9, ReconfigSeconds: tenth + fifth},
		Circuits: []schedules.Circuit{{Src: 0, Dst: 1, Bytes: 100, PlannedEnd: &end}}}
	if err := s.WriteJSON(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {
	//  "version": 1,
	//  "algorithm": "hand",
	//  "n": 2,
	//  "ports": 2,
	//  "fabric": "crossbar",
	//  "mode": "partial",
	//  "params": {
	//   "bandwidth_bytes_per_second": 1000000000,
	//   "reconfig_seconds": 0.30000000000000004
	//  },
	//  "circuits": [
	//   {
	//    "src": 0,
	//    "dst": 1,
	//    "bytes": 100,
	//    "group": 0,
	//    "path": null,
	//    "planned_end": 1e-7
	//   }
	//  ]
	// }
}
