// Package fake is the in-memory switch controller (backend "fake"): no hardware, the timing of
// Er-El and Feitelson §2.3.3. Each change is one command to the control station taking T_r, the
// commands are serialised (also across concurrent Apply calls), and each change's settle time
// T_w starts when its command is done and overlaps the later commands: a batch of k changes
// returns after about k·T_r + T_w.
package fake

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
)

func init() {
	switchctl.Register("fake", switchctl.BackendFunc(func(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options) (switchctl.Controller, error) {
		return New(w, opts), nil
	}))
}

// Controller is the in-memory controller. Its T_r and T_w come from the wiring map.
type Controller struct {
	w      *switchctl.Wiring
	log    *switchctl.ChangeLog
	tr, tw time.Duration

	station sync.Mutex // the control station: one command at a time

	mu     sync.Mutex
	states map[switchctl.Addr]switchctl.State
	closed bool
}

// New returns a fake controller with every switch in Bar.
func New(w *switchctl.Wiring, opts switchctl.Options) *Controller {
	c := &Controller{w: w, log: opts.Log, tr: w.TR, tw: w.TW, states: map[switchctl.Addr]switchctl.State{}}
	for _, s := range w.Switches {
		c.states[s.Switch] = switchctl.Bar
	}
	return c
}

func (c *Controller) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Apply carries out the batch change by change (T_r each, serialised), then waits until the
// last change's settle time T_w has elapsed. On cancellation the changes already commanded stay
// and are logged.
func (c *Controller) Apply(ctx context.Context, changes []switchctl.Change) error {
	if c.isClosed() {
		return switchctl.ErrClosed
	}
	if err := c.w.Check(changes); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.command(ctx, changes, false)
}

func (c *Controller) command(ctx context.Context, changes []switchctl.Change, halt bool) error {
	batch := c.log.NewBatch()
	entries := make([]switchctl.Entry, 0, len(changes))
	var err error
	c.station.Lock()
	// The station's times are deadlines chained from the batch's first change, not wake-ups: a sleep
	// that returns late (timer granularity, a loaded host) does not lengthen the next change,
	// so k changes take k·T_r as the model says.
	next := time.Now()
	for _, ch := range changes {
		e := switchctl.Entry{Batch: batch, Switch: ch.Switch, State: ch.State, Halt: halt, Commanded: next}
		if err = switchctl.SleepUntil(ctx, e.Commanded.Add(c.tr)); err != nil {
			break
		}
		// The model's times, not the sleep's: a timer that wakes late is not the switch's T_r.
		e.Acknowledged = e.Commanded.Add(c.tr)
		next = e.Acknowledged
		c.mu.Lock()
		c.states[ch.Switch] = ch.State
		c.mu.Unlock()
		e.Settled = e.Acknowledged.Add(c.tw)
		entries = append(entries, e)
		if halt {
			// The safe state is one command for the whole board.
			for _, rest := range changes[1:] {
				c.mu.Lock()
				c.states[rest.Switch] = rest.State
				c.mu.Unlock()
				f := e
				f.Switch, f.State = rest.Switch, rest.State
				entries = append(entries, f)
			}
			break
		}
	}
	c.station.Unlock()
	if err == nil && len(entries) > 0 {
		err = settle(ctx, entries[len(entries)-1].Settled)
	}
	if err != nil {
		// Changes commanded but cut short of their settle time are logged as settling when
		// their time elapses: the hardware keeps going.
		c.log.Add(entries...)
		return err
	}
	c.log.Add(entries...)
	return nil
}

// settle waits until t: a timer for all but the last millisecond (Linux timers wake up to a
// millisecond late), then yielding until t. A batch then returns when its settle time has
// elapsed, not a timer's lateness later, so that a live replay through the fake runs on the
// fake's T_r and T_w.
func settle(ctx context.Context, t time.Time) error {
	if err := switchctl.SleepUntil(ctx, t.Add(-time.Millisecond)); err != nil {
		return err
	}
	for time.Now().Before(t) {
		if err := ctx.Err(); err != nil {
			return err
		}
		runtime.Gosched()
	}
	return nil
}

// States returns every switch's state, in wiring-map order.
func (c *Controller) States(ctx context.Context) ([]switchctl.Setting, error) {
	if c.isClosed() {
		return nil, switchctl.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]switchctl.Setting, 0, len(c.w.Switches))
	for _, s := range c.w.Switches {
		out = append(out, switchctl.Setting{Switch: s.Switch, State: c.states[s.Switch]})
	}
	return out, nil
}

// Halt puts every switch in Bar with one command.
func (c *Controller) Halt(ctx context.Context) error {
	if c.isClosed() {
		return switchctl.ErrClosed
	}
	all := make([]switchctl.Change, 0, len(c.w.Switches))
	for _, s := range c.w.Switches {
		all = append(all, switchctl.Change{Switch: s.Switch, State: switchctl.Bar})
	}
	if len(all) == 0 {
		return nil
	}
	return c.command(ctx, all, true)
}

// Close halts (even when ctx is already cancelled) and closes.
func (c *Controller) Close(ctx context.Context) error {
	if c.isClosed() {
		return nil
	}
	sctx, cancel := switchctl.SafeContext(ctx)
	defer cancel()
	err := c.Halt(sctx)
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return err
}
