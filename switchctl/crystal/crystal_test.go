package crystal_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/boardemu"
	"github.com/tetris-hil/tetris-hil/switchctl/crystal"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"
)

const dead = 300 * time.Microsecond

func gpioFabric() switchtest.Fabric {
	return switchtest.Fabric{Ports: 8, Backend: "crystal", TR: 0, TW: 200 * time.Microsecond,
		Header: "crystal:\n  transport: gpio\n  hv_pin: THV\n  dead_time: 300us\n"}
}

var (
	regPins  switchtest.Pins
	register sync.Once
)

func registered(t *testing.T) {
	register.Do(func() {
		names := []string{"THV"}
		for k := 0; k < 20; k++ {
			names = append(names, fmt.Sprintf("TXA%d", k), fmt.Sprintf("TXB%d", k))
		}
		for _, n := range names {
			if err := gpioreg.Register(regPins.New(n)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestConformanceGPIO(t *testing.T) {
	registered(t)
	switchtest.Run(t, switchtest.Config{
		InitialState: switchctl.Off, SafeState: switchctl.Off,
		Open: func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring) {
			w := gpioFabric().Wiring(t)
			c, err := switchctl.Open(context.Background(), w, switchctl.Options{Log: log})
			if err != nil {
				t.Fatal(err)
			}
			return c, w
		},
	})
	checkInterlock(t, regPins.Events(), dead)
}

func serialFabric() switchtest.Fabric {
	return switchtest.Fabric{Ports: 8, Backend: "crystal", TR: 0, TW: 200 * time.Microsecond,
		Header: "crystal:\n  transport: serial\n  dead_time: 300us\nserial:\n  read_timeout: 100ms\n"}
}

func TestConformanceSerial(t *testing.T) {
	var boards []*boardemu.Board
	switchtest.Run(t, switchtest.Config{
		InitialState: switchctl.Off, SafeState: switchctl.Off,
		Open: func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring) {
			w := serialFabric().Wiring(t)
			var chs []int
			for _, s := range w.Switches {
				chs = append(chs, s.Channel)
			}
			b := boardemu.New(boardemu.Config{Kind: boardemu.CrystalBoard, Channels: chs, Latency: 100 * time.Microsecond}, nil)
			boards = append(boards, b)
			p, err := boardemu.StartPTY(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			c, err := switchctl.Open(context.Background(), w, switchctl.Options{Log: log, Port: p.Path})
			if err != nil {
				t.Fatal(err)
			}
			return c, w
		},
	})
	for _, b := range boards {
		es := b.Log().Entries()
		for _, e := range es {
			if e.Violation != "" {
				t.Errorf("board log line %d (%s): %s", e.Seq, e.Cmd, e.Violation)
			}
		}
		if last := es[len(es)-1]; last.Cmd != "SAFE" {
			t.Errorf("the board's log ends in %q, want SAFE", last.Cmd)
		}
	}
}

// newRecorded opens a crystal controller over fresh recorded pins.
func newRecorded(t *testing.T, ps *switchtest.Pins) (*crystal.Controller, *switchctl.Wiring) {
	t.Helper()
	w := gpioFabric().Wiring(t)
	var pins []gpio.PinIO
	for k := range w.Switches {
		pins = append(pins, ps.New(fmt.Sprintf("A%d", k)), ps.New(fmt.Sprintf("B%d", k)))
	}
	c, err := crystal.New(context.Background(), w, switchctl.Options{}, crystal.NewGPIODriver(pins, ps.New("HV")))
	if err != nil {
		t.Fatal(err)
	}
	return c, w
}

// checkInterlock replays the pin events: at no instant are both crystals of an element high; a
// crystal goes high only with high voltage on and at least the dead time after its element's
// other crystal went low; the last event leaves high voltage off with every crystal low.
func checkInterlock(t *testing.T, events []switchtest.PinEvent, dead time.Duration) {
	t.Helper()
	level := map[string]gpio.Level{}
	lowAt := map[string]time.Time{}
	other := func(n string) string {
		switch {
		case strings.Contains(n, "A"):
			return strings.Replace(n, "A", "B", 1)
		case strings.Contains(n, "B"):
			return strings.Replace(n, "B", "A", 1)
		}
		return ""
	}
	isHV := func(n string) bool { return strings.HasSuffix(n, "HV") }
	var hv string
	for i, e := range events {
		if isHV(e.Pin) {
			hv = e.Pin
			if !e.Level {
				for n, l := range level {
					if bool(l) && !isHV(n) {
						t.Errorf("event %d: high voltage off with crystal %s still on", i, n)
					}
				}
			}
		} else if e.Level {
			o := other(e.Pin)
			if level[o] {
				t.Fatalf("event %d: %s on while %s is on: both crystals of one element energised", i, e.Pin, o)
			}
			if hv == "" || !level[hv] {
				t.Errorf("event %d: %s on with high voltage off", i, e.Pin)
			}
			if at, ok := lowAt[o]; ok && e.At.Sub(at) < dead {
				t.Errorf("event %d: %s on %v after %s went off, want at least the dead time %v", i, e.Pin, e.At.Sub(at), o, dead)
			}
		} else {
			lowAt[e.Pin] = e.At
		}
		level[e.Pin] = e.Level
	}
	if len(events) == 0 {
		t.Fatal("no pin events")
	}
	if last := events[len(events)-1]; !isHV(last.Pin) || bool(last.Level) {
		t.Errorf("the last pin event is %s=%v, want high voltage off", last.Pin, last.Level)
	}
}

// TestInterlockConcurrent: four goroutines change overlapping switches at random; the recorded
// pins never show both crystals of an element on.
func TestInterlockConcurrent(t *testing.T) {
	var ps switchtest.Pins
	c, w := newRecorded(t, &ps)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; i < 25; i++ {
				var batch []switchctl.Change
				for _, k := range rng.Perm(8)[:1+rng.IntN(8)] {
					batch = append(batch, switchctl.Change{Switch: w.Switches[k].Switch, State: switchctl.State(rng.IntN(2))})
				}
				if err := c.Apply(context.Background(), batch); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 9 {
					if err := c.Halt(context.Background()); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := ps.Events()
	checkInterlock(t, ev, dead)
	ons := 0
	for _, e := range ev {
		if e.Level && e.Pin != "HV" {
			ons++
		}
	}
	if ons < 50 {
		t.Errorf("only %d crystals switched on: the test did not exercise the interlock", ons)
	}
}

// TestErrorPaths: a failing pin, a failing break and a cancelled dead time each end in the
// safe state (every crystal off, high voltage off), and the controller works afterwards.
func TestErrorPaths(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(ps *switchtest.Pins, w *switchctl.Wiring) context.Context
		want  error
	}{
		{"make fails", func(ps *switchtest.Pins, _ *switchctl.Wiring) context.Context {
			ps.Fail("B0", 1)
			return context.Background()
		}, switchtest.ErrInjected},
		{"break fails", func(ps *switchtest.Pins, _ *switchctl.Wiring) context.Context {
			ps.Fail("A1", 1)
			return context.Background()
		}, switchtest.ErrInjected},
		{"cancelled in the dead time", func(ps *switchtest.Pins, _ *switchctl.Wiring) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Microsecond, cancel)
			return ctx
		}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ps switchtest.Pins
			c, w := newRecorded(t, &ps)
			s0, s1 := w.Switches[0].Switch, w.Switches[1].Switch
			// s0 and s1 on crystal A (Bar).
			if err := c.Apply(context.Background(), []switchctl.Change{{Switch: s0, State: switchctl.Bar}, {Switch: s1, State: switchctl.Bar}}); err != nil {
				t.Fatal(err)
			}
			ctx := tc.setup(&ps, w)
			err := c.Apply(ctx, []switchctl.Change{{Switch: s0, State: switchctl.Cross}, {Switch: s1, State: switchctl.Cross}})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Apply = %v, want %v", err, tc.want)
			}
			checkInterlock(t, ps.Events(), dead)
			st, err := c.States(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range st {
				if s.State != switchctl.Off {
					t.Errorf("after the error switch %s is %s, want off", s.Switch, s.State)
				}
			}
			if err := c.Apply(context.Background(), []switchctl.Change{{Switch: s0, State: switchctl.Cross}}); err != nil {
				t.Errorf("Apply after recovering: %v", err)
			}
			if err := c.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			checkInterlock(t, ps.Events(), dead)
		})
	}
}

// TestSafeFailureReported: when the high-voltage pin cannot be switched off the error says so.
func TestSafeFailureReported(t *testing.T) {
	var ps switchtest.Pins
	c, w := newRecorded(t, &ps)
	if err := c.Apply(context.Background(), []switchctl.Change{{Switch: w.Switches[0].Switch, State: switchctl.Cross}}); err != nil {
		t.Fatal(err)
	}
	ps.Fail("HV", 1)
	err := c.Halt(context.Background())
	if !errors.Is(err, switchtest.ErrInjected) || !strings.Contains(err.Error(), "high voltage") {
		t.Errorf("Halt with a stuck high-voltage pin = %v, want an error naming it", err)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Errorf("Close (the pin works again): %v", err)
	}
	checkInterlock(t, ps.Events(), dead)
}
