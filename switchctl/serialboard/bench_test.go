package serialboard_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/benchfile"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
	"github.com/tetris-hil/tetris-hil/switchctl/serialboard"
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

// TestBenchOnBoard: switch bench against the board emulator (over an in-memory pipe) recovers
// the T_r, T_w and B the board was configured with: B = 16 for a board that takes a whole line
// per request (the client's lines carry 16 channels), else the board's own. The emulator's delays
// are sleeps that a loaded machine stretches but never shortens, so the bench gets five tries
// and the first within bounds counts.
func TestBenchOnBoard(t *testing.T) {
	tr, tw := 2*time.Millisecond, 4*time.Millisecond
	for _, tc := range []struct{ board, want int }{{0, 16}, {8, 8}, {2, 2}} {
		w := fabric(8, "").Wiring(t)
		var f *benchfile.File
		for try := 1; try <= 5; try++ {
			f = benchBoard(t, w, boardemu.Config{Channels: channels(w), Latency: tr, Settle: tw, Batch: tc.board})
			// Every batch tried counts ⌈k/B⌉ requests.
			counts := true
			for _, b := range f.BatchBusy {
				counts = counts && b.Requests == (b.Changes+tc.want-1)/tc.want
			}
			if counts && f.Batch == tc.want && f.TRSeconds >= tr.Seconds() && f.TRSeconds <= 1.25*tr.Seconds() && f.TWSeconds >= 0.95*tw.Seconds() && f.TWSeconds <= 1.25*tw.Seconds() {
				break
			}
			if try == 5 {
				t.Errorf("board B %d: bench B %d, T_r %v, T_w %v; want B %d, T_r %v, T_w %v (batches %+v)", tc.board, f.Batch, f.TRSeconds, f.TWSeconds, tc.want, tr, tw, f.BatchBusy)
			}
		}
	}
}

func benchBoard(t *testing.T, w *switchctl.Wiring, cfg boardemu.Config) *benchfile.File {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	board := boardemu.New(cfg, nil)
	dev, host := net.Pipe()
	defer dev.Close()
	go board.Serve(ctx, dev)
	log := &switchctl.ChangeLog{}
	c, err := serialboard.NewBoard(ctx, w, switchctl.Options{Log: log}, host, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	f, err := switchctl.Bench(ctx, c, log, w, switchctl.BenchOptions{Rounds: 20, BatchReps: 5})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestWiringBatch: a serial wiring map's default B is the channels one SW line carries.
func TestWiringBatch(t *testing.T) {
	if w := fabric(4, "").Wiring(t); w.Batch != serialboard.MaxBatch {
		t.Errorf("serial wiring map: default batch %d, want MaxBatch = %d", w.Batch, serialboard.MaxBatch)
	}
}
