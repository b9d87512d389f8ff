package program

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Fake is a device that executes Programs: all endpoints in one thread, which in real time spins
// on the monotonic clock (no goroutine per endpoint, no wake-ups: what it measures is the
// programs' semantics and its own loop), or advances a virtual clock from event to event. A
// copy ends at its start plus Duration; a signal's command is timed by the station Execute is
// given.
type Fake struct {
	// Duration is the time of one copy from endpoint src to dst (required).
	Duration func(src, dst int, bytes int64) (float64, error)
	// Virtual runs on a virtual clock: every copy starts exactly when its waits end.
	Virtual bool
	// Sleep, in real time, is how far ahead of the next deadline the device stops sleeping and
	// spins (zero: always spin). A thread that spins through milliseconds on a loaded machine
	// is the one the kernel descheduled when it matters; one that sleeps through them is
	// scheduled promptly when it wakes.
	Sleep time.Duration
	// StallThreshold, in real time, is the shortest gap between the loop's clock reads across
	// an idle iteration that counts as a stall (Stamps.Stalls; zero: DefaultStallThreshold).
	StallThreshold time.Duration
	// now, where set, replaces the loop's clock (seconds from the start): for tests that
	// inject a stall.
	now func() float64
}

// DefaultStallThreshold is the fake device's stall threshold: the harness cost a replay on fake
// devices aims to keep its 99th percentile under.
const DefaultStallThreshold = 5 * time.Microsecond

// Execute runs p, its commands timed by st (needed when a signal has changes), and returns its
// stamps. In real time it occupies one goroutine, spinning, until the program ends or ctx does;
// it is not locked to its OS thread, which measured no different (a descheduled thread is the
// kernel's doing either way), and a locked one that the runtime preempts waits for a futex
// wake-up.
func (f Fake) Execute(ctx context.Context, p *Program, st Station) (*Stamps, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if f.Duration == nil {
		return nil, fmt.Errorf("program: the fake device needs a copy duration")
	}
	x, err := newExec(f, p, st)
	if err != nil {
		return nil, err
	}
	if err := x.run(ctx); err != nil {
		return nil, err
	}
	x.st.Commands, x.st.CommandOf = x.tr.Commands(), x.tr.CommandOf()
	return x.st, nil
}

// exec is one execution's state.
type exec struct {
	f       Fake
	p       *Program
	st      *Stamps
	tr      *Tracker
	dur     []float64
	ended   []bool
	pc      []int
	running []int32 // per endpoint: the circuit copying, −1 for none
	done    int
}

func newExec(f Fake, p *Program, station Station) (*exec, error) {
	n := p.Circuits
	x := &exec{f: f, p: p, dur: make([]float64, n), ended: make([]bool, n), pc: make([]int, len(p.Endpoints)),
		running: make([]int32, len(p.Endpoints)), tr: NewTracker(p, station)}
	x.st = &Stamps{Start: make([]float64, n), End: make([]float64, n), Target: make([]float64, n)}
	for e, steps := range p.Endpoints {
		x.running[e] = -1
		for _, s := range steps {
			d, err := f.Duration(e, int(s.Dst), s.Bytes)
			if err != nil || !(d >= 0) || math.IsInf(d, 0) {
				return nil, fmt.Errorf("program: circuit %d (%d→%d, %d bytes): copy time %g s: %v", s.Circuit, e, s.Dst, s.Bytes, d, err)
			}
			x.dur[s.Circuit] = d
		}
	}
	return x, nil
}

// run drives the loop: everything due at the current instant, then the clock moves on (read in
// real time, to the next event in virtual time).
func (x *exec) run(ctx context.Context) error {
	n := x.p.Circuits
	clock := x.f.now
	if clock == nil {
		t0 := time.Now()
		clock = func() float64 { return time.Since(t0).Seconds() }
	}
	if !x.f.Virtual {
		th := x.f.StallThreshold
		if th <= 0 {
			th = DefaultStallThreshold
		}
		x.st.Stalls = &Stalls{ThresholdSeconds: th.Seconds()}
	}
	now, idleAt := 0.0, -1.0 // idleAt: the clock read before an idle iteration (−1: none)
	for iter := 0; ; iter++ {
		if !x.f.Virtual {
			now = clock()
			if idleAt >= 0 {
				x.st.Stalls.add(now - idleAt)
			}
		}
		if iter&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		moved, err := x.settle(now)
		if err != nil {
			return err
		}
		if x.done == n && x.tr.Done() {
			return nil
		}
		t, ok := x.wake(now)
		if !ok {
			return x.stuck()
		}
		idleAt = -1
		if x.f.Virtual {
			now = t
		} else if d := time.Duration((t-now)*1e9) - x.f.Sleep; x.f.Sleep > 0 && d > 0 {
			time.Sleep(d)
		} else if !moved {
			idleAt = now
		}
	}
}

// settle does everything due at now: copies that ended, copies whose waits are over, and the
// station's commands, until nothing more happens at now. It says whether anything happened.
func (x *exec) settle(now float64) (bool, error) {
	happened := false
	for {
		moved := false
		for e := range x.p.Endpoints {
			if c := x.running[e]; c >= 0 && x.st.End[c] <= now {
				x.complete(e, c)
				moved = true
			}
			if x.running[e] < 0 && x.pc[e] < len(x.p.Endpoints[e]) {
				if t, ok := x.target(e); ok && t <= now {
					s := &x.p.Endpoints[e][x.pc[e]]
					x.st.Target[s.Circuit], x.st.Start[s.Circuit], x.st.End[s.Circuit] = t, now, now+x.dur[s.Circuit]
					x.running[e] = s.Circuit
					moved = true
				}
			}
		}
		if moved {
			happened = true
			continue
		}
		issued, err := x.tr.IssueDue()
		if err != nil || issued == 0 {
			return happened, err
		}
		happened = true
	}
}

// complete records that circuit c of endpoint e ended.
func (x *exec) complete(e int, c int32) {
	x.ended[c], x.running[e] = true, -1
	x.pc[e]++
	x.done++
	x.tr.Ended(c, x.st.End[c])
}

// target is when the next step of endpoint e may start, once every wait of it is known.
func (x *exec) target(e int) (float64, bool) {
	s := &x.p.Endpoints[e][x.pc[e]]
	t := 0.0
	for _, a := range s.After {
		if !x.ended[a] {
			return 0, false
		}
		t = max(t, x.st.End[a])
	}
	for _, g := range s.Signals {
		end, ok := x.tr.SignalEnd(g)
		if !ok {
			return 0, false
		}
		t = max(t, end)
	}
	return t, true
}

// wake is the next instant something is due after now: a copy's end or a step's target.
func (x *exec) wake(now float64) (float64, bool) {
	t, ok := math.Inf(1), false
	for e := range x.p.Endpoints {
		if c := x.running[e]; c >= 0 {
			t, ok = min(t, x.st.End[c]), true
		} else if x.pc[e] < len(x.p.Endpoints[e]) {
			if tt, ready := x.target(e); ready {
				t, ok = min(t, max(tt, now)), true
			}
		}
	}
	return t, ok
}

// stuck explains why nothing can happen any more: a program that waits on what never comes.
func (x *exec) stuck() error {
	for e, steps := range x.p.Endpoints {
		if x.pc[e] < len(steps) {
			return fmt.Errorf("program: deadlock: endpoint %d waits at step %d (circuit %d) for what never ends; %d of %d circuits ended",
				e, x.pc[e], steps[x.pc[e]].Circuit, x.done, x.p.Circuits)
		}
	}
	return fmt.Errorf("program: deadlock: the station waits for what never ends")
}
