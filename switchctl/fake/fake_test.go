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

// TestBatchTiming: with B = 4 a command of 6 changes is two requests, ⌈6/4⌉·T_r + T_w; the
// first four changes go with the first request, the last two with the second.
func TestBatchTiming(t *testing.T) {
	tr, tw := 3*time.Millisecond, 6*time.Millisecond
	w := switchtest.Fabric{Ports: 8, Backend: "fake", TR: tr, TW: tw, Header: "batch: 4\n"}.Wiring(t)
	log := &switchctl.ChangeLog{}
	c := fake.New(w, switchctl.Options{Log: log})
	var batch []switchctl.Change
	for _, s := range w.Switches[:6] {
		batch = append(batch, switchctl.Change{Switch: s.Switch, State: switchctl.Cross})
	}
	start := time.Now()
	if err := c.Apply(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if want := 2*tr + tw; took < want || took > want+200*time.Millisecond {
		t.Errorf("6 changes with B=4 took %v, want about 2·T_r + T_w = %v", took, want)
	}
	es := log.Entries(0)
	if len(es) != 6 {
		t.Fatalf("%d entries, want 6", len(es))
	}
	t0 := es[0].Commanded
	for i, e := range es {
		r := time.Duration(i / 4)
		if e.Commanded.Sub(t0) != r*tr || e.Acknowledged.Sub(t0) != (r+1)*tr || e.Settled.Sub(e.Acknowledged) != tw {
			t.Errorf("entry %d: commanded +%v, acknowledged +%v, settled +%v; want request %d: +%v, +%v, +%v",
				i, e.Commanded.Sub(t0), e.Acknowledged.Sub(t0), e.Settled.Sub(t0), r, r*tr, (r+1)*tr, (r+1)*tr+tw)
		}
	}
}

// TestSettleRule: two commands issued together queue at the station; the second starts when the
// first's request is done (settles overlap) or only once the first has settled (serial_settle).
// The goroutines may be run late and in either order on a loaded machine: the gap is taken
// between whichever started first and the other, and the first of five tries where the second
// arrived while the first held the station counts.
func TestSettleRule(t *testing.T) {
	tr, tw := 4*time.Millisecond, 10*time.Millisecond
	for _, tc := range []struct {
		header string
		gap    time.Duration // second command's start after the first's
	}{{"", tr}, {"serial_settle: true\n", tr + tw}} {
		var gap time.Duration
		for try := 0; try < 5; try++ {
			w := switchtest.Fabric{Ports: 4, Backend: "fake", TR: tr, TW: tw, Header: tc.header}.Wiring(t)
			log := &switchctl.ChangeLog{}
			c := fake.New(w, switchctl.Options{Log: log})
			done := make(chan error, 1)
			go func() {
				done <- c.Apply(context.Background(), []switchctl.Change{{Switch: w.Switches[0].Switch, State: switchctl.Cross}})
			}()
			time.Sleep(tr / 4) // the first is at the station
			if err := c.Apply(context.Background(), []switchctl.Change{{Switch: w.Switches[1].Switch, State: switchctl.Cross}}); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			es := log.Entries(0)
			if len(es) != 2 {
				t.Fatalf("%q: %d entries, want 2", tc.header, len(es))
			}
			gap = es[1].Commanded.Sub(es[0].Commanded).Abs()
			// The station keeps float seconds: its times come back to the nanosecond.
			if gap >= tc.gap-time.Microsecond && gap <= tc.gap+time.Microsecond {
				break
			}
		}
		if gap < tc.gap-time.Microsecond || gap > tc.gap+time.Microsecond {
			t.Errorf("%q: second command started %v after the first, want %v", tc.header, gap, tc.gap)
		}
	}
}
