package shared

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// Host is the host's side of a run across worker processes: it releases the workers at one
// start instant, plays the station from the thread that watches the end flags, detects a
// deadlock or a dead worker, and reads the stamps back.
type Host struct {
	Program *program.Program
	// Station times the reconfiguration commands (needed when a signal has changes).
	Station program.Station
	// Apply, when set, carries out each command on real switches from the watching thread: it
	// is called at the command's start (program time, seconds) and the command ends when it
	// returns (and not before the station's end); its signals' flags are written then.
	Apply func(ctx context.Context, cmd program.Command) error
	// Lead is how far ahead of the release the start instant lies (zero: 2 ms), so that every
	// worker is spinning by then.
	Lead time.Duration
	// Timeout bounds arming and the run each (zero: one minute).
	Timeout time.Duration
	// Alive, called now and then while the host waits, returns an error once a worker process
	// is gone.
	Alive func() error
	// SpinOnly never sleeps while waiting for a flag (Work.SpinOnly).
	SpinOnly bool
	// Offsets are the workers' clock offsets, measured before they armed; set by Run once they
	// all have.
	Offsets []Offset
}

// ErrDeadlock is wrapped by the error for a program that can never finish.
var ErrDeadlock = errors.New("deadlock")

// Run waits until every worker of m has armed, releases them and plays the station until every
// circuit has ended, then returns the stamps in seconds from the start instant. On any error it
// aborts the run (every worker stops at its next check) before returning.
func (h *Host) Run(ctx context.Context, m *Mem) (st *program.Stamps, err error) {
	if err := h.Program.Validate(); err != nil {
		return nil, err
	}
	p := h.Program
	if m.Dims.Endpoints != len(p.Endpoints) || m.Dims.Circuits != p.Circuits || m.Dims.Signals != len(p.Signals) {
		return nil, fmt.Errorf("shared memory %s holds %+v, the program has %d endpoints, %d circuits, %d signals",
			m.Path, m.Dims, len(p.Endpoints), p.Circuits, len(p.Signals))
	}
	defer func() {
		if err != nil {
			m.Abort()
		}
	}()
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	if err := h.awaitArmed(ctx, m, timeout); err != nil {
		return nil, err
	}
	h.Offsets = Offsets(m)
	lead := h.Lead
	if lead <= 0 {
		lead = 2 * time.Millisecond
	}
	start := int64(transfer.Monotonic() + lead)
	m.Release(start, start+int64(timeout))
	w := &watch{h: h, m: m, tr: program.NewTracker(p, h.Station), start: start, ended: make([]bool, p.Circuits), left: p.Circuits}
	if err := w.loop(ctx, time.Now().Add(lead+timeout)); err != nil {
		return nil, err
	}
	return w.stamps(), nil
}

// Offsets reads the workers' clock offsets from m (valid once they have armed).
func Offsets(m *Mem) []Offset {
	out := make([]Offset, m.Dims.Workers)
	for w := range out {
		n, off, rtt := m.Clock(w)
		out[w] = Offset{Worker: w, GPU: -1, OffsetNS: off, UncertaintyNS: rtt - rtt/2, Samples: n, MinRTTNS: rtt}
	}
	return out
}

func (h *Host) awaitArmed(ctx context.Context, m *Mem, timeout time.Duration) error {
	giveUp := time.Now().Add(timeout)
	for m.ArmedCount() < m.Dims.Workers {
		if err := h.check(ctx, m); err != nil {
			return err
		}
		if time.Now().After(giveUp) {
			return fmt.Errorf("only %d of %d workers armed within %v", m.ArmedCount(), m.Dims.Workers, timeout)
		}
		time.Sleep(100 * time.Microsecond)
	}
	return nil
}

// check is what the host looks at now and then: its context, the workers' processes and
// status words.
func (h *Host) check(ctx context.Context, m *Mem) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if h.Alive != nil {
		if err := h.Alive(); err != nil {
			return err
		}
	}
	for w := range m.Dims.Workers {
		if m.Status(w) == Failed {
			return fmt.Errorf("worker %d failed", w)
		}
	}
	return nil
}

// watch is the station thread's state.
type watch struct {
	h     *Host
	m     *Mem
	tr    *program.Tracker
	start int64
	ended []bool
	left  int
}

func (w *watch) sec(ns int64) float64 { return float64(ns-w.start) * 1e-9 }

