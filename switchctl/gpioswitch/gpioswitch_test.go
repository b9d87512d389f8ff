package gpioswitch_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/conn/v3/pin"

	"github.com/tetris-hil/tetris-hil/switchctl"
	"github.com/tetris-hil/tetris-hil/switchctl/gpioswitch"
	"github.com/tetris-hil/tetris-hil/switchctl/switchtest"
)

var (
	pins     switchtest.Pins
	register sync.Once
	named    []*switchtest.Pin
)

// registered registers TPIN0..TPIN19 in gpioreg once (it is global), as a board's pins would be.
func registered(t *testing.T) {
	register.Do(func() {
		for k := 0; k < 20; k++ {
			p := pins.New(fmt.Sprintf("TPIN%d", k))
			named = append(named, p)
			if err := gpioreg.Register(p); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func fabric() switchtest.Fabric {
	return switchtest.Fabric{Ports: 8, Backend: "gpio", TR: 0, TW: 300 * time.Microsecond}
}

func TestConformanceRegistry(t *testing.T) {
	registered(t)
	switchtest.Run(t, switchtest.Config{
		Open: func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring) {
			w := fabric().Wiring(t)
			c, err := switchctl.Open(context.Background(), w, switchctl.Options{Log: log})
			if err != nil {
				t.Fatal(err)
			}
			return c, w
		},
	})
}

// group is a gpio.Group over recorded pins that counts its Out calls.
type group struct {
	pins []*switchtest.Pin
	mu   sync.Mutex
	outs int
}

func (g *group) Pins() []pin.Pin {
	out := make([]pin.Pin, len(g.pins))
	for i, p := range g.pins {
		out[i] = p
	}
	return out
}
func (g *group) ByOffset(i int) pin.Pin { return g.pins[i] }
func (g *group) ByName(string) pin.Pin  { return nil }
func (g *group) ByNumber(int) pin.Pin   { return nil }
func (g *group) String() string         { return "testgroup" }
func (g *group) Halt() error            { return nil }
func (g *group) WaitForEdge(time.Duration) (int, gpio.Edge, error) {
	return 0, gpio.NoEdge, gpio.ErrGroupFeatureNotImplemented
}
func (g *group) Out(value, mask gpio.GPIOValue) error {
	g.mu.Lock()
	g.outs++
	g.mu.Unlock()
	for i, p := range g.pins {
		if mask&(1<<i) != 0 {
			if err := p.Out(value&(1<<i) != 0); err != nil {
				return err
			}
		}
	}
	return nil
}
func (g *group) Read(mask gpio.GPIOValue) (gpio.GPIOValue, error) {
	var v gpio.GPIOValue
	for i, p := range g.pins {
		if p.Read() {
			v |= 1 << i
		}
	}
	return v & mask, nil
}

var _ gpio.Group = (*group)(nil)
var _ conn.Resource = (*group)(nil)

func TestConformanceGroup(t *testing.T) {
	var ps switchtest.Pins
	switchtest.Run(t, switchtest.Config{
		Open: func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring) {
			w := fabric().Wiring(t)
			g := &group{}
			for k := range w.Switches {
				g.pins = append(g.pins, ps.New(fmt.Sprintf("G%d", k)))
			}
			c, err := gpioswitch.NewGroup(context.Background(), w, switchctl.Options{Log: log}, g)
			if err != nil {
				t.Fatal(err)
			}
			return c, w
		},
	})
}

// TestGroupOneCall: a batch on one chip is one write.
func TestGroupOneCall(t *testing.T) {
	var ps switchtest.Pins
	w := fabric().Wiring(t)
	g := &group{}
	for k := range w.Switches {
		g.pins = append(g.pins, ps.New(fmt.Sprintf("G%d", k)))
	}
	c, err := gpioswitch.NewGroup(context.Background(), w, switchctl.Options{}, g)
	if err != nil {
		t.Fatal(err)
	}
	g.outs = 0
	var batch []switchctl.Change
	for _, s := range w.Switches[:7] {
		batch = append(batch, switchctl.Change{Switch: s.Switch, State: switchctl.Cross})
	}
	if err := c.Apply(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if g.outs != 1 {
		t.Errorf("a batch of 7 took %d group writes, want 1", g.outs)
	}
	for k, p := range g.pins {
		if want := gpio.Level(k < 7); p.Read() != want {
			t.Errorf("pin %s is %v, want %v", p.N, p.Read(), want)
		}
	}
}

func TestMissingPinsNamed(t *testing.T) {
	registered(t)
	y := strings.Replace(strings.Replace(fabric().YAML(), "TPIN3}", "NOPE1}", 1), "TPIN7}", "NOPE2}", 1)
	w, err := switchctl.ParseWiring("lab.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	_, err = switchctl.Open(context.Background(), w, switchctl.Options{})
	if !errors.Is(err, switchctl.ErrNoHardware) || !strings.Contains(err.Error(), "NOPE1 (line 10), NOPE2 (line 14)") {
		t.Errorf("Open with missing pins = %v, want both named with their lines", err)
	}
}

func TestFailedWrite(t *testing.T) {
	registered(t)
	w := fabric().Wiring(t)
	c, err := switchctl.Open(context.Background(), w, switchctl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	pins.Fail("TPIN2", 1)
	err = c.Apply(context.Background(), []switchctl.Change{{Switch: w.Switches[2].Switch, State: switchctl.Cross}})
	if !errors.Is(err, switchtest.ErrInjected) || !strings.Contains(err.Error(), "TPIN2") {
		t.Errorf("Apply with a failing pin = %v, want the pin's error naming it", err)
	}
}
