// Package crystal is the holographic crystal driver (backend "crystal"): the electroholographic
// switch of Er-El and Feitelson §2.2, where a 2×2 element is two KLTN crystals and exactly one is
// energised by high voltage: crystal A for Bar, crystal B for Cross.
//
// Never may both crystals of one element be on. The rule is enforced in exactly one place,
// Controller.energise, which every backend goes through (GPIO pins or a serial driver board):
// a crystal is switched on only after its element's other crystal has been confirmed off and a
// dead time has passed since (break-before-make). A change counts as settled T_w after its
// crystal went on (§2.2: the receiver needs milliseconds to resynchronise). The safe state is
// every crystal off, then high voltage off; an error on any path ends there.
package crystal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
)

// Level switches one crystal: Element indexes the wiring map's switches, Crystal is 0 (A, Bar)
// or 1 (B, Cross).
type Level struct {
	Element, Crystal int
	On               bool
}

// Driver is what the interlock drives: single crystals and the high-voltage enable, with no
// rule of their own.
type Driver interface {
	Set(ctx context.Context, levels []Level) error
	HV(ctx context.Context, on bool) error
	// Read returns each element's crystals (A on, B on).
	Read(ctx context.Context) ([][2]bool, error)
	Close() error
}

// safer is a driver with a safe-state command of its own (the serial board's SAFE), sent after
// crystals off and high voltage off so the device's firmware ends safe too.
type safer interface {
	Safe(ctx context.Context) error
}

const off = -1

// Controller is the crystal backend over any Driver.
type Controller struct {
	w          *switchctl.Wiring
	log        *switchctl.ChangeLog
	d          Driver
	dead, tw   time.Duration
	idx        map[switchctl.Addr]int
	mu         sync.Mutex
	on         []int       // per element: the crystal on (0 A, 1 B) or off
	offAt      []time.Time // per element: when its last crystal was confirmed off
	hv, closed bool
}

// New takes the driver to the safe state (every crystal off, high voltage off) and returns the
// controller. The dead time is the wiring map's crystal.dead_time; T_w its t_w.
func New(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options, d Driver) (*Controller, error) {
	c := &Controller{w: w, log: opts.Log, d: d, dead: w.Crystal.DeadTime, tw: w.TW, idx: map[switchctl.Addr]int{},
		on: make([]int, len(w.Switches)), offAt: make([]time.Time, len(w.Switches))}
	for i, s := range w.Switches {
		c.idx[s.Switch] = i
		c.on[i] = off
	}
	sctx, cancel := switchctl.SafeContext(ctx)
	defer cancel()
	if err := c.safe(sctx); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	return c, nil
}

// energise is the one place a crystal is switched on. It refuses an element whose other crystal
// is not confirmed off, turns high voltage on if needed (every crystal is off while it is off),
// and waits out the dead time since each element's crystals went off.
func (c *Controller) energise(ctx context.Context, levels []Level) (time.Time, error) {
	var ready time.Time
	for _, l := range levels {
		if !l.On || c.on[l.Element] != off {
			return time.Time{}, fmt.Errorf("crystal interlock: switch %s: crystal %c on while crystal %c is on (internal error)",
				c.w.Switches[l.Element].Switch, 'A'+l.Crystal, 'A'+c.on[l.Element])
		}
		if t := c.offAt[l.Element].Add(c.dead); t.After(ready) {
			ready = t
		}
	}
	if !c.hv {
		if err := c.d.HV(ctx, true); err != nil {
			return time.Time{}, err
		}
		c.hv = true
	}
	if err := switchctl.SleepUntil(ctx, ready); err != nil {
		return time.Time{}, err
	}
	if err := c.d.Set(ctx, levels); err != nil {
		return time.Time{}, err
	}
	ack := time.Now()
	for _, l := range levels {
		c.on[l.Element] = l.Crystal
	}
	return ack, nil
}

