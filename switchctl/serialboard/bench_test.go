package serialboard_test

import (
	"context"
	"net"
	"testing"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
)

// BenchmarkApply is the host side's cost per Apply of one change (SW, then *OPC?) against the
// board emulator with no injected latency: over an in-memory pipe, and over a pty through
// tarm/serial (the kernel's tty layer and two wake-ups per exchange).
func BenchmarkApply(b *testing.B) {
	for _, transport := range []string{"pipe", "pty"} {
		b.Run(transport, func(b *testing.B) {
			w := fabric(8, "").Wiring(b)
			board := boardemu.New(boardemu.Config{Channels: channels(w)}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var c switchctl.Controller
			var err error
			if transport == "pipe" {
				dev, host := net.Pipe()
				go board.Serve(ctx, dev)
				defer dev.Close()
				c, err = serialboardNewBoard(ctx, w, host)
			} else {
				p, perr := boardemu.StartPTY(ctx, board)
				if perr != nil {
					b.Fatal(perr)
				}
				defer p.Close()
				c, err = switchctl.Open(ctx, w, switchctl.Options{Port: p.Path})
			}
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(ctx)
			ch := []switchctl.Change{{Switch: w.Switches[0].Switch}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ch[0].State = switchctl.State(i % 2)
				if err := c.Apply(ctx, ch); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer() // Close waits up to a read timeout for the reader
		})
	}
}
