package schedules

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// RoundTiming is what the circuits of one barrier round share in an execution: the round's
// command was requested at Ready (when the previous round had ended and lasted its planned
// duration), its switch changes ran over ChangeStart..ChangeEnd, and its circuits transmit from
// ChangeEnd. ReconfigStart is the circuits' CircuitTiming.ReconfigStart: ChangeStart, or Ready
// for a round without changes.
type RoundTiming struct {
	Ready, ReconfigStart, ChangeStart, ChangeEnd float64
}

// RoundTimeline is the Timeline of a barrier-mode execution, stored by round: a round's
// circuits share their ready, reconfiguration and transmit-start times, and its switch changes
// share their start and end, so what is kept per circuit is its round and its end (12 bytes,
// not a CircuitTiming's 48) and per switch change its switch, new state and round (8 bytes, not
// a SwitchChange's 32). A Birkhoff–von Neumann schedule on a dense 256-port demand has tens of
// millions of circuits and changes; this is what lets its timeline be checked in memory.
//
// Entries are read one at a time (Circuit, SwitchChange) or all at once (Expand, which gives
// exactly the Timeline of the same execution). VerifyRoundTimeline checks it as VerifyTimeline
// checks its expansion, with the same violations.
type RoundTimeline struct {
	rounds   []RoundTiming
	roundOf  []int32
	ends     []float64
	transmit []float64
	changes  *RoundChanges
}

// RoundChanges are the switch changes of a barrier execution by round, in timeline order,
// gathered before the rounds' times are known (an executor knows which switches each round
// changes before it runs), then handed to NewRoundTimeline. Each is 8 bytes, held in blocks of
// 2^16: however many there are, they are never copied, and less than one block is spare.
type RoundChanges struct {
	blocks [][]uint64 // each change: switch id (stage<<shift | switch) in bits 0–31, state in bit 32, round above
	n      int
	shift  uint   // stage<<shift | switch is a switch's id
	mask   uint32 // 1<<shift − 1
}

const (
	changeBlockBits = 16
	changeBlock     = 1 << changeBlockBits
	maxPackedRound  = 1<<31 - 1 // the largest round a packed change can hold
)

// NewRoundChanges returns an empty list of switch changes for an n-port fabric: its switches are
// 0 … n/2 − 1 of each stage.
func NewRoundChanges(n int) *RoundChanges {
	c := &RoundChanges{}
	if half := n / 2; half > 1 {
		c.shift = uint(bits.Len(uint(half - 1)))
		c.mask = uint32(1)<<c.shift - 1
	}
	return c
}

// Add appends a change of switch sw of stage stage to state to, made by round's command.
// Changes must be added in timeline order (by start).
func (c *RoundChanges) Add(round, stage, sw int, to benes.State) error {
	if round < 0 || round > maxPackedRound {
		return fmt.Errorf("schedules: round changes: round %d is out of range (0 … %d)", round, maxPackedRound)
	}
	if stage < 0 || sw < 0 || uint(sw)&^uint(c.mask) != 0 || uint64(stage)<<c.shift|uint64(sw) > math.MaxUint32 {
		return fmt.Errorf("schedules: round changes: switch (%d,%d) is not on the fabric", stage, sw)
	}
	if len(c.blocks) == 0 || len(c.blocks[len(c.blocks)-1]) == changeBlock {
		// The first block grows as a slice does (a small schedule's changes take little room);
		// the rest are allocated whole.
		room := changeBlock
		if len(c.blocks) == 0 {
			room = 16
		}
		c.blocks = append(c.blocks, make([]uint64, 0, room))
	}
	last := &c.blocks[len(c.blocks)-1]
	*last = append(*last, uint64(stage)<<c.shift|uint64(sw)|uint64(to&1)<<32|uint64(round)<<33)
	c.n++
	return nil
}

// Len is the number of changes.
func (c *RoundChanges) Len() int { return c.n }

// At is change k (0 ≤ k < Len): its round, switch and new state.
func (c *RoundChanges) At(k int) (round, stage, sw int, to benes.State) {
	stage, sw = c.switchOf(k)
	return c.round(k), stage, sw, c.state(k)
}

// The parts of change k, as Add packs them.

func (c *RoundChanges) packed(k int) uint64 { return c.blocks[k>>changeBlockBits][k&(changeBlock-1)] }

func (c *RoundChanges) round(k int) int { return int(c.packed(k) >> 33) }

func (c *RoundChanges) state(k int) benes.State { return benes.State(c.packed(k) >> 32 & 1) }

