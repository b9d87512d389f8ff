package boardemu_test

import (
	"context"
	"fmt"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
	_ "github.com/tetris-hil/tetris-hil/switchctl/serialboard"
)

// The serial backend opens the emulated board's pseudo-terminal with tarm/serial like a real
// port; the board logs every command it received.
func ExampleStartPTY() {
	w, err := switchctl.ParseWiring("lab.yaml", []byte(`
version: 1
ports: 2
backend: serial
t_r: 2ms
t_w: 5ms
switches:
  - {stage: 0, index: 0, channel: 7}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	board := boardemu.New(boardemu.Config{Channels: []int{7}}, nil)
	p, err := boardemu.StartPTY(ctx, board)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	c, err := switchctl.Open(ctx, w, switchctl.Options{Port: p.Path})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := c.Apply(ctx, []switchctl.Change{{Switch: switchctl.Addr{Stage: 0, Index: 0}, State: switchctl.Cross}}); err != nil {
		fmt.Println(err)
	}
	fmt.Println("channel 7:", board.State(7))
	if err := c.Close(ctx); err != nil {
		fmt.Println(err)
	}
	for _, e := range board.Log().Entries() {
		fmt.Printf("%q -> %q\n", e.Cmd, e.Reply)
	}
	// Output:
	// channel 7: CROSS
	// "*IDN?" -> "TETRIS-HIL,SWB-2X2,EMU0001,1.0"
	// "SW 7 CROSS" -> "OK"
	// "*OPC?" -> "1"
	// "SAFE" -> "OK"
}
