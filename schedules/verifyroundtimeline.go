package schedules

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// RoundPart is one barrier round's part of a RoundTimeline, as an executor that runs a schedule
// round by round (emulator.RoundRun) produces it: the round's times, each of its circuits' end
// (and, where Transmit is not nil and the entry not NaN, its measured transmit start; else the
// round's ChangeEnd), and its switch changes in timeline order. NewRoundTimeline of every
// round's parts is the timeline of the whole execution.
type RoundPart struct {
	Timing        RoundTiming
	Ends          []float64
	Transmit      []float64
	SwitchChanges []RoundSwitchChange
}

// RoundSwitchChange is a switch change of a round: switch Switch of stage Stage goes to To (from
// the other state), over the round's ChangeStart..ChangeEnd.
type RoundSwitchChange struct {
	Stage, Switch int32
	To            benes.State
}

// MaxPendingRounds bounds the rounds whose circuits RoundTimelineVerifier holds back, waiting
// for a round whose changes start after they have all ended (the next one, in an execution of
// barrier rounds one after another).
const MaxPendingRounds = 64

// RoundTimelineVerifier is VerifyRoundTimeline for a barrier execution handed over round by
// round (a RoundStream's rounds and each one's RoundPart), holding no round after the one that
// follows it. It applies the same rules with the same code (the times of each circuit, the
// replay of each switch's changes, the overlaps of resources in transmit-start order, the state
// of every switch a circuit traverses while it transmits), carrying the switches' states, their
// last changes and the resources' last holders from round to round. A round's circuits are
// checked against switch changes once the next round's are known: a round ends, in a correct
// execution, before the next one's changes start.
//
// On an execution whose rounds follow each other in time (each round's changes start no earlier
// than the previous rounds' circuits start) it finds the violations VerifyRoundTimeline finds on
// the timeline of the whole execution, numbered alike, each round's in its own order; a round
// whose circuits' times are out of order is reported alone, and nothing after it is checked, as
// VerifyRoundTimeline checks nothing else then. Its memory is the fabric's ports, lanes and
// switches and the rounds held back.
type RoundTimelineVerifier struct {
	header  Schedule
	sp      space
	ov      *overlaps[int]
	replays table[switchSweep[int]] // each switch's changes so far, replayed
	sws     table[switchSweep[int]] // the sweeps of a release, cleared after it
	// last holds each switch's last change of the rounds checked already; lastSet marks the
	// switches that have one.
	last    table[SwitchChange]
	lastSet table[bool]
	// mark is, per switch, the last release (numbered from 1 in releases) that listed its last change.
	mark     table[int]
	releases int
	pending  []pendingRound
	// spare are released rounds whose slices the next rounds reuse; order, chs and touched are a
	// release's buffers.
	spare   []pendingRound
	order   []at
	chs     []SwitchChange
	touched []int
	base    int
	failed  bool
	changes int // on a crossbar: switch changes seen
}

// pendingRound is a round held back: its circuits (from circuit base on), their transmissions
// and its switch changes.
type pendingRound struct {
	base     int
	circuits []Circuit
	t0, t1   []float64
	changes  []SwitchChange
	hops     []benes.Traversal // every circuit's traversals, one after another
}

// NewRoundTimelineVerifier starts the check of an execution of the stream whose header is h.
func NewRoundTimelineVerifier(h *Schedule) *RoundTimelineVerifier {
	v := &RoundTimelineVerifier{header: *h}
	v.header.Circuits, v.header.Rounds = nil, nil
	v.sp = spaceOf(&v.header)
	v.ov = newOverlaps[int](&v.header)
	n := v.sp.switches()
	v.sws = newTable[switchSweep[int]](n)
	v.replays, v.last, v.lastSet, v.mark = newTable[switchSweep[int]](n), newTable[SwitchChange](n), newTable[bool](n), newTable[int](n)
	return v
}

