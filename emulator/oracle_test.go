package emulator

// The walker-based engine must give exactly what the engine it replaced gave. This file keeps that
// engine, as it was before the walker (run.go at commit 36c8d91, identifiers prefixed with
// "oracle", pooled scratch replaced by plain allocations), as the oracle of
// TestPropertyWalkerMatchesOracle. Do not "fix" it: it is the reference.

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// oracleRun is Run as it was.
func oracleRun(ctx context.Context, s *schedules.Schedule, d *schedules.Demand, cfg Config) (*Result, *schedules.Timeline, error) {
	o, err := NewOrder(s)
	if err != nil {
		return nil, nil, err
	}
	return oracleRunOrder(ctx, o, s, d, cfg, nil)
}

// oracleRunOrder is RunOrder as it was.
func oracleRunOrder(ctx context.Context, o *Order, s *schedules.Schedule, d *schedules.Demand, cfg Config, _ any) (*Result, *schedules.Timeline, error) {
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
	e := newOracleEngine(o, s)
	for i, c := range s.Circuits {
		t, err := cfg.Transfer.Seconds(c.Src, c.Dst, c.Bytes)
		if err != nil {
			return nil, nil, fmt.Errorf("emulator: circuit %d (%d→%d, %d bytes): %w", i, c.Src, c.Dst, c.Bytes, err)
		}
		if !(t >= 0) || math.IsInf(t, 0) {
			return nil, nil, fmt.Errorf("emulator: circuit %d (%d→%d, %d bytes): transfer model %s gave %g s", i, c.Src, c.Dst, c.Bytes, cfg.Transfer.Name(), t)
		}
		e.c[i].dur = t
	}
	rc := cfg.Reconfig.NewReconfigurer()
	var err error
	if o.mode == schedules.Barrier {
		err = e.runBarrier(ctx, rc)
	} else {
		err = e.runPartial(ctx, rc)
	}
	if err != nil {
		return nil, nil, err
	}
	tl := e.tl
	if tl == nil {
		tl = e.timeline()
	}
	res := e.result(tl, s, d, cfg)
	return res, tl, nil
}

// oracleEvent is a circuit completion (id ≥ 0) or the completion of reconfiguration batch −id−1.
type oracleEvent struct {
	t   float64
	seq uint32
	id  int32
}

type oracleHeap []oracleEvent

func (h oracleHeap) less(i, j int) bool {
	return h[i].t < h[j].t || h[i].t == h[j].t && h[i].seq < h[j].seq
}

