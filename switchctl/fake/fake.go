// Package fake is the in-memory switch controller (backend "fake"): no hardware, the timing of
// the one controller model (package ctlmodel, Er-El and Feitelson §2.3.3) with the wiring map's
// T_r, T_w, batch size B and settle rule. A command (one Apply) of k changes is ⌈k/B⌉ requests of
// at most B changes, each holding the control station for T_r; requests are serialised, also
// across concurrent Apply calls, and the command's settle time T_w starts when its last request
// is done and overlaps later commands unless the map sets serial_settle. With the default B = 1
// a batch of k changes returns after k·T_r + T_w.
package fake

import (
	"context"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/tetris-hil/tetris-hil/internal/ctlmodel"
	"github.com/tetris-hil/tetris-hil/switchctl"
)

func init() {
	switchctl.Register("fake", switchctl.BackendFunc(func(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options) (switchctl.Controller, error) {
		return New(w, opts), nil
	}))
}

// Controller is the in-memory controller. Its timing comes from the wiring map.
type Controller struct {
	w      *switchctl.Wiring
	log    *switchctl.ChangeLog
	m      ctlmodel.Model
	tr, tw time.Duration

	// The control station: the model's queue, in seconds since epoch. Commands take their
	// places in it in order of arrival; each then waits out its own times.
	station sync.Mutex
	queue   *ctlmodel.Station
	epoch   time.Time

	mu     sync.Mutex
	states map[switchctl.Addr]switchctl.State
	closed bool
}

// New returns a fake controller with every switch in Bar.
func New(w *switchctl.Wiring, opts switchctl.Options) *Controller {
	m := w.Model()
	c := &Controller{w: w, log: opts.Log, m: m, tr: w.TR, tw: w.TW, queue: m.NewStation(), epoch: time.Now(), states: map[switchctl.Addr]switchctl.State{}}
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

// Apply carries out the batch as the model's requests (T_r each, serialised), then waits until
// the command's settle time T_w has elapsed. On cancellation the changes already commanded stay
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

// reserve queues a command of the given changes at the station now and returns when its first
// request starts. The station's times are deadlines, not wake-ups: a sleep that returns late
// (timer granularity, a loaded host) does not lengthen the next request, so k requests take
// k·T_r as the model says.
func (c *Controller) reserve(changes int) time.Time {
	c.station.Lock()
	defer c.station.Unlock()
	start, _, _ := c.queue.Command(time.Since(c.epoch).Seconds(), changes)
	return c.epoch.Add(time.Duration(math.Round(start * 1e9)))
}

func (c *Controller) command(ctx context.Context, changes []switchctl.Change, halt bool) error {
	batch := c.log.NewBatch()
	entries := make([]switchctl.Entry, 0, len(changes))
	k := len(changes)
	if halt {
		k = 1 // the safe state is one request for the whole board
	}
	start := c.reserve(k)
	var err error
	for j := 0; j < len(changes) && err == nil; {
		// Request r carries changes j..; they are commanded when it starts and acknowledged,
		// in the model's times (not the sleep's), when it is done.
		r := c.m.RequestOf(j)
		if halt {
			r = 0
		}
		commanded := start.Add(time.Duration(r) * c.tr)
		done := commanded.Add(c.tr)
		if err = switchctl.SleepUntil(ctx, done); err != nil {
			break
		}
		for ; j < len(changes) && (halt || c.m.RequestOf(j) == r); j++ {
			ch := changes[j]
			c.mu.Lock()
			c.states[ch.Switch] = ch.State
			c.mu.Unlock()
			entries = append(entries, switchctl.Entry{Batch: batch, Switch: ch.Switch, State: ch.State, Halt: halt,
				Commanded: commanded, Acknowledged: done, Settled: done.Add(c.tw)})
		}
	}
	if err == nil && len(entries) > 0 {
		err = settle(ctx, entries[len(entries)-1].Settled)
	}
	// Changes commanded but cut short of their settle time are logged as settling when their
	// time elapses: the hardware keeps going.
	c.log.Add(entries...)
	return err
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
