// Package switchtest is the conformance suite every switchctl backend runs: states applied and
// read back, batches, the change log's timestamps, unknown switches refused before anything is
// commanded, cancellation, Halt, Close, and concurrent use. A backend's test opens its
// controller on a fake or emulated device and calls Run.
package switchtest

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl"
)

// Config describes the backend under test.
type Config struct {
	// Open returns a fresh controller (every switch in its safe state) that records into log,
	// and the wiring map it drives. The suite closes it.
	Open func(t *testing.T, log *switchctl.ChangeLog) (switchctl.Controller, *switchctl.Wiring)
	// SafeState is what States reports after Halt: Bar for a switch board, Off for crystals.
	SafeState switchctl.State
	// InitialState is what States reports after Open (Bar, or Off for crystals).
	InitialState switchctl.State
	// Batches is the number of random batches of the sequence test (default 8).
	Batches int
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, cfg Config) {
	if cfg.Batches == 0 {
		cfg.Batches = 8
	}
	open := func(t *testing.T) (switchctl.Controller, *switchctl.Wiring, *switchctl.ChangeLog) {
		t.Helper()
		log := &switchctl.ChangeLog{}
		c, w := cfg.Open(t, log)
		t.Cleanup(func() {
			if err := c.Close(context.Background()); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return c, w, log
	}
	ctx := context.Background()

	t.Run("InitialStates", func(t *testing.T) {
		c, w, _ := open(t)
		got := mustStates(t, c)
		want := map[switchctl.Addr]switchctl.State{}
		for _, s := range w.Switches {
			want[s.Switch] = cfg.InitialState
		}
		checkStates(t, w, got, want)
	})

	t.Run("ApplyOneThenBatch", func(t *testing.T) {
		c, w, log := open(t)
		want := map[switchctl.Addr]switchctl.State{}
		for _, s := range w.Switches {
			want[s.Switch] = cfg.InitialState
		}
		first := w.Switches[len(w.Switches)/2].Switch
		apply(t, c, log, []switchctl.Change{{Switch: first, State: switchctl.Cross}})
		want[first] = switchctl.Cross
		checkStates(t, w, mustStates(t, c), want)

		var batch []switchctl.Change
		for i, s := range w.Switches {
			if i%2 == 0 {
				st := switchctl.Cross
				if i%4 == 0 {
					st = switchctl.Bar
				}
				batch = append(batch, switchctl.Change{Switch: s.Switch, State: st})
				want[s.Switch] = st
			}
		}
		apply(t, c, log, batch)
		checkStates(t, w, mustStates(t, c), want)
	})

	t.Run("RandomBatches", func(t *testing.T) {
		c, w, log := open(t)
		rng := rand.New(rand.NewPCG(12, 1))
		want := map[switchctl.Addr]switchctl.State{}
		for _, s := range w.Switches {
			want[s.Switch] = cfg.InitialState
		}
		for b := 0; b < cfg.Batches; b++ {
			var batch []switchctl.Change
			for _, i := range rng.Perm(len(w.Switches))[:1+rng.IntN(len(w.Switches))] {
				st := switchctl.State(rng.IntN(2))
				batch = append(batch, switchctl.Change{Switch: w.Switches[i].Switch, State: st})
				want[w.Switches[i].Switch] = st
			}
			apply(t, c, log, batch)
			checkStates(t, w, mustStates(t, c), want)
		}
	})

	t.Run("UnknownSwitchChangesNothing", func(t *testing.T) {
		c, w, log := open(t)
		before := mustStates(t, c)
		n := log.Len()
		bad := switchctl.Addr{Stage: 99, Index: 0}
		err := c.Apply(ctx, []switchctl.Change{{Switch: w.Switches[0].Switch, State: switchctl.Cross}, {Switch: bad, State: switchctl.Cross}})
		if err == nil || !strings.Contains(err.Error(), "99:0") {
			t.Fatalf("Apply with switch 99:0 = %v, want an error naming 99:0", err)
		}
		if log.Len() != n {
			t.Errorf("the refused batch logged %d entries", log.Len()-n)
		}
		after := mustStates(t, c)
		for i := range before {
			if before[i] != after[i] {
				t.Errorf("switch %s changed from %s to %s on a refused batch", before[i].Switch, before[i].State, after[i].State)
			}
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		c, w, _ := open(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := c.Apply(cctx, []switchctl.Change{{Switch: w.Switches[0].Switch, State: switchctl.Cross}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Apply with a cancelled context = %v, want context.Canceled", err)
		}
	})

	t.Run("Halt", func(t *testing.T) {
		c, w, log := open(t)
		var all []switchctl.Change
		for _, s := range w.Switches {
			all = append(all, switchctl.Change{Switch: s.Switch, State: switchctl.Cross})
		}
		apply(t, c, log, all)
		n := log.Len()
		if err := c.Halt(ctx); err != nil {
			t.Fatalf("Halt: %v", err)
		}
		want := map[switchctl.Addr]switchctl.State{}
		for _, s := range w.Switches {
			want[s.Switch] = cfg.SafeState
		}
		checkStates(t, w, mustStates(t, c), want)
		halted := map[switchctl.Addr]bool{}
		for _, e := range log.Entries(n) {
			if e.Halt {
				halted[e.Switch] = true
			}
		}
		if len(halted) != len(w.Switches) {
			t.Errorf("Halt logged %d switches, want all %d", len(halted), len(w.Switches))
		}
	})

	t.Run("Close", func(t *testing.T) {
		log := &switchctl.ChangeLog{}
		c, w := cfg.Open(t, log)
		if err := c.Close(ctx); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := c.Apply(ctx, []switchctl.Change{{Switch: w.Switches[0].Switch, State: switchctl.Cross}}); !errors.Is(err, switchctl.ErrClosed) {
			t.Errorf("Apply after Close = %v, want ErrClosed", err)
		}
		if _, err := c.States(ctx); !errors.Is(err, switchctl.ErrClosed) {
			t.Errorf("States after Close = %v, want ErrClosed", err)
		}
		if err := c.Close(ctx); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
		last := log.Entries(0)
		if len(last) == 0 || !last[len(last)-1].Halt {
			t.Errorf("Close did not put the hardware safe (last log entry %+v)", last)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		c, w, log := open(t)
		n := log.Len() // a backend may log its safe state at Open
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		want := map[switchctl.Addr]switchctl.State{}
		for g := 0; g < 2; g++ {
			var batch []switchctl.Change
			for i, s := range w.Switches {
				if i%2 == g {
					batch = append(batch, switchctl.Change{Switch: s.Switch, State: switchctl.Cross})
					want[s.Switch] = switchctl.Cross
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- c.Apply(ctx, batch)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("concurrent Apply: %v", err)
			}
		}
		checkStates(t, w, mustStates(t, c), want)
		if log.Len()-n != len(w.Switches) {
			t.Errorf("log has %d entries after two concurrent batches covering %d switches", log.Len()-n, len(w.Switches))
		}
	})
}

// apply applies batch and checks what the log says about it: one entry per change, one batch
// number, commanded within the call, acknowledged (where known) before settled, settled before
// Apply returned.
func apply(t *testing.T, c switchctl.Controller, log *switchctl.ChangeLog, batch []switchctl.Change) {
	t.Helper()
	n := log.Len()
	start := time.Now()
	if err := c.Apply(context.Background(), batch); err != nil {
		t.Fatalf("Apply(%v): %v", batch, err)
	}
	end := time.Now()
	es := log.Entries(n)
	if len(es) != len(batch) {
		t.Fatalf("Apply of %d changes logged %d entries", len(batch), len(es))
	}
	got := map[switchctl.Addr]switchctl.State{}
	for _, e := range es {
		got[e.Switch] = e.State
		if e.Batch != es[0].Batch {
			t.Errorf("one Apply logged batches %d and %d", es[0].Batch, e.Batch)
		}
		if e.Commanded.Before(start) || e.Settled.After(end) || e.Settled.Before(e.Commanded) {
			t.Errorf("entry %+v: want Apply start %v ≤ commanded ≤ settled ≤ Apply end %v", e, start, end)
		}
		if !e.Acknowledged.IsZero() && (e.Acknowledged.Before(e.Commanded) || e.Acknowledged.After(e.Settled)) {
			t.Errorf("entry %+v: acknowledged outside commanded..settled", e)
		}
	}
	for _, ch := range batch {
		if got[ch.Switch] != ch.State {
			t.Errorf("log has %s=%s, want %s", ch.Switch, got[ch.Switch], ch.State)
		}
	}
}

func mustStates(t *testing.T, c switchctl.Controller) []switchctl.Setting {
	t.Helper()
	s, err := c.States(context.Background())
	if err != nil {
		t.Fatalf("States: %v", err)
	}
	return s
}

func checkStates(t *testing.T, w *switchctl.Wiring, got []switchctl.Setting, want map[switchctl.Addr]switchctl.State) {
	t.Helper()
	if len(got) != len(w.Switches) {
		t.Fatalf("States returned %d switches, the wiring map has %d", len(got), len(w.Switches))
	}
	for i, s := range got {
		if s.Switch != w.Switches[i].Switch {
			t.Fatalf("States[%d] is %s, want %s (wiring-map order)", i, s.Switch, w.Switches[i].Switch)
		}
		if s.State != want[s.Switch] {
			t.Errorf("switch %s is %s, want %s", s.Switch, s.State, want[s.Switch])
		}
	}
}
