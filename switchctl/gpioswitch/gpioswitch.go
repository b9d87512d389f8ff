// Package gpioswitch drives 2×2 switches from GPIO pins through periph (backend "gpio"): one pin
// per element, low = Bar, high = Cross. When every pin of the wiring map sits on one GPIO chip
// the pins change together in one call (a periph gpio.Group over the kernel's line-set
// interface); otherwise pin by pin. A change counts as settled T_w after its write.
//
// periph's host.Init succeeds on machines without GPIO, so absent hardware shows up as pins that
// gpioreg.ByName does not know: Open names every one of them.
package gpioswitch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/host/v3"
	"periph.io/x/host/v3/gpioioctl"

	"github.com/tetris-hil/tetris-hil/switchctl"
)

func init() {
	switchctl.Register("gpio", switchctl.BackendFunc(func(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options) (switchctl.Controller, error) {
		names := make([]string, len(w.Switches))
		for i, s := range w.Switches {
			names[i] = s.Pin
		}
		if g := chipGroup(names); g != nil {
			return NewGroup(ctx, w, opts, g)
		}
		pins, err := ResolvePins(w, names)
		if err != nil {
			return nil, err
		}
		return New(ctx, w, opts, pins)
	}))
}

var initOnce = sync.OnceValue(func() error {
	_, err := host.Init()
	return err
})

// ResolvePins initialises periph's host drivers and looks every name up in gpioreg; the error
// names every pin that is missing and the line of the wiring map that asks for it.
func ResolvePins(w *switchctl.Wiring, names []string) ([]gpio.PinIO, error) {
	if err := initOnce(); err != nil {
		return nil, fmt.Errorf("gpio: periph host drivers: %w", err)
	}
	line := map[string]int{}
	for _, s := range w.Switches {
		for _, n := range []string{s.Pin, s.PinA, s.PinB} {
			if n != "" {
				line[n] = s.Line
			}
		}
	}
	pins := make([]gpio.PinIO, len(names))
	var missing []string
	for i, n := range names {
		if pins[i] = gpioreg.ByName(n); pins[i] == nil {
			if l := line[n]; l > 0 {
				missing = append(missing, fmt.Sprintf("%s (line %d)", n, l))
			} else {
				missing = append(missing, n)
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("gpio: %w: wiring map %s names pins this machine does not have: %s (run on the lab host, or use --fake)",
			switchctl.ErrNoHardware, w.Path, strings.Join(missing, ", "))
	}
	return pins, nil
}

// chipGroup returns the kernel line set over names when they all sit on one GPIO chip, nil
// otherwise (other hosts, pins on several chips, or the request failing).
func chipGroup(names []string) gpio.Group {
	if initOnce() != nil {
		return nil
	}
	for _, chip := range gpioioctl.Chips {
		all := true
		for _, n := range names {
			all = all && chip.ByName(n) != nil
		}
		if all {
			ls, err := chip.LineSet(gpioioctl.LineOutput, gpio.NoEdge, gpio.PullNoChange, names...)
			if err != nil {
				return nil
			}
			return ls
		}
	}
	return nil
}

// bank writes and reads the pins, in wiring-map order.
type bank interface {
	write(levels map[int]gpio.Level) error
	read() ([]gpio.Level, error)
}

type pinBank []gpio.PinIO

func (b pinBank) write(levels map[int]gpio.Level) error {
	var errs []error
	for i, l := range levels {
		if err := b[i].Out(l); err != nil {
			errs = append(errs, fmt.Errorf("gpio %s: %w", b[i].Name(), err))
		}
	}
	return errors.Join(errs...)
}

func (b pinBank) read() ([]gpio.Level, error) {
	out := make([]gpio.Level, len(b))
	for i, p := range b {
		out[i] = p.Read()
	}
	return out, nil
}

type groupBank struct{ g gpio.Group }

func (b groupBank) write(levels map[int]gpio.Level) error {
	var value, mask gpio.GPIOValue
	for i, l := range levels {
		mask |= 1 << i
		if l {
			value |= 1 << i
		}
	}
	if err := b.g.Out(value, mask); err != nil {
		return fmt.Errorf("gpio group %s: %w", b.g, err)
	}
	return nil
}

func (b groupBank) read() ([]gpio.Level, error) {
	n := len(b.g.Pins())
	v, err := b.g.Read(1<<n - 1)
	if err != nil {
		return nil, fmt.Errorf("gpio group %s: %w", b.g, err)
	}
	out := make([]gpio.Level, n)
	for i := range out {
		out[i] = v&(1<<i) != 0
	}
	return out, nil
}

// Controller is the GPIO backend.
type Controller struct {
	w   *switchctl.Wiring
	log *switchctl.ChangeLog
	b   bank
	idx map[switchctl.Addr]int

	mu     sync.Mutex
	closed bool
}

// New drives one pin per switch (pins in wiring-map order), writing them one by one. It puts
// every switch in Bar first.
func New(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options, pins []gpio.PinIO) (*Controller, error) {
	if len(pins) != len(w.Switches) {
		return nil, fmt.Errorf("gpio: %d pins for %d switches", len(pins), len(w.Switches))
	}
	return open(ctx, w, opts, pinBank(pins))
}

// NewGroup drives the switches through one pin group whose offset i is switch i of the wiring
// map: every batch is one Out call. It puts every switch in Bar first.
func NewGroup(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options, g gpio.Group) (*Controller, error) {
	if len(g.Pins()) != len(w.Switches) || len(w.Switches) > 64 {
		return nil, fmt.Errorf("gpio group %s: %d pins for %d switches (at most 64)", g, len(g.Pins()), len(w.Switches))
	}
	return open(ctx, w, opts, groupBank{g})
}

func open(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options, b bank) (*Controller, error) {
	c := &Controller{w: w, log: opts.Log, b: b, idx: map[switchctl.Addr]int{}}
	all := map[int]gpio.Level{}
	for i, s := range w.Switches {
		c.idx[s.Switch] = i
		all[i] = gpio.Low
	}
	if err := b.write(all); err != nil {
		return nil, err
	}
	return c, ctx.Err()
}

func level(s switchctl.State) gpio.Level { return s == switchctl.Cross }

// Apply writes the batch's pins (together, with a group) and waits T_w.
func (c *Controller) Apply(ctx context.Context, changes []switchctl.Change) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return switchctl.ErrClosed
	}
	if err := c.w.Check(changes); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	levels := make(map[int]gpio.Level, len(changes))
	for _, ch := range changes {
		levels[c.idx[ch.Switch]] = level(ch.State)
	}
	return c.write(ctx, levels, changes, false)
}

