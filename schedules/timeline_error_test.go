package schedules

import (
	"strings"
	"testing"
)

// badTimeline is a valid timeline, several lines long, that the cases of timelineErrorCases
// break in one place each (the second switch change, line 7, or the circuit, line 3).
const badTimeline = `{
 "circuits": [
  {"circuit": 0, "ready": 0, "path_ready": 0, "reconfig_start": 0, "transmit_start": 0, "end": 1}
 ],
 "switch_changes": [
  {"stage": 0, "switch": 0, "from": "bar", "to": "cross", "start": 0, "end": 1},
  {"stage": 1, "switch": 0, "from": "bar", "to": "cross", "start": 0, "end": 1}
 ]
}
`

// timelineErrorCases replace old (first occurrence) by new in badTimeline; want is the error
// ReadTimeline returns for "t.json", exactly.
var timelineErrorCases = []struct{ name, old, new, want string }{
	{"state to", `"to": "cross", "start": 0, "end": 1}` + "\n ]", `"to": "diagonal", "start": 0, "end": 1}` + "\n ]",
		`t.json: line 7, column 50: field switch_changes.to: switch state "diagonal" is not "bar" or "cross"`},
	{"state from", `{"stage": 1, "switch": 0, "from": "bar"`, `{"stage": 1, "switch": 0, "from": "sideways"`,
		`t.json: line 7, column 37: field switch_changes.from: switch state "sideways" is not "bar" or "cross"`},
	// Both states refused: the decoder stops at the first in the file, and so does the message.
	{"two states", `"from": "bar", "to": "cross", "start": 0, "end": 1}` + "\n ]", `"from": "up", "to": "down", "start": 0, "end": 1}` + "\n ]",
		`t.json: line 7, column 37: field switch_changes.from: switch state "up" is not "bar" or "cross"`},
	// The same bad state as a "to" on an earlier line than as a "from": the place is the earlier
	// one in the file, whichever field is looked for first.
	{"to before from", `"to": "cross", "start": 0, "end": 1},
  {"stage": 1, "switch": 0, "from": "bar"`, `"to": "up", "start": 0, "end": 1},
  {"stage": 1, "switch": 0, "from": "up"`,
		`t.json: line 6, column 50: field switch_changes.to: switch state "up" is not "bar" or "cross"`},
	{"number state", `"to": "cross", "start": 0, "end": 1}` + "\n ]", `"to": 1, "start": 0, "end": 1}` + "\n ]",
		`t.json: line 7, column 51: field switch_changes.to: value 1 is not a string`},
	{"bool state", `{"stage": 1, "switch": 0, "from": "bar"`, `{"stage": 1, "switch": 0, "from": true`,
		`t.json: line 7, column 41: field switch_changes.from: value true is a JSON bool, want a string`},
	{"string time", `"start": 0, "end": 1}` + "\n ]", `"start": "soon", "end": 1}` + "\n ]",
		`t.json: line 7, column 74: field switch_changes.start: value "soon" is a JSON string, want a number`},
	{"string stage", `"stage": 1,`, `"stage": "1",`,
		`t.json: line 7, column 16: field switch_changes.stage: value "1" is a JSON string, want an integer (int32)`},
	{"float circuit", `"circuit": 0,`, `"circuit": 0.5,`,
		`t.json: line 3, column 18: field circuits.circuit: value 0.5 is not an integer (int)`},
	{"stage out of range", `"stage": 1,`, `"stage": 99999999999,`,
		`t.json: line 7, column 24: field switch_changes.stage: value 99999999999 is out of range for an integer (int32)`},
	{"unknown field", "[\n  {\"circuit\"", "null, \"x\": [\n  {\"circuit\"", `t.json: unknown field "x"`},
}

func TestReadTimelineErrorPlaces(t *testing.T) {
	for _, c := range timelineErrorCases {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(badTimeline, c.old, c.new, 1)
			if in == badTimeline {
				t.Fatalf("the timeline has no %q", c.old)
			}
			_, err := ReadTimeline(strings.NewReader(in), "t.json")
			if err == nil || err.Error() != c.want {
				t.Errorf("ReadTimeline: %v\nwant       %s", err, c.want)
			}
		})
	}
}

// A null where a state, a stage or a whole change is decodes as encoding/json decodes null
// into a value (it leaves the zero: bar, stage 0): these readers accept it, as they did.
func TestReadTimelineNulls(t *testing.T) {
	for _, c := range []struct{ old, new string }{
		{`"to": "cross", "start": 0, "end": 1}` + "\n ]", `"to": null, "start": 0, "end": 1}` + "\n ]"},
		{`"stage": 1,`, `"stage": null,`},
		{`{"stage": 1, "switch": 0, "from": "bar", "to": "cross", "start": 0, "end": 1}`, `null`},
	} {
		in := strings.Replace(badTimeline, c.old, c.new, 1)
		if _, err := ReadTimeline(strings.NewReader(in), "t.json"); err != nil || in == badTimeline {
			t.Errorf("%s: %v", c.new, err)
		}
	}
}