func (h *oracleHeap) push(ev oracleEvent) {
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

func (h *oracleHeap) pop() oracleEvent {
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

// batch is one reconfiguration command, requested at req: the epochs batchEps[lo:hi] of the
// engine. Everything in one command was requested at the same instant.
type oracleBatch struct {
	req, start, end float64
	lo, hi          int32
}

// oracleCirc is the walk's state of one circuit with the lists it reads, kept in one 64-byte
// record so that releasing or completing a circuit touches one cache line rather than one per
// array. Its end is tx + dur, computed where needed rather than stored.
type oracleCirc struct {
	dur, tx float64
	// pathRdy is the latest of the circuit's predecessors' ends and its epochs' requests (in
	// barrier mode, the round start); rcStart and rcEnd are the start and end of the
	// latest-ending reconfiguration it waits on (−1 for none).
	pathRdy, rcStart, rcEnd float64
	// pending counts the predecessors and epochs it still waits for (partial mode).
	pending int32
	// succLo and trigLo start its lists in Order.succ and Order.trig (the next record's end
	// them); txPred and rxPred are as in Order.
	succLo, trigLo, txPred, rxPred int32
}

// oracleEp is the walk's state of one epoch with what it reads of the Order, in one record for
// the same reason: pending counts the circuits it still requires, who and to are Order.eps,
// and userLo starts its list in Order.user (the next record's userLo ends it).
type oracleEp struct {
	pending, who, to, userLo int32
}

type oracleEngine struct {
	o        *Order
	s        *schedules.Schedule
	c        []oracleCirc // one more than there are circuits, for the last list's end
	batches  []oracleBatch
	batchEps []int32
	events   int
	h        oracleHeap
	seq      uint32
	// tl is the timeline of a partial-mode walk (nil in barrier mode, whose timeline is built
	// by timeline).
	tl *schedules.Timeline
}

func newOracleEngine(o *Order, s *schedules.Schedule) *oracleEngine {
	nc := len(s.Circuits)
	e := &oracleEngine{o: o, s: s, c: make([]oracleCirc, nc+1)}
	for i := 0; i < nc; i++ {
		e.c[i] = oracleCirc{rcEnd: -1, succLo: o.succIdx[i], trigLo: o.trigIdx[i], txPred: o.txPred[i], rxPred: o.rxPred[i],
			pending: (o.predIdx[i+1] - o.predIdx[i]) + (o.waitIdx[i+1] - o.waitIdx[i])}
	}
	e.c[nc] = oracleCirc{succLo: o.succIdx[nc], trigLo: o.trigIdx[nc]}
	return e
}

func (e *oracleEngine) startCircuit(c int32, t float64) {
	p := &e.c[c]
	p.tx = t
	e.seq++
	e.h.push(oracleEvent{t + p.dur, e.seq, c})
}

// runPartial walks the dependency order on completion events.
func (e *oracleEngine) runPartial(ctx context.Context, rc Reconfigurer) error {
	o := e.o
	cs := e.c
	nc, ne := len(cs)-1, o.numEpochs()
	es := make([]oracleEp, ne+1)
	for ep := 0; ep < ne; ep++ {
		ex := o.Epoch(ep)
		who, to := int32(ex.Switch), int32(ex.Dst)
		if ex.Stage >= 0 {
			who, to = int32(ex.Stage*(o.n/2)+ex.Switch), int32(ex.To)
		}
		es[ep] = oracleEp{pending: o.reqCount[ep], who: who, to: to, userLo: o.use[2*ep]}
	}
	es[ne] = oracleEp{userLo: o.use[2*ne]}
	e.batchEps = slices.Grow(e.batchEps[:0], ne) // every epoch is sent once
	// changed[k] is batchEps[k]'s switch and new state (switch id shifted left once, the state
	// in bit 0; Beneš only), noted when the epoch is requested and its record is in cache, so
	// that the timeline's switch changes are written afterwards in one sequential pass.
	logChanges := o.fabric == schedules.Benes
	changed := make([]int32, 0, ne)
	// The epochs requested at reqT and not yet sent to the controller are batchEps[reqLo:]: the
	// next command's list, built in place.
	reqLo := int32(0)
	reqT := 0.0
	pops := 0 // heap events, to look at ctx now and then
	if err := ctx.Err(); err != nil {
		return err
	}
	for ep := 0; ep < ne; ep++ {
		if es[ep].pending == 0 {
			e.batchEps = append(e.batchEps, int32(ep))
			if logChanges {
				changed = append(changed, es[ep].who<<1|es[ep].to)
			}
		}
	}
	for c := 0; c < nc; c++ {
		if cs[c].pending == 0 {
			e.startCircuit(int32(c), 0)
		}
	}
	for {
		if hi := int32(len(e.batchEps)); hi > reqLo && (len(e.h) == 0 || e.h[0].t > reqT) {
			// Everything requested at reqT is known: send it as one command.
			start, end := rc.Command(reqT, int(hi-reqLo))
			b := int32(len(e.batches))
			e.batches = append(e.batches, oracleBatch{reqT, start, end, reqLo, hi})
			reqLo = hi
			e.seq++
			e.h.push(oracleEvent{end, e.seq, -b - 1})
			continue
		}
		if len(e.h) == 0 {
			break
		}
		ev := e.h.pop()
		e.events++
		if pops++; pops&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if ev.id >= 0 {
			c := ev.id
			p, next := &cs[c], &cs[c+1]
			for _, x := range o.succ[p.succLo:next.succLo] {
				q := &cs[x]
				q.pathRdy = max(q.pathRdy, ev.t)
				if q.pending--; q.pending == 0 {
					e.startCircuit(x, ev.t)
				}
			}
			for _, ep := range o.trig[p.trigLo:next.trigLo] {
				if es[ep].pending--; es[ep].pending == 0 {
					reqT = ev.t
					e.batchEps = append(e.batchEps, ep)
					if logChanges {
						changed = append(changed, es[ep].who<<1|es[ep].to)
					}
				}
			}
			continue
		}
		b := e.batches[-ev.id-1]
		// Each switch's change is an oracleEvent of its own; a command only makes them simultaneous.
		e.events += int(b.hi-b.lo) - 1
		for _, ep := range e.batchEps[b.lo:b.hi] {
			for _, x := range o.user[es[ep].userLo:es[ep+1].userLo] {
				p := &cs[x]
				p.pathRdy = max(p.pathRdy, b.req)
				// Commands end in the order they start, so the latest end has the latest start.
				if b.end > p.rcEnd {
					p.rcStart, p.rcEnd = b.start, b.end
				}
				if p.pending--; p.pending == 0 {
					e.startCircuit(x, ev.t)
				}
			}
		}
	}
	for c := 0; c < nc; c++ {
		if cs[c].pending != 0 {
			// Unreachable for an Order built by NewOrder: every dependency points backwards.
			return fmt.Errorf("emulator: internal error: circuit %d never became ready", c)
		}
	}
	e.tl = e.partialTimeline(changed)
	return nil
}

// partialTimeline builds the Timeline of a finished partial-mode walk; changed is its log of
// switch changes (see runPartial).
func (e *oracleEngine) partialTimeline(changed []int32) *schedules.Timeline {
	o := e.o
	cs := e.c
	nc := len(cs) - 1
	tl := &schedules.Timeline{Circuits: make([]schedules.CircuitTiming, nc), SwitchChanges: []schedules.SwitchChange{}}
	for c := 0; c < nc; c++ {
		p := &cs[c]
		ct := schedules.CircuitTiming{Circuit: c, PathReady: p.pathRdy, TransmitStart: p.tx, End: p.tx + p.dur}
		if q := p.txPred; q >= 0 {
			ct.Ready = cs[q].tx + cs[q].dur
		}
		if q := p.rxPred; q >= 0 {
			ct.Ready = max(ct.Ready, cs[q].tx+cs[q].dur)
		}
		// A reconfiguration it waited for is one still under way when its path was free.
		ct.ReconfigStart = ct.TransmitStart
		if p.rcEnd > ct.PathReady {
			ct.ReconfigStart = p.rcStart
		}
		tl.Circuits[c] = ct
	}
	if o.fabric == schedules.Benes {
		// Every epoch is sent exactly once, and commands start in non-decreasing time, so
		// listing them in order sorts the changes by start; within one command they are in
		// order of request.
		tl.SwitchChanges = make([]schedules.SwitchChange, len(changed))
		shift := bits.TrailingZeros(uint(o.n / 2)) // a switch id is stage·(n/2) + switch
		mask := o.n/2 - 1
		for _, b := range e.batches {
			for k := b.lo; k < b.hi; k++ {
				sw, to := int(changed[k]>>1), benes.State(changed[k]&1)
				tl.SwitchChanges[k] = schedules.SwitchChange{Stage: int32(sw >> shift), Switch: int32(sw & mask),
					From: to ^ 1, To: to, Start: b.start, End: b.end}
			}
		}
	}
	return tl
}

// runBarrier runs the rounds one after another; a round's changes are one command.
func (e *oracleEngine) runBarrier(ctx context.Context, rc Reconfigurer) error {
	t := 0.0
	for _, r := range e.o.rounds {
		if err := ctx.Err(); err != nil {
			return err
		}
		txStart, rcStart := t, t
		if len(r.Changes) > 0 {
			start, end := rc.Command(t, len(r.Changes))
			lo := int32(len(e.batchEps))
			for _, ep := range r.Changes {
				e.batchEps = append(e.batchEps, int32(ep))
			}
			e.batches = append(e.batches, oracleBatch{t, start, end, lo, int32(len(e.batchEps))})
			e.events += len(r.Changes)
			txStart, rcStart = end, start
		}
		roundEnd := txStart + r.PlannedDuration
		for _, c := range r.Circuits {
			p := &e.c[c]
			p.pathRdy = t
			p.rcStart = rcStart
			p.tx = txStart
			roundEnd = max(roundEnd, txStart+p.dur)
			e.events++
		}
		t = roundEnd
	}
	return nil
}

// timeline builds the Timeline of a barrier-mode run from the engine's times.
func (e *oracleEngine) timeline() *schedules.Timeline {
	o := e.o
	cs := e.c[:len(e.c)-1]
	tl := &schedules.Timeline{Circuits: make([]schedules.CircuitTiming, len(cs))}
	for c := range cs {
		p := &cs[c]
		tl.Circuits[c] = schedules.CircuitTiming{Circuit: c, Ready: p.pathRdy, PathReady: p.pathRdy,
			ReconfigStart: p.rcStart, TransmitStart: p.tx, End: p.tx + p.dur}
	}
	tl.SwitchChanges = []schedules.SwitchChange{}
	if o.fabric == schedules.Benes {
		// Commands start in non-decreasing time, so listing them in order sorts the changes by
		// start; within one command they are in order of request.
		tl.SwitchChanges = make([]schedules.SwitchChange, 0, o.numEpochs())
		for _, b := range e.batches {
			for _, i := range e.batchEps[b.lo:b.hi] {
				ep := o.Epoch(int(i))
				tl.SwitchChanges = append(tl.SwitchChanges, schedules.SwitchChange{
					Stage: int32(ep.Stage), Switch: int32(ep.Switch), From: ep.From, To: ep.To, Start: b.start, End: b.end})
			}
		}
	}
	return tl
}

// result summarises a finished run.
func (e *oracleEngine) result(tl *schedules.Timeline, s *schedules.Schedule, d *schedules.Demand, cfg Config) *Result {
	r := &Result{
		Algorithm:    s.Algorithm,
		Transfer:     cfg.Transfer.Name(),
		Reconfig:     cfg.Reconfig.Name(),
		Completion:   tl.Completion(),
		Groups:       s.Groups(),
		Circuits:     len(s.Circuits),
		StateChanges: e.o.numEpochs(),
		Events:       e.events,
	}
	if e.o.mode == schedules.Barrier {
		r.Groups = len(e.o.rounds)
	}
	for _, b := range e.batches {
		if b.hi > b.lo {
			r.ReconfigEvents++
		}
	}
	ports := s.Ports
	r.Endpoints = make([]EndpointTime, 2*ports)
	for p := 0; p < ports; p++ {
		r.Endpoints[p].Port = p
		r.Endpoints[ports+p].Port, r.Endpoints[ports+p].Rx = p, true
	}
	for i, ct := range tl.Circuits {
		c := s.Circuits[i]
		r.RNBWait += ct.PathReady - ct.Ready
		busy, rcf := ct.End-ct.TransmitStart, ct.TransmitStart-ct.PathReady
		// Circuits on padding ports carry nothing real; only real ports are reported.
		if c.Src < ports {
			r.Endpoints[c.Src].Busy += busy
			r.Endpoints[c.Src].Reconfiguring += rcf
		}
		if c.Dst < ports {
			r.Endpoints[ports+c.Dst].Busy += busy
			r.Endpoints[ports+c.Dst].Reconfiguring += rcf
		}
	}
	for i := range r.Endpoints {
		ep := &r.Endpoints[i]
		ep.Idle = max(r.Completion-ep.Busy-ep.Reconfiguring, 0)
	}
	if d == nil {
		// Without a demand only the ports some circuit uses are listed (a schedule file alone
		// may name a fabric of 2^20 ports): both sides of each, transmitters first.
		used := make([]bool, ports)
		for _, c := range s.Circuits {
			for _, p := range []int{c.Src, c.Dst} {
				if p < ports {
					used[p] = true
				}
			}
		}
		var tx, rx []EndpointTime
		for p := range ports {
			if used[p] {
				tx, rx = append(tx, r.Endpoints[p]), append(rx, r.Endpoints[ports+p])
			}
		}
		r.Endpoints = append(tx, rx...)
		if r.Endpoints == nil {
			r.Endpoints = []EndpointTime{}
		}
	}
	if d != nil {
		// The bounds follow the run's own transfer model (bytes/b, or each pair's MinSeconds).
		r.BoundReconfig = cfg.Reconfig.Nominal()
		var err error
		if b, ok := BandwidthOf(cfg.Transfer); ok && b > 0 {
			r.BoundBandwidth, r.Bounds = b, schedules.LowerBound(d, b, r.BoundReconfig)
		} else if r.Bounds, err = schedules.LowerBoundUnder(d, cfg.Transfer.MinSeconds, r.BoundReconfig); err != nil {
			r.BoundReconfig = 0
			r.Notes = append(r.Notes, fmt.Sprintf("no lower bounds under the %s transfer model: %v", cfg.Transfer.Name(), err))
		}
		if r.Bounds.Bandwidth > 0 {
			r.RatioBandwidth = ratio(r.Completion, r.Bounds.Bandwidth)
		}
		if r.Bounds.Reconfig > 0 {
			r.RatioReconfig = ratio(r.Completion, r.Bounds.Reconfig)
		}
	}
	if _, ok := cfg.Transfer.(*alphaBetaModel); ok {
		pieces := map[[2]int]int{}
		for _, c := range s.Circuits {
			pieces[[2]int{c.Src, c.Dst}]++
		}
		split, extra := 0, 0
		for _, k := range pieces {
			if k > 1 {
				split++
				extra += k - 1
			}
		}
		if split > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("α-β model: %d demands are split across several circuits and pay α once per piece (%d extra α in all)", split, extra))
		}
	}
	if e.o.fabric == schedules.Crossbar && r.StateChanges > 0 {
		r.Notes = append(r.Notes, "crossbar: state changes count transmitter re-pointings; the timeline lists no switch changes")
	}
	return r
}
