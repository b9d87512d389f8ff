package schedules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tetris-hil/tetris-hil/internal/jsonerr"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

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
//
// Stage and Switch are int32 (a Beneš fabric has at most 39 stages of 2^19 switches) so that a
// change takes 32 bytes, not 40: a Birkhoff–von Neumann schedule on a dense 256-port demand
// makes tens of millions of them.
type SwitchChange struct {
	Stage  int32       `json:"stage"`
	Switch int32       `json:"switch"`
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

// ReadTimeline decodes a bare timeline strictly: no unknown fields (a misspelt field is an
// error, not a missing value), switch states "bar" or "cross", nothing after the object, and
// every time finite, non-negative and within MaxSeconds. name is used in errors, which are one
// line naming the line, the field and the value. Whether the timeline fits a schedule is
// VerifyTimeline's to say.
func ReadTimeline(r io.Reader, name string) (*Timeline, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var tl Timeline
	if err := dec.Decode(&tl); err != nil {
		return nil, fmt.Errorf("%s: %w", name, describeTimeline(data, err))
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		line, col := jsonerr.Position(data, end+int64(len(data[end:])-len(bytes.TrimLeft(data[end:], " \t\r\n"))))
		return nil, fmt.Errorf("%s: line %d, column %d: trailing data after the timeline object", name, line, col)
	}
	if err := tl.checkTimes(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &tl, nil
}

// describeTimeline is jsonerr.Describe for a timeline file, with a switch state that is not "bar"
// or "cross" placed at its line and column under its field (switch_changes.to): benes.State
// decodes its own bytes, and encoding/json adds no position to the error of a value that
// decodes itself.
func describeTimeline(data []byte, err error) error {
	return jsonerr.Describe(data, PlaceSwitchStates(data, err))
}

// PlaceSwitchStates is jsonerr.Place for the switch states of a timeline (switch_changes.from and
// .to) under prefix, the keys from the top of the file to the timeline ("timeline" in a run
// record): a state that is neither "bar" nor "cross" comes back with its line, column and field,
// any other error as it is. It is needed because benes.State decodes its own bytes and
// encoding/json adds no position to the error of a value that decodes itself.
func PlaceSwitchStates(data []byte, err error, prefix ...string) error {
	var ps [][]string
	for _, key := range []string{"from", "to"} {
		ps = append(ps, append(append([]string(nil), prefix...), "switch_changes", "[]", key))
	}
	return jsonerr.Place(data, err, ps, checkState)
}

// checkState refuses a JSON string that is not a switch state, with benes.State's own error.
// Anything else passes: encoding/json reports a number or a bool where a state is with its
// position, and only a string reaches State.UnmarshalText.
func checkState(raw []byte) error {
	if len(raw) == 0 || raw[0] != '"' {
		return nil
	}
	var s benes.State
	return json.Unmarshal(raw, &s)
}

// checkTimes holds every time of the timeline to CheckSeconds.
func (tl *Timeline) checkTimes() error {
	for i, c := range tl.Circuits {
		for _, f := range []struct {
			name string
			v    float64
		}{{"ready", c.Ready}, {"path_ready", c.PathReady}, {"reconfig_start", c.ReconfigStart}, {"transmit_start", c.TransmitStart}, {"end", c.End}} {
			if !validSeconds(f.v) {
				return CheckSeconds(fmt.Sprintf("field circuits[%d].%s", i, f.name), f.v)
			}
		}
	}
	for i, ch := range tl.SwitchChanges {
		if !validSeconds(ch.Start) {
			return CheckSeconds(fmt.Sprintf("field switch_changes[%d].start", i), ch.Start)
		}
		if !validSeconds(ch.End) {
			return CheckSeconds(fmt.Sprintf("field switch_changes[%d].end", i), ch.End)
		}
	}
	return nil
}
