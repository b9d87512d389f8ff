package emulator

import (
	"context"
	"fmt"
	"math"

	"github.com/tetris-hil/tetris-hil/schedules"
)

// Config holds the timing models of a run.
type Config struct {
	Transfer TransferModel
	Reconfig ReconfigModel
	// PathsChecked says every path of the schedule has been checked against the fabric already
	// (schedules.Verify did, or a scheduler of this process planned it), so Run does not check
	// each one a second time; ports, sizes, groups and path lengths are still checked, and so is
	// every hop list that is not a physical path (benes.Path keeps those as read, and they would
	// index the fabric's tables out of range). A physical path between other ports given with
	// PathsChecked gives a wrong timeline, so leave it off for schedules read from files and
	// not verified.
	PathsChecked bool
}

// Run executes s in virtual time under cfg and returns its Result and Timeline. d, when not nil,
// is the demand s was planned for; it gives the lower bounds, under cfg's own models, and a
// completion below them is an error (a schedule that does not deliver d, or a bug). Run checks the schedule's structure
// (ports, paths, round consistency) but not that it delivers d: that is schedules.Verify's job.
func Run(ctx context.Context, s *schedules.Schedule, d *schedules.Demand, cfg Config) (*Result, *schedules.Timeline, error) {
	// The order lives only as long as this call: its lists come from a pooled scratch, which
	// the walk then shares.
	sc := getScratch()
	defer sc.release()
	o, err := newOrder(s, sc, true, cfg.PathsChecked)
	if err != nil {
		return nil, nil, err
	}
	return runOrder(ctx, o, s, d, cfg, sc, true)
}

// RunResult is Run without the timeline: the same Result, computed from the walk's own records
// without building a per-circuit timeline or a list of switch changes (what sweeps need: they
// keep only completions and bounds).
func RunResult(ctx context.Context, s *schedules.Schedule, d *schedules.Demand, cfg Config) (*Result, error) {
	sc := getScratch()
	defer sc.release()
	o, err := newOrder(s, sc, true, cfg.PathsChecked)
	if err != nil {
		return nil, err
	}
	res, _, err := runOrder(ctx, o, s, d, cfg, sc, false)
	return res, err
}

// RunChecked is Run for a caller that keeps only the Result: the timeline is built, checked by
// schedules.VerifyTimeline and dropped, and the violations (none for a correct emulator) are
// returned. A barrier-mode timeline is built and checked by round (schedules.RoundTimeline and
// VerifyRoundTimeline, which finds exactly the same violations) in about a quarter of the memory
// of its per-circuit records: tens of millions of circuits and switch changes for a
// Birkhoff–von Neumann schedule of a dense 256-port demand.
func RunChecked(ctx context.Context, s *schedules.Schedule, d *schedules.Demand, cfg Config) (*Result, []schedules.Violation, error) {
	res, tl, rt, err := runForCheck(ctx, s, d, cfg)
	if err != nil {
		return nil, nil, err
	}
	// The walk's memory is released by now: the check runs beside the timeline alone.
	if rt != nil {
		return res, schedules.VerifyRoundTimeline(s, rt), nil
	}
	return res, schedules.VerifyTimeline(s, tl), nil
}