// deenergise switches crystals off and notes when.
func (c *Controller) deenergise(ctx context.Context, levels []Level) error {
	if err := c.d.Set(ctx, levels); err != nil {
		return err
	}
	now := time.Now()
	for _, l := range levels {
		c.on[l.Element] = off
		c.offAt[l.Element] = now
	}
	return nil
}

// Apply changes each element break-before-make: the crystals to go off in one call, the dead
// time, the crystals to go on in one call, then T_w. Any error takes the hardware safe.
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
	if err := c.apply(ctx, changes); err != nil {
		sctx, cancel := switchctl.SafeContext(ctx)
		defer cancel()
		return errors.Join(err, c.safe(sctx))
	}
	return nil
}

func (c *Controller) apply(ctx context.Context, changes []switchctl.Change) error {
	batch := c.log.NewBatch()
	commanded := time.Now()
	var breaks, makes []Level
	for _, ch := range changes {
		e, want := c.idx[ch.Switch], int(ch.State) // Bar = crystal A = 0, Cross = B = 1
		if c.on[e] == want {
			continue
		}
		if c.on[e] != off {
			breaks = append(breaks, Level{e, c.on[e], false})
		}
		makes = append(makes, Level{e, want, true})
	}
	if len(breaks) > 0 {
		if err := c.deenergise(ctx, breaks); err != nil {
			return err
		}
	}
	ack, settled := commanded, commanded
	if len(makes) > 0 {
		var err error
		if ack, err = c.energise(ctx, makes); err != nil {
			return err
		}
		settled = ack.Add(c.tw)
		if err := switchctl.SleepUntil(ctx, settled); err != nil {
			return err
		}
	}
	for _, ch := range changes {
		c.log.Add(switchctl.Entry{Batch: batch, Switch: ch.Switch, State: ch.State, Commanded: commanded, Acknowledged: ack, Settled: settled})
	}
	return nil
}

// safe switches every crystal off, then high voltage off (also when the first step failed:
// without high voltage no crystal is energised), then sends the driver's own safe command.
func (c *Controller) safe(ctx context.Context) error {
	batch := c.log.NewBatch()
	commanded := time.Now()
	all := make([]Level, 0, 2*len(c.w.Switches))
	for e := range c.w.Switches {
		all = append(all, Level{e, 0, false}, Level{e, 1, false})
	}
	errOff := c.deenergise(ctx, all)
	errHV := c.d.HV(ctx, false)
	if errHV == nil {
		c.hv = false
	}
	var errSafe error
	if s, ok := c.d.(safer); ok {
		errSafe = s.Safe(ctx)
	}
	if err := errors.Join(errOff, errHV, errSafe); err != nil {
		return fmt.Errorf("crystal driver: putting the hardware safe: %w", err)
	}
	done := time.Now()
	for _, s := range c.w.Switches {
		c.log.Add(switchctl.Entry{Batch: batch, Switch: s.Switch, State: switchctl.Off, Halt: true, Commanded: commanded, Acknowledged: done, Settled: done})
	}
	return nil
}

// States reads the crystals back: A on is Bar, B on is Cross, none is Off; both on is an error.
func (c *Controller) States(ctx context.Context) ([]switchctl.Setting, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, switchctl.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	xs, err := c.d.Read(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]switchctl.Setting, len(c.w.Switches))
	for i, s := range c.w.Switches {
		out[i].Switch = s.Switch
		switch x := xs[i]; {
		case x[0] && x[1]:
			return nil, fmt.Errorf("crystal driver: switch %s has both crystals on", s.Switch)
		case x[0]:
			out[i].State = switchctl.Bar
		case x[1]:
			out[i].State = switchctl.Cross
		default:
			out[i].State = switchctl.Off
		}
	}
	return out, nil
}

// Halt puts the hardware safe.
func (c *Controller) Halt(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return switchctl.ErrClosed
	}
	return c.safe(ctx)
}

// Close puts the hardware safe (even with ctx cancelled) and closes the driver.
func (c *Controller) Close(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	sctx, cancel := switchctl.SafeContext(ctx)
	defer cancel()
	return errors.Join(c.safe(sctx), c.d.Close())
}
