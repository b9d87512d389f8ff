package serialboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"
)

// startOSW22 serves one emulated OSW22 per switch of a 4-port fabric on its own pty, all into
// one log, and returns the wiring map naming those ports.
func startOSW22(t *testing.T, cfg boardemu.Config) (*switchctl.Wiring, *boardemu.Log) {
	t.Helper()
	log := boardemu.NewLog(nil)
	f := switchtest.Fabric{Ports: 4, Backend: "osw22", TW: 300 * time.Microsecond, Header: serialTimeouts}
	for k := 0; k < 6; k++ {
		c := cfg
		c.Kind, c.Name, c.Seed = boardemu.OSW22, fmt.Sprintf("sw%d", k), cfg.Seed+uint64(k)
		p, err := boardemu.StartPTY(context.Background(), boardemu.New(c, log))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		f.SwitchPorts = append(f.SwitchPorts, p.Path)
	}
	return f.Wiring(t), log
}

func TestConformanceOSW22(t *testing.T) {
	t.Parallel()
	switchtest.Run(t, switchtest.Config{
		Batches: 4,
		Open: func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring) {
			w, _ := startOSW22(t, boardemu.Config{Latency: 100 * time.Microsecond})
			c, err := switchctl.Open(context.Background(), w, switchctl.Options{Log: log})
			if err != nil {
				t.Fatal(err)
			}
			return c, w
		},
	})
}

// TestOSW22LostSet: a set command that the device drops is caught by S? and sent again.
func TestOSW22LostSet(t *testing.T) {
	t.Parallel()
	w, log := startOSW22(t, boardemu.Config{Drop: 0.3, Seed: 6})
	c, err := switchctl.Open(context.Background(), w, switchctl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for i := 0; i < 6; i++ {
		if err := c.Apply(context.Background(), []switchctl.Change{{Switch: w.Switches[i].Switch, State: switchctl.Cross}}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.States(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.State != switchctl.Cross {
			t.Errorf("switch %s is %s, want cross", s.Switch, s.State)
		}
	}
	// Only a dropped set line exercises the resend (a dropped S? is retried as any query is).
	dropped := 0
	for _, e := range log.Entries() {
		if e.Fault == "dropped" && strings.HasPrefix(e.Cmd, "S ") {
			dropped++
		}
	}
	if dropped == 0 {
		t.Error("no set line was dropped: the test did not exercise the resend")
	}
}
