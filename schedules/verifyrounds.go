package schedules

import (
	"fmt"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// RoundVerifier is Verify for a barrier schedule handed out round by round (RoundStream): each
// round is checked as it comes (limits, endpoints, paths, planned times, the round's conflicts)
// and its bytes are added up; Finish compares them with the demand. A stream that passes finds
// no violation in Verify of the same schedule whole, and one that fails has the same kinds of
// violation, numbered by circuit from the stream's start. Its memory is the demand's size and
// the fabric's lanes.
type RoundVerifier struct {
	header Schedule
	d      *Demand
	fab    *benes.Fabric
	sent   []int64
	total  int64
	rc     *roundChecker[int]
	// base is the index of the next round's first circuit; last the group of the previous
	// round (−1 before the first).
	base, last int
	vs         []Violation
}

// NewRoundVerifier starts the check of a stream whose header is h against d (nil: the static
// checks only). A header that fails Validate, or whose ports are not the demand's, is a Header
// violation, returned here; nothing else is checked then.
func NewRoundVerifier(h *Schedule, d *Demand) (*RoundVerifier, []Violation) {
	v := &RoundVerifier{header: *h, d: d, last: -1}
	v.header.Circuits, v.header.Rounds = nil, nil
	if h.Mode != Barrier {
		return nil, []Violation{{Header, -1, fmt.Sprintf("a schedule checked round by round runs in barrier mode, not %q", h.Mode)}}
	}
	if err := v.header.Validate(); err != nil {
		return nil, []Violation{{Header, -1, err.Error()}}
	}
	if d != nil && d.N() != h.Ports {
		return nil, []Violation{{Header, -1, fmt.Sprintf("schedule has %d ports, demand has %d", h.Ports, d.N())}}
	}
	v.fab, _ = v.header.BenesFabric()
	if d != nil {
		v.sent = make([]int64, h.Ports*h.Ports)
	}
	v.rc = newRoundChecker[int](spaceOf(&v.header), v.fab)
	return v, nil
}

// Round checks the next round and returns its violations (none for a correct scheduler).
func (v *RoundVerifier) Round(r StreamRound) []Violation {
	v.vs = v.vs[:0]
	add := func(k ViolationKind, c int, format string, a ...any) {
		v.vs = append(v.vs, Violation{k, c, fmt.Sprintf(format, a...)})
	}
	base := v.base
	v.base += len(r.Circuits)
	if r.Group <= v.last {
		add(Header, -1, "round %d comes after round %d: a stream's rounds ascend", r.Group, v.last)
	}
	v.last = r.Group
	// The limits of Validate, on this round (the header passed already).
	var rounds []Round
	if r.Round != nil {
		rounds = []Round{*r.Round}
		if r.Round.Group != r.Group {
			add(Header, -1, "round %d lists group %d", r.Group, r.Round.Group)
		}
	}
	var err error
	if v.total, err = validateEntries(r.Circuits, rounds, base, v.total); err != nil {
		add(Header, -1, "round %d: %v", r.Group, err)
		return v.vs
	}
	for k := range r.Circuits {
		c := &r.Circuits[k]
		if c.Group != r.Group {
			add(Header, base+k, "group %d in round %d", c.Group, r.Group)
		}
		if !checkCircuit(add, &v.header, v.fab, base+k, c) {
			continue
		}
		if v.sent != nil {
			v.sent[c.Src*v.header.Ports+c.Dst] += c.Bytes
		}
		checkPath(add, v.fab, base+k, c)
	}
	v.rc.vs = v.rc.vs[:0]
	v.rc.begin()
	for k := range r.Circuits {
		v.rc.check(base+k, &r.Circuits[k])
	}
	return append(v.vs, v.rc.vs...)
}

// Finish returns the byte mismatches against the demand once every round has been checked.
func (v *RoundVerifier) Finish() []Violation {
	var vs []Violation
	if v.d != nil {
		checkDelivered(func(k ViolationKind, c int, format string, a ...any) {
			vs = append(vs, Violation{k, c, fmt.Sprintf(format, a...)})
		}, v.d, v.sent, v.header.Ports)
	}
	return vs
}
