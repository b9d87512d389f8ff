package serialboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
)

// The "osw22" backend: one single 2×2 product per switch, each on its own port, in the style
// of Thorlabs' OSW22 command set: "S 1" is bar, "S 2" cross, "S?" answers 1 or 2. Set commands
// answer nothing, so each one is confirmed with S? (and sent again, a bounded number of times,
// if S? disagrees: the line was lost); a change counts as settled T_w after its confirmation.
// It shows how a vendor's command set plugs in: a Link, a reply check and a confirmation rule.

func init() {
	switchctl.Register("osw22", switchctl.BackendFunc(func(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options) (switchctl.Controller, error) {
		if opts.Port != "" {
			return nil, fmt.Errorf("osw22: --port %q: this backend has one port per switch, set in the wiring map %s", opts.Port, w.Path)
		}
		ports := make([]io.ReadWriteCloser, len(w.Switches))
		for i, s := range w.Switches {
			p, err := OpenPort(w, "", s.Port)
			if err != nil {
				for _, q := range ports[:i] {
					q.Close()
				}
				return nil, fmt.Errorf("switch %s (line %d): %w", s.Switch, s.Line, err)
			}
			ports[i] = p
		}
		return NewOSW22(ctx, w, opts, ports, w.Serial.ReadTimeout)
	}))
}

// OSW22 is the single-switch dialect's controller.
type OSW22 struct {
	w     *switchctl.Wiring
	log   *switchctl.ChangeLog
	links []*Link
	idx   map[switchctl.Addr]int

	mu     sync.Mutex
	closed bool
}

// NewOSW22 opens one device per switch (ports in wiring-map order) and waits for each identity.
func NewOSW22(ctx context.Context, w *switchctl.Wiring, opts switchctl.Options, ports []io.ReadWriteCloser, readTimeout time.Duration) (*OSW22, error) {
	c := &OSW22{w: w, log: opts.Log, idx: map[switchctl.Addr]int{}}
	for i, s := range w.Switches {
		c.idx[s.Switch] = i
		l := NewLink(s.Port, ports[i], readTimeout, w.Serial.Retries)
		c.links = append(c.links, l)
	}
	for i, l := range c.links {
		if _, err := l.waitIdentity(ctx, w.Serial.ResetTimeout); err != nil {
			return nil, errors.Join(fmt.Errorf("switch %s: %w", w.Switches[i].Switch, err), c.closeLinks())
		}
	}
	return c, nil
}

// closeLinks closes every port at once: each reader needs up to a read timeout to stop.
func (c *OSW22) closeLinks() error {
	errs := make([]error, len(c.links))
	var wg sync.WaitGroup
	for i, l := range c.links {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = l.Close()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func position(s switchctl.State) string {
	if s == switchctl.Cross {
		return "2"
	}
	return "1"
}

// set sends S n and confirms it with S?, sending it again when S? disagrees.
func (c *OSW22) set(ctx context.Context, i int, s switchctl.State) (sent, confirmed time.Time, err error) {
	l := c.links[i]
	want := position(s)
	var last string
	for try := 0; try <= l.retries; try++ {
		if _, sent, _, err = l.exchange(ctx, "S "+want, 0, nil, 1, false); err != nil {
			return sent, confirmed, err
		}
		var r string
		r, _, confirmed, err = l.exchange(ctx, "S?", 0, validFields(1, "1", "2"), l.retries+1, false)
		if err != nil {
			return sent, confirmed, err
		}
		if r == want {
			return sent, confirmed, nil
		}
		last = r
	}
	return sent, confirmed, fmt.Errorf("osw22 %s: switch %s: S? answers %s after %d tries of \"S %s\"", l.name, c.w.Switches[i].Switch, last, l.retries+1, want)
}

// Apply sets the switches one by one and waits until the last has settled.
func (c *OSW22) Apply(ctx context.Context, changes []switchctl.Change) error {
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
	return c.apply(ctx, changes, false)
}

func (c *OSW22) apply(ctx context.Context, changes []switchctl.Change, halt bool) error {
	batch := c.log.NewBatch()
	var entries []switchctl.Entry
	var last time.Time
	for _, ch := range changes {
		sent, ok, err := c.set(ctx, c.idx[ch.Switch], ch.State)
		if err != nil {
			c.log.Add(entries...)
			return err
		}
		last = ok.Add(c.w.TW)
		entries = append(entries, switchctl.Entry{Batch: batch, Switch: ch.Switch, State: ch.State, Halt: halt, Commanded: sent, Acknowledged: ok, Settled: last})
	}
	c.log.Add(entries...)
	return switchctl.SleepUntil(ctx, last)
}

// States asks each device S?.
func (c *OSW22) States(ctx context.Context) ([]switchctl.Setting, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, switchctl.ErrClosed
	}
	out := make([]switchctl.Setting, len(c.links))
	for i, l := range c.links {
		r, err := l.Exchange(ctx, "S?", 0, validFields(1, "1", "2"))
		if err != nil {
			return nil, err
		}
		out[i] = switchctl.Setting{Switch: c.w.Switches[i].Switch, State: switchctl.Bar}
		if r == "2" {
			out[i].State = switchctl.Cross
		}
	}
	return out, nil
}

func (c *OSW22) all() []switchctl.Change {
	out := make([]switchctl.Change, len(c.w.Switches))
	for i, s := range c.w.Switches {
		out[i] = switchctl.Change{Switch: s.Switch, State: switchctl.Bar}
	}
	return out
}

// Halt sets every switch to bar (position 1).
func (c *OSW22) Halt(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return switchctl.ErrClosed
	}
	return c.apply(ctx, c.all(), true)
}

// Close halts (even with ctx cancelled) and closes every port.
func (c *OSW22) Close(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	sctx, cancel := switchctl.SafeContext(ctx)
	defer cancel()
	return errors.Join(c.apply(sctx, c.all(), true), c.closeLinks())
}
