package fake_test

import (
	"context"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/fake"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"
)

func TestConformance(t *testing.T) {
	switchtest.Run(t, switchtest.Config{
		Open: func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring) {
			w := switchtest.Fabric{Ports: 8, Backend: "fake", TR: 50 * time.Microsecond, TW: 200 * time.Microsecond}.Wiring(t)
			c, err := switchctl.Open(context.Background(), w, switchctl.Options{Log: log})
			if err != nil {
				t.Fatal(err)
			}
			return c, w
		},
	})
}

// TestTiming checks Er-El and Feitelson's cost: k changes take k·T_r serialised plus one T_w
// overlapped, and each change settles T_w after its own command.
func TestTiming(t *testing.T) {
	tr, tw := 2*time.Millisecond, 10*time.Millisecond
	w := switchtest.Fabric{Ports: 4, Backend: "fake", TR: tr, TW: tw}.Wiring(t)
	log := &switchctl.ChangeLog{}
	c := fake.New(w, switchctl.Options{Log: log})
	var batch []switchctl.Change
	for _, s := range w.Switches[:4] {
		batch = append(batch, switchctl.Change{Switch: s.Switch, State: switchctl.Cross})
	}
	start := time.Now()
	if err := c.Apply(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	want := 4*tr + tw
	if took < want || took > want+50*time.Millisecond {
		t.Errorf("4 changes took %v, want about 4·T_r + T_w = %v", took, want)
	}
	es := log.Entries(0)
	for i, e := range es {
		if d := e.Settled.Sub(e.Acknowledged); d != tw {
			t.Errorf("entry %d settles %v after its command is done, want T_w = %v", i, d, tw)
		}
		if i > 0 && e.Commanded.Before(es[i-1].Acknowledged) {
			t.Errorf("command %d started before command %d was done: not serialised", i, i-1)
		}
	}
}