func (w *watch) loop(ctx context.Context, giveUp time.Time) error {
	idleSince := time.Time{}
	for iter := 0; w.left > 0 || !w.tr.Done(); iter++ {
		gen, left, cmds := w.m.Generation(), w.left, len(w.tr.Commands())
		if err := w.poll(ctx); err != nil {
			return err
		}
		// Nothing ended and nothing was issued: spin a while, then sleep until a flag is
		// written (at most a millisecond, for the checks below).
		if w.left == left && len(w.tr.Commands()) == cmds && !w.h.SpinOnly {
			if idleSince.IsZero() {
				idleSince = time.Now()
			} else if time.Since(idleSince) > spinBeforeSleep {
				w.m.Sleep(gen, time.Millisecond)
				idleSince = time.Time{}
				iter |= 255 // check now
			}
		} else {
			idleSince = time.Time{}
		}
		if iter&255 == 255 {
			if err := w.h.check(ctx, w.m); err != nil {
				return err
			}
			if time.Now().After(giveUp) {
				return fmt.Errorf("the programs did not finish by their deadline (%d of %d circuits ended)", w.m.Dims.Circuits-w.left, w.m.Dims.Circuits)
			}
			if err := w.deadlock(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// poll feeds the circuits that ended to the tracker and issues the commands due.
func (w *watch) poll(ctx context.Context) error {
	for c := range w.ended {
		if w.ended[c] {
			continue
		}
		if end, ok := w.m.CircuitEnd(c); ok {
			w.ended[c], w.left = true, w.left-1
			w.tr.Ended(int32(c), w.sec(end))
		}
	}
	before := len(w.tr.Commands())
	if _, err := w.tr.IssueDue(); err != nil {
		return err
	}
	for id := before; id < len(w.tr.Commands()); id++ {
		cmd := w.tr.Commands()[id]
		if w.h.Apply != nil {
			end, err := w.apply(ctx, cmd)
			if err != nil {
				return fmt.Errorf("reconfiguration command %d: %w", id, err)
			}
			w.tr.SetEnd(id, end)
			cmd = w.tr.Commands()[id]
		}
		for _, s := range cmd.Signals {
			w.m.IssueSignal(int(s), w.start+program.NotBeforeNS(cmd.End))
		}
	}
	return nil
}

// apply carries cmd out at its start and returns when it ended (not before the station's end).
func (w *watch) apply(ctx context.Context, cmd program.Command) (float64, error) {
	if d := time.Duration(w.start + int64(cmd.Start*1e9) - int64(transfer.Monotonic())); d > 0 {
		time.Sleep(d)
	}
	if err := w.h.Apply(ctx, cmd); err != nil {
		return 0, err
	}
	return max(cmd.End, w.sec(int64(transfer.Monotonic()))), nil
}

// deadlock reports a deadlock when no endpoint can move: each is done or waits at a step with a
// flag not set, read between two identical readings of every endpoint's word (a worker that
// moved changes its word), and the station has nothing left to issue (poll issued what was due,
// so an unissued signal waits for a circuit that has not ended).
func (w *watch) deadlock(ctx context.Context) error {
	n := w.m.Dims.Endpoints
	before := make([]uint32, n)
	for e := range n {
		pc, s := w.m.Endpoint(e)
		before[e] = uint32(pc)<<2 | s
		if s == Timing || s == Copying {
			return nil
		}
	}
	if err := w.poll(ctx); err != nil {
		return err
	}
	blocked := -1
	for e := range n {
		pc, s := w.m.Endpoint(e)
		if uint32(pc)<<2|s != before[e] {
			return nil
		}
		if s == Done {
			continue
		}
		if w.ready(&w.h.Program.Endpoints[e][pc]) {
			return nil
		}
		blocked = e
	}
	if blocked < 0 {
		return nil // every endpoint is done; the loop ends once the station is
	}
	pc, _ := w.m.Endpoint(blocked)
	return fmt.Errorf("%w: endpoint %d waits at step %d (circuit %d) for what never ends; %d of %d circuits ended",
		ErrDeadlock, blocked, pc, w.h.Program.Endpoints[blocked][pc].Circuit, w.m.Dims.Circuits-w.left, w.m.Dims.Circuits)
}

func (w *watch) ready(s *program.Step) bool {
	for _, a := range s.After {
		if !w.ended[a] {
			return false
		}
	}
	for _, g := range s.Signals {
		if _, ok := w.m.SignalEnd(int(g)); !ok {
			return false
		}
	}
	return true
}

func (w *watch) stamps() *program.Stamps {
	n := w.m.Dims.Circuits
	st := &program.Stamps{Start: make([]float64, n), End: make([]float64, n), Target: make([]float64, n),
		Commands: w.tr.Commands(), CommandOf: w.tr.CommandOf()}
	for c := range n {
		r, _ := w.m.Circuit(c)
		st.Target[c], st.Start[c], st.End[c] = w.sec(r.Target), w.sec(r.Start), w.sec(r.End)
	}
	return st
}
