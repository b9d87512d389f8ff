package emulator_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// A 2×2 fabric has one switch. Port 0 sends 1 MB to port 1 and then 1 MB to port 0 (a GPU's
// local traffic counted through the fabric here, to keep the example to one switch): the first
// circuit needs Cross, the second Bar, so the switch changes twice.
func ExampleRun() {
	f, _ := benes.New(2)
	s := &schedules.Schedule{
		Version: schedules.FormatVersion, Algorithm: "example", N: 2, Ports: 2,
		Fabric: schedules.Benes, Mode: schedules.Partial,
		Circuits: []schedules.Circuit{
			{Src: 0, Dst: 1, Bytes: 1e6, Path: f.NewPath(0, 1, 0)},
			{Src: 0, Dst: 0, Bytes: 1e6, Path: f.NewPath(0, 0, 0), Group: 1},
		},
	}
	cfg := emulator.Config{
		Transfer: emulator.BandwidthModel(100e9),   // 100 GB/s: 10 µs per MB
		Reconfig: emulator.ParallelReconfig(10e-6), // α_r = 10 µs
	}
	res, tl, err := emulator.Run(context.Background(), s, nil, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range tl.Circuits {
		fmt.Printf("circuit %d: reconfigure from %.0f µs, transmit %.0f..%.0f µs\n",
			c.Circuit, c.ReconfigStart*1e6, c.TransmitStart*1e6, c.End*1e6)
	}
	fmt.Printf("completion %.0f µs, %d switch changes\n", res.Completion*1e6, res.StateChanges)
	// Output:
	// circuit 0: reconfigure from 0 µs, transmit 10..20 µs
	// circuit 1: reconfigure from 20 µs, transmit 30..40 µs
	// completion 40 µs, 2 switch changes
}

// NewOrder derives what the emulator and the live runner both walk. On a 2×2 fabric, 0→1 and
// 1→0 need the switch in Cross (one epoch, from Bar, that requires nothing), then 0→0 needs it
// back in Bar: a second epoch that requires both Cross circuits to have completed.
func ExampleNewOrder() {
	f, _ := benes.New(2)
	s := &schedules.Schedule{
		Version: schedules.FormatVersion, Algorithm: "example", N: 2, Ports: 2,
		Fabric: schedules.Benes, Mode: schedules.Partial,
		Circuits: []schedules.Circuit{
			{Src: 0, Dst: 1, Bytes: 1, Path: f.NewPath(0, 1, 0)},
			{Src: 1, Dst: 0, Bytes: 1, Path: f.NewPath(1, 0, 0)},
			{Src: 0, Dst: 0, Bytes: 1, Path: f.NewPath(0, 0, 0), Group: 1},
		},
	}
	o, err := emulator.NewOrder(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	for e, ep := range o.Epochs() {
		fmt.Printf("epoch %d: switch (%d,%d) %s→%s, requires %d circuits, users %v\n",
			e, ep.Stage, ep.Switch, ep.From, ep.To, o.RequireCount(e), o.Users(e))
	}
	for c := 0; c < o.Len(); c++ {
		fmt.Printf("circuit %d: after circuits %v, waits for epochs %v\n", c, o.Predecessors(c), o.Waits(c))
	}
	// Output:
	// epoch 0: switch (0,0) bar→cross, requires 0 circuits, users [0 1]
	// epoch 1: switch (0,0) cross→bar, requires 2 circuits, users [2]
	// circuit 0: after circuits [], waits for epochs [0]
	// circuit 1: after circuits [], waits for epochs [0]
	// circuit 2: after circuits [0 1], waits for epochs [1]
}

// A toy driver of the Walker, the way a live runner drives it: it keeps a list of what is under
// way (circuits transmitting, commands settling) and handles whichever finishes first, flushing
// the walker's pending command after each report. Here every transfer takes 10 µs and every
// command 5 µs; a live runner would instead wait for its GPUs and its switch controller.
func ExampleWalker() {
	f, _ := benes.New(2)
	s := &schedules.Schedule{
		Version: schedules.FormatVersion, Algorithm: "example", N: 2, Ports: 2,
		Fabric: schedules.Benes, Mode: schedules.Partial,
		Circuits: []schedules.Circuit{
			{Src: 0, Dst: 1, Bytes: 1, Path: f.NewPath(0, 1, 0)},
			{Src: 1, Dst: 0, Bytes: 1, Path: f.NewPath(1, 0, 0)},
			{Src: 0, Dst: 0, Bytes: 1, Path: f.NewPath(0, 0, 0), Group: 1},
		},
	}
	o, err := emulator.NewOrder(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	w := emulator.NewWalker(o)
	type job struct {
		end     float64
		circuit int // −1 for a command
		cmd     int
		start   float64
	}
	var busy []job
	transmit := func(ready []int32, t float64) {
		for _, c := range ready {
			fmt.Printf("%3.0f µs: circuit %d transmits\n", t*1e6, c)
			busy = append(busy, job{end: t + 10e-6, circuit: int(c)})
		}
	}
	command := func() {
		if cmd, ok := w.Flush(); ok {
			for _, e := range cmd.Epochs {
				ep := o.Epoch(int(e))
				fmt.Printf("%3.0f µs: command %d sets switch (%d,%d) to %s\n", cmd.Requested*1e6, cmd.ID, ep.Stage, ep.Switch, ep.To)
			}
			busy = append(busy, job{end: cmd.Requested + 5e-6, circuit: -1, cmd: cmd.ID, start: cmd.Requested})
		}
	}
	ready, _ := w.Start()
	transmit(ready, 0)
	command()
	for !w.Done() {
		// Handle whatever finishes first.
		k := 0
		for i := range busy {
			if busy[i].end < busy[k].end {
				k = i
			}
		}
		j := busy[k]
		busy = append(busy[:k], busy[k+1:]...)
		if j.circuit >= 0 {
			ready, err = w.Completed(j.circuit, j.end)
		} else {
			ready, err = w.Settled(j.cmd, j.start, j.end)
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		transmit(ready, j.end)
		command()
	}
	tl, _ := w.Timeline()
	res := emulator.Summarize(s, nil, tl, emulator.Config{Transfer: emulator.BandwidthModel(1), Reconfig: emulator.ParallelReconfig(5e-6)}, w.Counts())
	fmt.Printf("completion %.0f µs, %d switch changes in %d commands\n", res.Completion*1e6, res.StateChanges, res.ReconfigEvents)
	// Output:
	//   0 µs: command 0 sets switch (0,0) to cross
	//   5 µs: circuit 0 transmits
	//   5 µs: circuit 1 transmits
	//  15 µs: command 1 sets switch (0,0) to bar
	//  20 µs: circuit 2 transmits
	// completion 30 µs, 2 switch changes in 2 commands
}

// RunChecked executes a schedule and checks its timeline with the verifier, keeping only the
// result: what emulate does unless asked for timeline files. A barrier schedule on a 2×2
// fabric: round 0 sends 0→1 (1 MB) and 1→0 (2 MB) with the switch in Cross, after a 10 µs
// change; round 1 waits for both, changes the switch back to Bar and sends 0→0.
func ExampleRunChecked() {
	f, _ := benes.New(2)
	s := &schedules.Schedule{
		Version: schedules.FormatVersion, Algorithm: "example", N: 2, Ports: 2,
		Fabric: schedules.Benes, Mode: schedules.Barrier,
		Circuits: []schedules.Circuit{
			{Src: 0, Dst: 1, Bytes: 1e6, Path: f.NewPath(0, 1, 0)},
			{Src: 1, Dst: 0, Bytes: 2e6, Path: f.NewPath(1, 0, 0)},
			{Src: 0, Dst: 0, Bytes: 1e6, Path: f.NewPath(0, 0, 0), Group: 1},
		},
	}
	cfg := emulator.Config{Transfer: emulator.BandwidthModel(100e9), Reconfig: emulator.ParallelReconfig(10e-6)}
	res, violations, err := emulator.RunChecked(context.Background(), s, nil, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("completion %.0f µs, %d rounds, %d switch changes, %d violations\n", res.Completion*1e6, res.Groups, res.StateChanges, len(violations))
	// Output:
	// completion 50 µs, 2 rounds, 2 switch changes, 0 violations
}
