// Package program is what a device runs in a compiled replay: one program per endpoint, each a
// list of copies that wait on each other's end stamps and on reconfiguration signals in memory,
// never on a message from the host. A host (package hil) compiles a schedule's dependency order
// into a Program; a device executes it without the host on the critical path and leaves a stamp
// per circuit and per command, which the host reads back at the end.
//
// The semantics a device implements, for every endpoint independently:
//
//	for each Step of the endpoint, in order:
//	    wait until the end stamp of every circuit in After is written
//	    wait until every Signal in Signals is issued (its command's end time is known)
//	    wait until the clock reads the latest of those ends (the target)
//	    copy Bytes to Dst; stamp the start, then the end
//
// Signals are reconfiguration requests, handed to one station (a switch controller, or the model
// of one) that turns them into commands: a signal is requested once every circuit in Requires
// has ended (and, with After ≥ 0, Gap after that signal's command ended), at the latest of
// those ends; with Batch, the signals requested at one instant are one command, in order of
// request, otherwise each signal is a command of its own, in order (Tracker). The station gives each command its span (Station.Command); the
// span's end is the value circuits wait for. Execute runs a Program on a fake device in real or
// virtual time.
//
// Nothing here knows about schedules or fabrics; the package imports none of the model.
package program

import (
	"errors"
	"fmt"
)

// Step is one circuit in an endpoint's program.
type Step struct {
	// Circuit numbers the circuit (0 ≤ Circuit < Program.Circuits); it indexes the stamps.
	Circuit int32
	// Dst is the receiving endpoint, Bytes the copy's size.
	Dst   int32
	Bytes int64
	// After are the circuits whose end stamps the copy waits for.
	After []int32
	// Signals are the reconfiguration signals whose commands' ends the copy waits for.
	Signals []int32
}

// Signal is one reconfiguration request to the station.
type Signal struct {
	// Requires are the circuits that must have ended before it is requested; it is requested at
	// the latest of their ends (at 0 for none).
	Requires []int32
	// After, when ≥ 0, is a signal whose command must have ended Gap seconds before this one is
	// requested (a barrier round lasts at least its planned time).
	After int32
	Gap   float64
	// Changes is how many switch changes it carries (0: none; its command then takes no time
	// and the station is not asked).
	Changes int
}

// Program is a compiled schedule: per endpoint, its steps in order.
type Program struct {
	Endpoints [][]Step
	Circuits  int
	Signals   []Signal
	// Batch says that the signals requested at one instant form one command (partial
	// reconfiguration); otherwise each signal is one command, in order (barrier rounds).
	Batch bool
}

// Station times reconfiguration commands (an emulator.Reconfigurer has this method): calls come
// in non-decreasing t, and every command ends at or after it starts, which is at or after t.
type Station interface {
	Command(t float64, changes int) (start, end float64)
}

// Command is one reconfiguration command as a device carried it out.
type Command struct {
	// Signals are the signals it carried, in order of request.
	Signals []int32
	// Requested is the latest request among them; Start and End its span from the station.
	Requested, Start, End float64
}

// Stamps are what a run of a Program recorded, in seconds from its start.
type Stamps struct {
	// Start and End are each circuit's copy span; Target is when its waits ended (the latest end
	// of its After circuits and its signals' commands): Start − Target is the harness's cost.
	Start, End, Target []float64
	// Commands are the station's commands in order of issue; CommandOf maps a signal to its
	// command.
	Commands  []Command
	CommandOf []int32
	// Stalls are the real-time fake device's stalls (nil from a device that does not record
	// them, and in virtual time).
	Stalls *Stalls
}

// Stalls tell a harness cost that is the host's from one that is the executor's logic: the gaps
// longer than Threshold between consecutive clock reads of an executor's spin loop across an
// iteration in which it did nothing but look (no copy started or ended, no command issued, no
// sleep). Such an iteration takes well under a microsecond, so a longer gap is the thread not
// running: the kernel preempted it (on a VM, the hypervisor: steal time).
type Stalls struct {
	ThresholdSeconds float64 `json:"threshold_seconds"`
	Count            int     `json:"count"`
	TotalSeconds     float64 `json:"total_seconds"`
	WorstSeconds     float64 `json:"worst_seconds"`
}

// add counts the gap between two clock reads of an idle iteration, if above the threshold.
func (s *Stalls) add(gap float64) {
	if gap <= s.ThresholdSeconds {
		return
	}
	s.Count++
	s.TotalSeconds += gap
	s.WorstSeconds = max(s.WorstSeconds, gap)
}

// Validate checks that every circuit appears in exactly one step and every reference is in
// range, so that an executor indexes nothing out of bounds.
func (p *Program) Validate() error {
	if p == nil {
		return errors.New("program: nil program")
	}
	seen := make([]bool, p.Circuits)
	n := 0
	for e, steps := range p.Endpoints {
		for i, st := range steps {
			where := fmt.Sprintf("program: endpoint %d, step %d", e, i)
			if st.Circuit < 0 || int(st.Circuit) >= p.Circuits || seen[st.Circuit] {
				return fmt.Errorf("%s: circuit %d is out of range 0..%d or appears twice", where, st.Circuit, p.Circuits-1)
			}
			seen[st.Circuit] = true
			n++
			if st.Dst < 0 || int(st.Dst) >= len(p.Endpoints) || st.Bytes < 0 {
				return fmt.Errorf("%s: copy of %d bytes to endpoint %d (endpoints 0..%d)", where, st.Bytes, st.Dst, len(p.Endpoints)-1)
			}
			if err := inRange(st.After, p.Circuits, where+": after circuit"); err != nil {
				return err
			}
			if err := inRange(st.Signals, len(p.Signals), where+": signal"); err != nil {
				return err
			}
		}
	}
	if n != p.Circuits {
		return fmt.Errorf("program: %d circuits, but the endpoints' steps hold %d", p.Circuits, n)
	}
	for i, s := range p.Signals {
		where := fmt.Sprintf("program: signal %d", i)
		if err := inRange(s.Requires, p.Circuits, where+": requires circuit"); err != nil {
			return err
		}
		if s.After < -1 || int(s.After) >= i || s.Changes < 0 || !(s.Gap >= 0) {
			return fmt.Errorf("%s: after signal %d (must be an earlier one or -1), gap %g s, %d changes", where, s.After, s.Gap, s.Changes)
		}
	}
	return nil
}

func inRange(xs []int32, n int, what string) error {
	for _, x := range xs {
		if x < 0 || int(x) >= n {
			return fmt.Errorf("%s %d is out of range 0..%d", what, x, n-1)
		}
	}
	return nil
}