// Round checks round r's part p of the execution and returns the violations found (none for a
// correct executor): its circuits' times and its switch changes now, and the circuits of the
// rounds held back against the changes up to r's. p's slices and r's circuits are copied where
// they are kept.
func (v *RoundTimelineVerifier) Round(r StreamRound, p *RoundPart) []Violation {
	if v.failed {
		return nil
	}
	base := v.base
	v.base += len(r.Circuits)
	if len(p.Ends) != len(r.Circuits) || p.Transmit != nil && len(p.Transmit) != len(r.Circuits) {
		v.failed = true
		return []Violation{{TimelineShape, -1, fmt.Sprintf("round %d: %d circuits, %d ends and %d transmit starts", r.Group, len(r.Circuits), len(p.Ends), len(p.Transmit))}}
	}
	pr := v.spareRound()
	pr.base, pr.circuits, pr.t1 = base, append(pr.circuits, r.Circuits...), append(pr.t1, p.Ends...)
	pr.t0 = slices.Grow(pr.t0, len(r.Circuits))[:len(r.Circuits)]
	var vs []Violation
	tm := &p.Timing
	for j := range r.Circuits {
		pr.hops = r.Circuits[j].Path.AppendTo(pr.hops)
		pr.t0[j] = tm.ChangeEnd
		if p.Transmit != nil && !math.IsNaN(p.Transmit[j]) {
			pr.t0[j] = p.Transmit[j]
		}
		ct := CircuitTiming{Circuit: base + j, Ready: tm.Ready, PathReady: tm.Ready, ReconfigStart: tm.ReconfigStart, TransmitStart: pr.t0[j], End: pr.t1[j]}
		if bad, ok := timesOutOfOrder(&ct); ok {
			vs = append(vs, bad)
		}
	}
	if len(vs) > 0 {
		v.failed = true
		return vs
	}
	vs = v.replay(p, &pr)
	// Every later round's changes start no earlier than r's: the rounds held back whose circuits
	// have all ended by then are checked now.
	end := math.Inf(-1)
	for _, q := range v.pending {
		for _, t := range q.t1 {
			end = max(end, t)
		}
	}
	if tm.ChangeStart >= end || len(v.pending) >= MaxPendingRounds {
		vs = append(vs, v.release(pr.changes)...)
	}
	v.pending = append(v.pending, pr)
	return vs
}

// replay replays round p's switch changes (into pr) and returns those that do not follow from the
// switch's changes before them, in (stage, switch) order.
func (v *RoundTimelineVerifier) replay(p *RoundPart, pr *pendingRound) []Violation {
	type shape struct {
		id int
		v  Violation
	}
	var shapes []shape
	if v.header.Fabric != Benes {
		v.changes += len(p.SwitchChanges)
		return nil
	}
	for _, rc := range p.SwitchChanges {
		stage, sw := int(rc.Stage), int(rc.Switch)
		ch := SwitchChange{Stage: rc.Stage, Switch: rc.Switch, From: rc.To ^ 1, To: rc.To, Start: p.Timing.ChangeStart, End: p.Timing.ChangeEnd}
		id, ok := v.sp.switchID(stage, sw)
		if !ok {
			shapes = append(shapes, shape{-1, Violation{TimelineShape, -1, fmt.Sprintf("switch (%d,%d) is not on the fabric", stage, sw)}})
			continue
		}
		if bad, ok := v.replays.at(id).replay(stage, sw, &ch, true); ok {
			shapes = append(shapes, shape{id, bad})
		}
		pr.changes = append(pr.changes, ch)
	}
	// In (stage, switch) order, as VerifyTimeline reports them.
	slices.SortStableFunc(shapes, func(a, b shape) int { return cmp.Compare(a.id, b.id) })
	var vs []Violation
	for _, sh := range shapes {
		vs = append(vs, sh.v)
	}
	return vs
}

// Finish checks the rounds still held back and returns what it finds.
func (v *RoundTimelineVerifier) Finish() []Violation {
	if v.failed {
		return nil
	}
	vs := v.release(nil)
	if v.header.Fabric != Benes && v.changes > 0 {
		vs = append(vs, Violation{TimelineShape, -1, fmt.Sprintf("a crossbar has no internal switches, the timeline changes %d", v.changes)})
	}
	return vs
}

