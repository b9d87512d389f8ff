package benes_test

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Route a full 4-port permutation with plain looping and print each connection's path as the
// [stage, switch, in_lane, out_lane] traversals of the schedule format.
func ExampleFabric_Route() {
	f, _ := benes.New(4)
	conns := []benes.Conn{{Src: 0, Dst: 2}, {Src: 1, Dst: 0}, {Src: 2, Dst: 3}, {Src: 3, Dst: 1}}
	choices, err := f.Route(conns, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, c := range conns {
		fmt.Printf("%d->%d %v\n", c.Src, c.Dst, f.PathFrom(c.Src, c.Dst, choices[i]))
	}
	// Output:
	// 0->2 [{0 0 0 0} {1 0 0 1} {2 1 0 0}]
	// 1->0 [{0 0 1 1} {1 1 0 0} {2 0 1 0}]
	// 2->3 [{0 1 0 1} {1 1 1 1} {2 1 1 1}]
	// 3->1 [{0 1 1 0} {1 0 1 0} {2 0 0 1}]
}

// A Router routes one matching after another on the same fabric with the same memory; each
// result is what Fabric.Route would return, valid until the Router's next call.
func ExampleRouter() {
	f, _ := benes.New(4)
	rt := f.NewRouter()
	for _, conns := range [][]benes.Conn{
		{{Src: 0, Dst: 2}, {Src: 1, Dst: 0}, {Src: 2, Dst: 3}, {Src: 3, Dst: 1}},
		{{Src: 0, Dst: 1}, {Src: 1, Dst: 1}},
		{{Src: 0, Dst: 1}, {Src: 1, Dst: 0}},
	} {
		choices, err := rt.Route(conns, nil)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(choices)
	}
	// Output:
	// [0 1 1 0]
	// benes: connections 0 (0->1) and 1 (1->1) share output port 1
	// [0 1]
}

// A Chooser sees every constraint component with its orientation-0 children and may flip it;
// here every component that would send connection 0 upper is flipped.
func ExampleChooser() {
	f, _ := benes.New(8)
	conns := []benes.Conn{{Src: 0, Dst: 5}, {Src: 1, Dst: 2}, {Src: 2, Dst: 7}, {Src: 3, Dst: 0}}
	choices, _ := f.Route(conns, func(c benes.Component, _ []uint32) bool {
		fmt.Printf("level %d block %d conns %v children %v\n", c.Level, c.Block, c.Conns, c.Child0)
		return c.Conns[0] == 0
	})
	fmt.Printf("choices %02b\n", choices)
	// Output:
	// level 0 block 0 conns [0 1] children [0 1]
	// level 0 block 0 conns [2 3] children [0 1]
	// level 1 block 0 conns [1 2] children [0 1]
	// level 1 block 1 conns [0 3] children [0 1]
	// choices [11 00 10 01]
}

// Query picks, among all paths of a connection, one that can start earliest given what is
// already planned; Commit then records it.
func ExamplePlan_Query() {
	f, _ := benes.New(4)
	p := benes.NewPlan(f, 1) // α_r = 1 s
	p.Commit(0, 0, 0, 0, 10) // 0->0 on the upper child over [0, 10)
	p.Commit(3, 3, 1, 0, 10) // 3->3 on the lower child over [0, 10)

	// Ports 1 and 2 are idle, but every path from 1 to 2 needs a switch that a running circuit
	// holds in the other state: it can start only after that circuit ends and α_r passes.
	choices, start, changes := p.Query(1, 2)
	fmt.Printf("1->2: choices %b, start %v, %d state changes\n", choices, start, changes)
	p.Commit(1, 2, choices, start, start+5)

	state, fEnd, q := p.SwitchState(0, 0)
	fmt.Printf("input switch 0: %v, last user ends %v, reconfigured by %v\n", state, fEnd, q)
	// Output:
	// 1->2: choices 0, start 11, 2 state changes
	// input switch 0: cross, last user ends 16, reconfigured by 11
}

// A path is held compact (ports and choices) and read hop by hop; a hop list that is not a
// physical path, such as one read from a broken file, is kept as it is for the verifier.
func ExampleFabric_NewPath() {
	f, _ := benes.New(8)
	p := f.NewPath(1, 6, 0b10)
	for i, t := range p.All() {
		fmt.Printf("hop %d: stage %d switch %d lane %d->%d (%s)\n", i, t.Stage, t.Switch, t.In, t.Out, t.State())
	}
	b, _ := p.MarshalJSON()
	fmt.Println(string(b))
	hops := p.Traversals()
	hops[2].Switch ^= 1
	broken := benes.PathOf(hops)
	fmt.Println(f.CheckPath(1, 6, p), "/", f.CheckPath(1, 6, broken))
	// Output:
	// hop 0: stage 0 switch 0 lane 1->0 (cross)
	// hop 1: stage 1 switch 0 lane 0->1 (cross)
	// hop 2: stage 2 switch 1 lane 0->1 (cross)
	// hop 3: stage 3 switch 1 lane 1->1 (bar)
	// hop 4: stage 4 switch 3 lane 0->0 (bar)
	// [[0,0,1,0],[1,0,0,1],[2,1,0,1],[3,1,1,1],[4,3,0,0]]
	// <nil> / traversal 2 is [2,0,0,1], the wiring leads to stage 2 switch 1 lane 0
}
