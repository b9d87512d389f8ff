package hil

import (
	"fmt"
	"math"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// Compile turns the dependency order of s (emulator.NewOrder(s)) into device programs, one per
// endpoint (every port of the fabric, padding ports with empty programs): each circuit becomes a
// step on its transmitter that waits for the end stamps of its predecessors and for the
// commands of the epochs it waits on, as the walker releases it. Nothing is restated: the
// predecessors, waits, requirements and rounds are the order's own.
//
// Partial mode: one signal per epoch, requested when every circuit it requires has ended;
// signals requested at one instant are one command (Program.Batch), as the walker gathers them.
// Barrier mode: one signal per round, carrying the round's changes, requested when the previous
// round's circuits have ended and it has lasted its planned duration; the round's circuits wait
// for it alone.
func Compile(o *emulator.Order, s *schedules.Schedule) (*program.Program, error) {
	if o.Len() != len(s.Circuits) {
		return nil, fmt.Errorf("hil: compile: order has %d circuits, schedule %d", o.Len(), len(s.Circuits))
	}
	p := &program.Program{Endpoints: make([][]program.Step, max(s.N, s.Ports)), Circuits: o.Len()}
	for _, c := range s.Circuits {
		if c.Src < 0 || c.Src >= len(p.Endpoints) || c.Dst < 0 || c.Dst >= len(p.Endpoints) {
			return nil, fmt.Errorf("hil: compile: circuit %d→%d outside the fabric's %d ports", c.Src, c.Dst, len(p.Endpoints))
		}
	}
	var err error
	if o.Mode() == schedules.Barrier {
		err = compileBarrier(o, s, p)
	} else {
		err = compilePartial(o, s, p)
	}
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("hil: compile: internal error: %w", err)
	}
	return p, nil
}

func compilePartial(o *emulator.Order, s *schedules.Schedule, p *program.Program) error {
	p.Batch = true
	ne := o.NumEpochs()
	p.Signals = make([]program.Signal, ne)
	last := make([]int32, len(p.Endpoints)) // the previous circuit of each transmitter
	for i := range last {
		last[i] = -1
	}
	for c, ct := range s.Circuits {
		st := program.Step{Circuit: int32(c), Dst: int32(ct.Dst), Bytes: ct.Bytes,
			After: append([]int32(nil), o.Predecessors(c)...), Signals: append([]int32(nil), o.Waits(c)...)}
		// An endpoint runs its steps in order: that adds no wait only if the previous one is a
		// predecessor already (the transmitter is a resource of both).
		if q := last[ct.Src]; q >= 0 && !contains(st.After, q) {
			return fmt.Errorf("hil: compile: internal error: circuit %d does not wait for circuit %d, the previous one on its transmitter %d", c, q, ct.Src)
		}
		last[ct.Src] = int32(c)
		p.Endpoints[ct.Src] = append(p.Endpoints[ct.Src], st)
		for _, e := range o.Triggers(c) {
			p.Signals[e].Requires = append(p.Signals[e].Requires, int32(c))
		}
	}
	for e := range p.Signals {
		sg := &p.Signals[e]
		sg.After, sg.Changes = -1, 1
		if len(sg.Requires) != o.RequireCount(e) {
			return fmt.Errorf("hil: compile: internal error: epoch %d requires %d circuits, its triggers name %d", e, o.RequireCount(e), len(sg.Requires))
		}
	}
	return nil
}

func compileBarrier(o *emulator.Order, s *schedules.Schedule, p *program.Program) error {
	rounds := o.Rounds()
	p.Signals = make([]program.Signal, len(rounds))
	seen := 0
	for r, rd := range rounds {
		sg := program.Signal{After: -1, Changes: len(rd.Changes)}
		if r > 0 {
			prev := rounds[r-1]
			sg.After, sg.Gap = int32(r-1), prev.PlannedDuration
			for _, c := range prev.Circuits {
				sg.Requires = append(sg.Requires, int32(c))
			}
		}
		p.Signals[r] = sg
		for _, c := range rd.Circuits {
			ct := s.Circuits[c]
			p.Endpoints[ct.Src] = append(p.Endpoints[ct.Src], program.Step{Circuit: int32(c), Dst: int32(ct.Dst), Bytes: ct.Bytes, Signals: []int32{int32(r)}})
			seen++
		}
	}
	if seen != len(s.Circuits) {
		return fmt.Errorf("hil: compile: internal error: the rounds hold %d circuits, the schedule %d", seen, len(s.Circuits))
	}
	return nil
}

