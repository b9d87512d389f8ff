package hil_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/hil"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// A live replay of the emulator's 2×2 example on two fake-engine endpoints in this process: no
// switch controller, so each reconfiguration is an injected α_r of 1 ms. The walker decides that
// the switch goes to Cross for circuits 0 and 1 and back to Bar for circuit 2; Replay only waits,
// copies and reports the times.
func ExampleReplay() {
	f, _ := benes.New(2)
	s := &schedules.Schedule{
		Version: schedules.FormatVersion, Algorithm: "example", N: 2, Ports: 2,
		Fabric: schedules.Benes, Mode: schedules.Partial,
		Circuits: []schedules.Circuit{
			{Src: 0, Dst: 1, Bytes: 1e6, Path: f.NewPath(0, 1, 0)},
			{Src: 1, Dst: 0, Bytes: 1e6, Path: f.NewPath(1, 0, 0)},
			{Src: 0, Dst: 0, Bytes: 1e6, Path: f.NewPath(0, 0, 0), Group: 1},
		},
	}
	m := fake.Model{Alpha: 1e-3, Bandwidth: 1e9, OutlierFactor: 1} // 2 ms per MB, no noise
	devs := []transfer.Device{{GPU: 0}, {GPU: 1}}
	es, err := hil.OpenEngines(context.Background(), "fake", m.String(), devs, hil.Pairs(s), transfer.CE)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer es.Close()
	live, err := hil.Replay(context.Background(), s, hil.Env{Transfers: es, AlphaR: time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range live.Commands {
		fmt.Printf("command %d: %v\n", c.ID, c.Switches)
	}
	fmt.Printf("%d circuits completed, timeline valid: %v\n", len(live.Circuits), len(schedules.VerifyTimeline(s, live.Timeline)) == 0)
	// Output:
	// command 0: [0:0=cross]
	// command 1: [0:0=bar]
	// 3 circuits completed, timeline valid: true
}

// The same 2×2 example compiled: each endpoint's program waits for its predecessors' end stamps
// and for its reconfigurations' commands, then copies. On the fake device's virtual clock the
// stamps are exactly what the emulator predicts: the switch goes to Cross at 0 (α_r = 1 ms),
// circuits 0 and 1 copy for 2 ms, the switch goes back to Bar, circuit 2 copies.
func ExampleReplayCompiled() {
	f, _ := benes.New(2)
	s := &schedules.Schedule{
		Version: schedules.FormatVersion, Algorithm: "example", N: 2, Ports: 2,
		Fabric: schedules.Benes, Mode: schedules.Partial,
		Circuits: []schedules.Circuit{
			{Src: 0, Dst: 1, Bytes: 1e6, Path: f.NewPath(0, 1, 0)},
			{Src: 1, Dst: 0, Bytes: 1e6, Path: f.NewPath(1, 0, 0)},
			{Src: 0, Dst: 0, Bytes: 1e6, Path: f.NewPath(0, 0, 0), Group: 1},
		},
	}
	m := fake.Model{Alpha: 1e-3, Bandwidth: 1e9, OutlierFactor: 1} // 2 ms per MB
	dev := hil.FakeDevice(m, []int{0, 1}, true, 0)
	live, err := hil.ReplayCompiled(context.Background(), s, dev, emulator.ParallelReconfig(1e-3))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range live.Timeline.Circuits {
		fmt.Printf("circuit %d: %.1f..%.1f ms\n", c.Circuit, c.TransmitStart*1e3, c.End*1e3)
	}
	fmt.Println(live.Execution, "commands:", len(live.Commands))
	// Output:
	// circuit 0: 1.0..3.0 ms
	// circuit 1: 1.0..3.0 ms
	// circuit 2: 4.0..6.0 ms
	// compiled commands: 2
}
