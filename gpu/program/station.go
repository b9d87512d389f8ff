package program

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Tracker is the station's side of a program, the one statement of when a signal is requested
// and which signals form one command, shared by every device: it is told when circuits end and
// issues the commands that are due, timed by a Station. A device that runs the steps itself
// (the fake, a GPU) drives one from its loop or from a host thread watching the stamps.
type Tracker struct {
	p       *Program
	station Station
	// Per signal: required circuits not yet ended, the latest end of those that have, whether
	// it was issued and its command's end; which signals each circuit counts for (CSR).
	left         []int32
	reqT, sigEnd []float64
	issued       []bool
	reqIdx, reqs []int32
	pending      []int32
	next         int // non-batch: the next signal to issue
	lastReq      float64
	cmds         []Command
	cmdOf        []int32
}

// NewTracker prepares the station's side of p (which must be valid), its commands timed by st
// (which may be nil when no signal has changes).
func NewTracker(p *Program, st Station) *Tracker {
	n := p.Circuits
	t := &Tracker{p: p, station: st, left: make([]int32, len(p.Signals)), reqT: make([]float64, len(p.Signals)),
		sigEnd: make([]float64, len(p.Signals)), issued: make([]bool, len(p.Signals)), reqIdx: make([]int32, n+1),
		cmdOf: make([]int32, len(p.Signals))}
	for i, s := range p.Signals {
		t.left[i] = int32(len(s.Requires))
		for _, c := range s.Requires {
			t.reqIdx[c+1]++
		}
		if len(s.Requires) == 0 && p.Batch {
			t.pending = append(t.pending, int32(i))
		}
	}
	for c := range n {
		t.reqIdx[c+1] += t.reqIdx[c]
	}
	t.reqs = make([]int32, t.reqIdx[n])
	fill := append([]int32(nil), t.reqIdx[:n]...)
	for i, s := range p.Signals {
		for _, c := range s.Requires {
			t.reqs[fill[c]] = int32(i)
			fill[c]++
		}
	}
	return t
}

// Ended reports that circuit c ended at end (seconds from the program's start); each circuit
// once.
func (t *Tracker) Ended(c int32, end float64) {
	for _, s := range t.reqs[t.reqIdx[c]:t.reqIdx[c+1]] {
		t.reqT[s] = max(t.reqT[s], end)
		if t.left[s]--; t.left[s] == 0 && t.p.Batch {
			t.pending = append(t.pending, s)
		}
	}
}

// SignalEnd is the end of signal g's command, once it is issued.
func (t *Tracker) SignalEnd(g int32) (float64, bool) { return t.sigEnd[g], t.issued[g] }

// Done says whether every signal has been issued.
func (t *Tracker) Done() bool {
	return len(t.pending) == 0 && (t.p.Batch || t.next >= len(t.p.Signals))
}

// Commands are the commands issued so far, in order; CommandOf maps each issued signal to its
// command.
func (t *Tracker) Commands() []Command { return t.cmds }

// CommandOf maps each issued signal to its command.
func (t *Tracker) CommandOf() []int32 { return t.cmdOf }

// IssueDue issues what is due and returns how many commands it issued: with Batch, the signals
// requested so far, those requested at one instant (the same latest end) as one command, in
// order of request; otherwise the next signals in order whose requirements have ended (each
// after its predecessor's command and gap). Grouping by instant rather than by what a poll
// happens to see keeps a slow observer from lengthening a reconfiguration: a change requested
// earlier is not held for one requested later.
func (t *Tracker) IssueDue() (int, error) {
	if t.p.Batch {
		if len(t.pending) == 0 {
			return 0, nil
		}
		slices.SortStableFunc(t.pending, func(a, b int32) int { return cmp.Compare(t.reqT[a], t.reqT[b]) })
		n := 0
		for lo := 0; lo < len(t.pending); n++ {
			hi, k := lo, 0
			for ; hi < len(t.pending) && t.reqT[t.pending[hi]] == t.reqT[t.pending[lo]]; hi++ {
				k += t.p.Signals[t.pending[hi]].Changes
			}
			if err := t.issue(t.pending[lo:hi], t.reqT[t.pending[lo]], k); err != nil {
				t.pending = t.pending[:0]
				return n, err
			}
			lo = hi
		}
		t.pending = t.pending[:0]
		return n, nil
	}
	issued := 0
	for t.next < len(t.p.Signals) {
		s := &t.p.Signals[t.next]
		if t.left[t.next] > 0 || s.After >= 0 && !t.issued[s.After] {
			break
		}
		req := t.reqT[t.next]
		if s.After >= 0 {
			req = max(req, t.sigEnd[s.After]+s.Gap)
		}
		if err := t.issue([]int32{int32(t.next)}, req, s.Changes); err != nil {
			return issued, err
		}
		t.next++
		issued++
	}
	return issued, nil
}

// issue makes one command of sigs, requested at req with k changes.
func (t *Tracker) issue(sigs []int32, req float64, k int) error {
	req = max(req, t.lastReq) // the station's calls come in non-decreasing time
	t.lastReq = req
	start, end := req, req
	if k > 0 {
		if t.station == nil {
			return fmt.Errorf("program: a command of %d changes, but the device has no station", k)
		}
		start, end = t.station.Command(req, k)
		if !(start >= req && end >= start) || math.IsInf(end, 1) {
			return fmt.Errorf("program: station: a command of %d changes requested at %g s spans %g..%g s; it must start at or after its request and end, in finite time, at or after its start", k, req, start, end)
		}
	}
	id := int32(len(t.cmds))
	t.cmds = append(t.cmds, Command{Signals: append([]int32(nil), sigs...), Requested: req, Start: start, End: end})
	for _, s := range sigs {
		t.issued[s], t.sigEnd[s], t.cmdOf[s] = true, end, id
	}
	return nil
}

// SetEnd moves command id's end to end (not before its start) once it was carried out: a
// station that applies commands on real switches learns their end only then, and a later
// barrier round counts its gap from it.
func (t *Tracker) SetEnd(id int, end float64) {
	c := &t.cmds[id]
	c.End = max(end, c.Start)
	for _, s := range c.Signals {
		t.sigEnd[s] = c.End
	}
}
