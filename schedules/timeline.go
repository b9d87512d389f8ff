package schedules

import "github.com/tetris-hil/tetris-hil/schedules/benes"

// CircuitTiming is what happened to one circuit of a schedule during an execution (emulated or
// live). Times are seconds from the start of the run.
type CircuitTiming struct {
	// Circuit is the index of the circuit in Schedule.Circuits.
	Circuit int `json:"circuit"`
	// Ready is when its transmitter and receiver were both free.
	Ready float64 `json:"ready"`
	// PathReady is when every lane and switch state on its path was ready (≥ Ready); the gap is
	// time lost to RNB conflicts.
	PathReady float64 `json:"path_ready"`
	// ReconfigStart is when the last switch reconfiguration it waited for began (equal to
	// TransmitStart when it needed none).
	ReconfigStart float64 `json:"reconfig_start"`
	TransmitStart float64 `json:"transmit_start"`
	End           float64 `json:"end"`
}

// SwitchChange is one reconfiguration of one 2×2 switch: it is in transition during [Start, End)
// and in state To from End on. Every switch is in Bar at t = 0.
type SwitchChange struct {
	Stage  int         `json:"stage"`
	Switch int         `json:"switch"`
	From   benes.State `json:"from"`
	To     benes.State `json:"to"`
	Start  float64     `json:"start"`
	End    float64     `json:"end"`
}

// Timeline is the record of one execution of a schedule.
type Timeline struct {
	Circuits      []CircuitTiming `json:"circuits"`
	SwitchChanges []SwitchChange  `json:"switch_changes"`
}

// Completion is the time the last circuit ended.
func (t *Timeline) Completion() float64 {
	c := 0.0
	for _, ct := range t.Circuits {
		c = max(c, ct.End)
	}
	return c
}