func contains(xs []int32, x int32) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// StampsTimeline is the timeline of a compiled run from its stamps, in the walker's terms (see
// schedules.CircuitTiming): per circuit when its transmitter and receiver were free, when its
// path was, when the reconfiguration it last waited for began, and its copy's span; on Beneš
// every switch change with its command's span, in order of command. Counts are the walker's.
func StampsTimeline(o *emulator.Order, s *schedules.Schedule, p *program.Program, st *program.Stamps) (*schedules.Timeline, emulator.Counts) {
	n := o.Len()
	tl := &schedules.Timeline{Circuits: make([]schedules.CircuitTiming, n), SwitchChanges: []schedules.SwitchChange{}}
	for c := range n {
		tl.Circuits[c] = schedules.CircuitTiming{Circuit: c, TransmitStart: st.Start[c], End: st.End[c]}
	}
	if o.Mode() == schedules.Barrier {
		for r, rd := range o.Rounds() {
			cmd := st.Commands[st.CommandOf[r]]
			rc := cmd.Requested
			if len(rd.Changes) > 0 {
				rc = cmd.Start
			}
			for _, c := range rd.Circuits {
				ct := &tl.Circuits[c]
				ct.Ready, ct.PathReady, ct.ReconfigStart = cmd.Requested, cmd.Requested, rc
			}
		}
	} else {
		partialTimings(o, s, st, tl)
	}
	counts := emulator.Counts{Rounds: len(o.Rounds()), StateChanges: o.NumEpochs(), Events: n + o.NumEpochs()}
	for _, cmd := range st.Commands {
		k := 0
		for _, g := range cmd.Signals {
			k += p.Signals[g].Changes
		}
		if k > 0 {
			counts.ReconfigEvents++
		}
	}
	if o.Fabric() == schedules.Benes {
		for _, cmd := range st.Commands {
			for _, e := range commandEpochs(o, cmd) {
				ep := o.Epoch(e)
				tl.SwitchChanges = append(tl.SwitchChanges, schedules.SwitchChange{Stage: int32(ep.Stage), Switch: int32(ep.Switch),
					From: ep.From, To: ep.To, Start: cmd.Start, End: cmd.End})
			}
		}
	}
	return tl, counts
}

// partialTimings fills Ready, PathReady and ReconfigStart in partial mode, as the walker defines
// them: Ready from the previous circuits on the transmitter and the receiver, PathReady the
// latest end of its predecessors and request of its commands, and the reconfiguration it waited
// for the first-issued of its latest-ending commands, when that ended after its path was ready.
func partialTimings(o *emulator.Order, s *schedules.Schedule, st *program.Stamps, tl *schedules.Timeline) {
	lastTx, lastRx := map[int]int{}, map[int]int{}
	for c, sc := range s.Circuits {
		ct := &tl.Circuits[c]
		if q, ok := lastTx[sc.Src]; ok {
			ct.Ready = st.End[q]
		}
		if q, ok := lastRx[sc.Dst]; ok {
			ct.Ready = max(ct.Ready, st.End[q])
		}
		lastTx[sc.Src], lastRx[sc.Dst] = c, c
		for _, q := range o.Predecessors(c) {
			ct.PathReady = max(ct.PathReady, st.End[q])
		}
		rcEnd, rcCmd := math.Inf(-1), int32(-1)
		for _, e := range o.Waits(c) {
			id := st.CommandOf[e]
			cmd := &st.Commands[id]
			ct.PathReady = max(ct.PathReady, cmd.Requested)
			if cmd.End > rcEnd || cmd.End == rcEnd && id < rcCmd {
				rcEnd, rcCmd = cmd.End, id
			}
		}
		ct.ReconfigStart = ct.TransmitStart
		if rcCmd >= 0 && rcEnd > ct.PathReady {
			ct.ReconfigStart = st.Commands[rcCmd].Start
		}
	}
}

// commandEpochs are the epochs a command carried: its signals in partial mode, its round's
// changes in barrier mode.
func commandEpochs(o *emulator.Order, cmd program.Command) []int {
	var out []int
	for _, g := range cmd.Signals {
		if o.Mode() == schedules.Barrier {
			out = append(out, o.Rounds()[g].Changes...)
		} else {
			out = append(out, int(g))
		}
	}
	return out
}