// release checks the circuits of the rounds held back, as VerifyTimeline's sweep does: in
// (transmit start, index) order, for overlaps with the circuits before them and against every
// switch change up to and including upcoming (the next round's), then forgets them.
func (v *RoundTimelineVerifier) release(upcoming []SwitchChange) []Violation {
	if len(v.pending) == 0 {
		return nil
	}
	order, chs := v.order[:0], v.chs[:0]
	for q := range v.pending {
		for j := range v.pending[q].circuits {
			order = append(order, at{q, j})
		}
	}
	v.order = order
	slices.SortFunc(order, func(a, b at) int {
		pa, pb := &v.pending[a.q], &v.pending[b.q]
		return cmp.Or(cmp.Compare(pa.t0[a.j], pb.t0[b.j]), cmp.Compare(pa.base+a.j, pb.base+b.j))
	})
	var st *switchStates[int]
	var touched []int
	if v.header.Fabric == Benes {
		chs, touched = v.lastChanges()
		for _, q := range v.pending {
			chs = append(chs, q.changes...)
		}
		chs = append(chs, upcoming...)
		v.chs = chs
		st = newSwitchStatesIn(&v.header, timelineView{tl: &Timeline{SwitchChanges: chs}}, v.sws, false)
	}
	for _, o := range order {
		q := &v.pending[o.q]
		c := &q.circuits[o.j]
		v.ov.circuit(q.base+o.j, c, q.t0[o.j], q.t1[o.j])
		if st != nil {
			st.circuit(q.base+o.j, c, q.t0[o.j], q.t1[o.j])
		}
	}
	vs := v.ov.violations()
	if st != nil {
		vs = append(vs, st.violations(true)...) // its shapes: none, as report is off
		v.clearSweeps(chs, touched)
		for _, q := range v.pending {
			for _, ch := range q.changes {
				id, _ := v.sp.switchID(int(ch.Stage), int(ch.Switch))
				*v.last.at(id), *v.lastSet.at(id) = ch, true
			}
		}
	}
	v.spare = append(v.spare, v.pending...)
	v.pending = v.pending[:0]
	return vs
}

// at is a held-back circuit: circuit j of held-back round q.
type at struct{ q, j int }

// spareRound is an empty held-back round, with the slices of one released before where there is one.
func (v *RoundTimelineVerifier) spareRound() pendingRound {
	if len(v.spare) == 0 {
		return pendingRound{}
	}
	q := v.spare[len(v.spare)-1]
	v.spare = v.spare[:len(v.spare)-1]
	return pendingRound{circuits: q.circuits[:0], t0: q.t0[:0], t1: q.t1[:0], changes: q.changes[:0], hops: q.hops[:0]}
}

// clearSweeps zeroes the per-switch sweeps a release used: those of the switches that chs change
// and that the held-back circuits traverse (touched, by id).
func (v *RoundTimelineVerifier) clearSweeps(chs []SwitchChange, touched []int) {
	for _, ch := range chs {
		if id, ok := v.sp.switchID(int(ch.Stage), int(ch.Switch)); ok {
			*v.sws.at(id) = switchSweep[int]{}
		}
	}
	for _, id := range touched {
		*v.sws.at(id) = switchSweep[int]{}
	}
}

// lastChanges returns the last change of every switch that the held-back circuits traverse and
// the rounds checked already changed (what leaves it in the state it is in when they start),
// and the ids of the switches they traverse.
func (v *RoundTimelineVerifier) lastChanges() (chs []SwitchChange, touched []int) {
	v.releases++
	chs, touched = v.chs[:0], v.touched[:0]
	defer func() { v.touched = touched }()
	for _, q := range v.pending {
		for _, tr := range q.hops {
			id, ok := v.sp.switchID(tr.Stage, tr.Switch)
			if !ok {
				continue
			}
			if m := v.mark.at(id); *m != v.releases {
				*m = v.releases
				touched = append(touched, id)
				if *v.lastSet.at(id) {
					chs = append(chs, *v.last.at(id))
				}
			}
		}
	}
	return chs, touched
}