// runForCheck runs s and returns its Result with the timeline by round (barrier mode) or entry
// by entry (partial mode).
func runForCheck(ctx context.Context, s *schedules.Schedule, d *schedules.Demand, cfg Config) (*Result, *schedules.Timeline, *schedules.RoundTimeline, error) {
	sc := getScratch()
	defer sc.release()
	o, err := newOrder(s, sc, true, cfg.PathsChecked)
	if err != nil {
		return nil, nil, nil, err
	}
	if o.mode != schedules.Barrier {
		res, tl, err := runOrder(ctx, o, s, d, cfg, sc, true)
		return res, tl, nil, err
	}
	var rt *schedules.RoundTimeline
	res, _, err := runOrderThen(ctx, o, s, d, cfg, sc, false, func(w *Walker) error {
		var err error
		rt, err = w.roundTimeline()
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return res, nil, rt, nil
}

// RunOrder is Run with the dependency order already derived by NewOrder(s).
func RunOrder(ctx context.Context, o *Order, s *schedules.Schedule, d *schedules.Demand, cfg Config) (*Result, *schedules.Timeline, error) {
	sc := getScratch()
	defer sc.release()
	return runOrder(ctx, o, s, d, cfg, sc, true)
}

// runOrder is RunOrder with its temporary memory taken from sc: the emulator's virtual-time
// driver of a Walker. Its clock is an event heap; every rule of execution is the walker's.
// With timeline false it returns no Timeline and summarises the walk directly.
func runOrder(ctx context.Context, o *Order, s *schedules.Schedule, d *schedules.Demand, cfg Config, sc *scratch, timeline bool) (*Result, *schedules.Timeline, error) {
	return runOrderThen(ctx, o, s, d, cfg, sc, timeline, nil)
}

// runOrderThen is runOrder that, with timeline false and then not nil, hands then the finished
// walker before its memory goes back to sc.
func runOrderThen(ctx context.Context, o *Order, s *schedules.Schedule, d *schedules.Demand, cfg Config, sc *scratch, timeline bool, then func(*Walker) error) (*Result, *schedules.Timeline, error) {
	if cfg.Transfer == nil || cfg.Reconfig == nil {
		return nil, nil, fmt.Errorf("emulator: config needs both a transfer and a reconfiguration model")
	}
	if a := cfg.Reconfig.Nominal(); !(a >= 0) || math.IsInf(a, 0) {
		return nil, nil, fmt.Errorf("emulator: reconfiguration model %s: delay %g s is not a non-negative time", cfg.Reconfig.Name(), a)
	}
	if o.Len() != len(s.Circuits) {
		return nil, nil, fmt.Errorf("emulator: order has %d circuits, schedule %d", o.Len(), len(s.Circuits))
	}
	if d != nil && d.N() != s.Ports {
		return nil, nil, fmt.Errorf("emulator: demand has %d ports, schedule %q has %d real ports", d.N(), s.Algorithm, s.Ports)
	}
	dur := sc.durations(len(s.Circuits))
	// The summary's facts of the circuits come from this pass too: each is read once.
	scan := newCircuitScan(s, d)
	for i := range s.Circuits {
		c := &s.Circuits[i]
		scan.add(c, s.Ports)
		t, err := cfg.Transfer.Seconds(c.Src, c.Dst, c.Bytes)
		if err != nil {
			return nil, nil, fmt.Errorf("emulator: circuit %d (%d→%d, %d bytes): %w", i, c.Src, c.Dst, c.Bytes, err)
		}
		if !(t >= 0) || math.IsInf(t, 0) {
			return nil, nil, fmt.Errorf("emulator: circuit %d (%d→%d, %d bytes): transfer model %s gave %g s", i, c.Src, c.Dst, c.Bytes, cfg.Transfer.Name(), t)
		}
		dur[i] = t
	}
	w := newWalker(o, sc)
	defer w.keep(sc)
	if err := drive(ctx, w, dur, cfg.Reconfig, sc); err != nil {
		return nil, nil, err
	}
	if !timeline {
		if err := w.finished(); err != nil {
			return nil, nil, fmt.Errorf("emulator: internal error: %w", err)
		}
		r := newSummaryOf(s, d, cfg, w.Counts(), &scan)
		if o.mode == schedules.Barrier {
			w.eachBarrierTiming(func(i int, ct schedules.CircuitTiming) { r.add(s, i, &ct) })
		} else {
			for i := range o.Len() {
				var ct schedules.CircuitTiming
				w.timing(i, &ct)
				r.add(s, i, &ct)
			}
		}
		res := r.finish(s, d, cfg)
		if err := checkBound(res, s, d); err != nil {
			return nil, nil, err
		}
		if then != nil {
			// The durations are not needed any more: a list this large goes back to the
			// garbage collector rather than to the pool, so let it go before then allocates.
			if cap(sc.dur) > keepMax {
				sc.dur = nil
			}
			if err := then(w); err != nil {
				return nil, nil, err
			}
		}
		return res, nil, nil
	}
	if o.mode == schedules.Partial {
		// Summarize(s, d, tl, ...), with each entry counted as it is made.
		if err := w.finished(); err != nil {
			return nil, nil, fmt.Errorf("emulator: internal error: %w", err)
		}
		r := newSummaryOf(s, d, cfg, w.Counts(), &scan)
		tl := w.partialTimeline(s, &r)
		res := r.finish(s, d, cfg)
		if err := checkBound(res, s, d); err != nil {
			return nil, nil, err
		}
		return res, tl, nil
	}
	tl, err := w.Timeline()
	if err != nil {
		// Unreachable for an Order built by NewOrder: every dependency points backwards.
		return nil, nil, fmt.Errorf("emulator: internal error: %w", err)
	}
	res := Summarize(s, d, tl, cfg, w.Counts())
	if err := checkBound(res, s, d); err != nil {
		return nil, nil, err
	}
	return res, tl, nil
}

// drive walks w in virtual time: circuit i transmits for dur[i], commands take what model says.
func drive(ctx context.Context, w *Walker, dur []float64, model ReconfigModel, sc *scratch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rc := model.NewReconfigurer()
	h, starts := sc.h[:0], sc.starts[:0]
	defer func() { sc.h, sc.starts = h[:0], starts[:0] }()
	var seq uint32
	launch := func(ready []int32, t float64) {
		for _, x := range ready {
			seq++
			h.push(event{t + dur[x], seq, x})
		}
	}
	ready, err := w.Start()
	if err != nil {
		return err
	}
	launch(ready, 0)
	pops := 0 // heap events, to look at ctx now and then
	for {
		if t, ok := w.Pending(); ok && (len(h) == 0 || h[0].t > t) {
			// Everything requested at t is known: send it as one command.
			id, _ := w.flush()
			start, end := t, t // a barrier round without changes starts at once
			if b := &w.cmds[id]; b.hi > b.lo {
				start, end = rc.Command(b.req, int(b.hi-b.lo))
				// The walk's times rest on this (a partial-mode circuit's transmission starts
				// at the latest end of its waits, see walkCirc).
				if !(start >= b.req && end >= start) || math.IsInf(end, 1) {
					return fmt.Errorf("emulator: reconfiguration model %s: a command of %d changes requested at %g s starts at %g s and ends at %g s; it must start at or after its request and end, in finite time, at or after its start", model.Name(), b.hi-b.lo, b.req, start, end)
				}
			}
			starts = append(starts, start)
			seq++
			h.push(event{end, seq, int32(-id - 1)})
			continue
		}
		if len(h) == 0 {
			return nil
		}
		ev := h.pop()
		if pops++; pops&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if ev.id >= 0 {
			ready, err = w.Completed(int(ev.id), ev.t)
		} else {
			id := int(-ev.id - 1)
			ready, err = w.Settled(id, starts[id], ev.t)
		}
		if err != nil {
			return fmt.Errorf("emulator: internal error: %w", err)
		}
		launch(ready, ev.t)
	}
}

// event is a circuit completion (id ≥ 0) or the completion of reconfiguration batch −id−1.
type event struct {
	t   float64
	seq uint32
	id  int32
}

type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	return h[i].t < h[j].t || h[i].t == h[j].t && h[i].seq < h[j].seq
}

func (h *eventHeap) push(ev event) {
	*h = append(*h, ev)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !a.less(i, p) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && a.less(r, l) {
			m = r
		}
		if !a.less(m, i) {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}