func (c *RoundChanges) switchOf(k int) (stage, sw int) {
	id := uint32(c.packed(k))
	return int(id >> c.shift), int(id & c.mask)
}

// NewRoundTimeline returns the timeline of a barrier execution: circuit c ran in round
// roundOf[c] (an index into rounds) and ended at ends[c]; it began to transmit at transmit[c]
// where transmit is not nil and transmit[c] is not NaN (a live run's measured start), else at
// its round's ChangeEnd. Its switch changes are changes (nil: none). The slices and changes
// become the timeline's.
func NewRoundTimeline(rounds []RoundTiming, roundOf []int32, ends, transmit []float64, changes *RoundChanges) (*RoundTimeline, error) {
	if len(ends) != len(roundOf) || transmit != nil && len(transmit) != len(roundOf) {
		return nil, fmt.Errorf("schedules: round timeline: %d circuits in rounds, %d ends and %d transmit starts", len(roundOf), len(ends), len(transmit))
	}
	for c, r := range roundOf {
		if r < 0 || int(r) >= len(rounds) {
			return nil, fmt.Errorf("schedules: round timeline: circuit %d is in round %d, there are %d", c, r, len(rounds))
		}
	}
	if changes == nil {
		changes = NewRoundChanges(0)
	}
	for k := range changes.n {
		if r := changes.round(k); r >= len(rounds) {
			return nil, fmt.Errorf("schedules: round timeline: switch change %d is in round %d, there are %d", k, r, len(rounds))
		}
	}
	return &RoundTimeline{rounds: rounds, roundOf: roundOf, ends: ends, transmit: transmit, changes: changes}, nil
}

// Len is the number of circuits.
func (t *RoundTimeline) Len() int { return len(t.roundOf) }

// NumSwitchChanges is the number of switch changes.
func (t *RoundTimeline) NumSwitchChanges() int { return t.changes.n }

// Rounds is the number of rounds.
func (t *RoundTimeline) Rounds() int { return len(t.rounds) }

// Circuit is circuit c's entry (0 ≤ c < Len): what Expand().Circuits[c] holds.
func (t *RoundTimeline) Circuit(c int) CircuitTiming {
	r := &t.rounds[t.roundOf[c]]
	tx, end := t.span(c)
	return CircuitTiming{Circuit: c, Ready: r.Ready, PathReady: r.Ready, ReconfigStart: r.ReconfigStart, TransmitStart: tx, End: end}
}

// SwitchChange is change k (0 ≤ k < NumSwitchChanges): what Expand().SwitchChanges[k] holds.
func (t *RoundTimeline) SwitchChange(k int) SwitchChange {
	stage, sw := t.changeSwitch(k)
	to := t.changeTo(k)
	start, end := t.changeSpan(k)
	return SwitchChange{Stage: int32(stage), Switch: int32(sw), From: to ^ 1, To: to, Start: start, End: end}
}

// span, changeSwitch, changeSpan and changeTo are parts of entries, for the verifier's loops.

func (t *RoundTimeline) span(c int) (start, end float64) {
	start = t.rounds[t.roundOf[c]].ChangeEnd
	if t.transmit != nil && !math.IsNaN(t.transmit[c]) {
		start = t.transmit[c]
	}
	return start, t.ends[c]
}

func (t *RoundTimeline) changeSwitch(k int) (stage, sw int) { return t.changes.switchOf(k) }

func (t *RoundTimeline) changeSpan(k int) (start, end float64) {
	r := &t.rounds[t.changes.round(k)]
	return r.ChangeStart, r.ChangeEnd
}

func (t *RoundTimeline) changeTo(k int) benes.State { return t.changes.state(k) }

// Completion is the time the last circuit ended.
func (t *RoundTimeline) Completion() float64 {
	c := 0.0
	for _, e := range t.ends {
		c = max(c, e)
	}
	return c
}

// Expand returns the timeline entry by entry: every circuit in circuit order, every switch change
// in order (an empty list, not nil, when there are none).
func (t *RoundTimeline) Expand() *Timeline {
	tl := &Timeline{Circuits: make([]CircuitTiming, len(t.roundOf)), SwitchChanges: make([]SwitchChange, t.changes.n)}
	for c := range tl.Circuits {
		tl.Circuits[c] = t.Circuit(c)
	}
	for k := range tl.SwitchChanges {
		tl.SwitchChanges[k] = t.SwitchChange(k)
	}
	return tl
}