func (c *Controller) write(ctx context.Context, levels map[int]gpio.Level, changes []switchctl.Change, halt bool) error {
	batch := c.log.NewBatch()
	commanded := time.Now()
	if err := c.b.write(levels); err != nil {
		return err
	}
	ack := time.Now()
	err := switchctl.SleepUntil(ctx, ack.Add(c.w.TW))
	for _, ch := range changes {
		// Settled when T_w has elapsed, also if the caller stopped waiting for it.
		c.log.Add(switchctl.Entry{Batch: batch, Switch: ch.Switch, State: ch.State, Halt: halt, Commanded: commanded, Acknowledged: ack, Settled: ack.Add(c.w.TW)})
	}
	return err
}

// States reads the pins back.
func (c *Controller) States(ctx context.Context) ([]switchctl.Setting, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, switchctl.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lv, err := c.b.read()
	if err != nil {
		return nil, err
	}
	out := make([]switchctl.Setting, len(c.w.Switches))
	for i, s := range c.w.Switches {
		out[i] = switchctl.Setting{Switch: s.Switch, State: switchctl.Bar}
		if lv[i] {
			out[i].State = switchctl.Cross
		}
	}
	return out, nil
}

// Halt drives every pin low (Bar).
func (c *Controller) Halt(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return switchctl.ErrClosed
	}
	return c.halt(ctx)
}

func (c *Controller) halt(ctx context.Context) error {
	levels := map[int]gpio.Level{}
	changes := make([]switchctl.Change, len(c.w.Switches))
	for i, s := range c.w.Switches {
		levels[i] = gpio.Low
		changes[i] = switchctl.Change{Switch: s.Switch, State: switchctl.Bar}
	}
	return c.write(ctx, levels, changes, true)
}

// Close halts (even with ctx cancelled) and releases a pin group.
func (c *Controller) Close(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	sctx, cancel := switchctl.SafeContext(ctx)
	defer cancel()
	err := c.halt(sctx)
	if g, ok := c.b.(groupBank); ok {
		if cl, ok := g.g.(interface{ Close() error }); ok {
			err = errors.Join(err, cl.Close())
		}
	}
	return err
}
