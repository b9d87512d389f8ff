package emulator_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

func exampleRecord(t testing.TB) *emulator.RunRecord {
	t.Helper()
	f, _ := benes.New(2)
	s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "hand", N: 2, Ports: 2,
		Fabric: schedules.Benes, Mode: schedules.Partial,
		Circuits: []schedules.Circuit{{Src: 0, Dst: 1, Bytes: 1e6, Path: f.NewPath(0, 1, 0)}}}
	cfg := emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ParallelReconfig(1e-6)}
	res, tl, err := emulator.Run(context.Background(), s, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	per, err := emulator.SwitchChanges(s, false)
	if err != nil {
		t.Fatal(err)
	}
	return &emulator.RunRecord{Version: emulator.RunRecordVersion, Source: emulator.SourceEmulator,
		Tool: provenance.Tool(), Inputs: []provenance.Input{provenance.Builtin("demand", "built-in trace")},
		Algorithm: s.Algorithm, Matrix: emulator.MatrixRef{Index: 2, Layer: 1, Phase: "dispatch", Label: "m2"},
		TransferModel: cfg.Transfer.Name(), ReconfigModel: cfg.Reconfig.Name(), Result: res,
		StateChangesMax: 1, StateChangesPerSwitch: per, Timeline: tl}
}

func TestRunRecordRoundTrip(t *testing.T) {
	rec := exampleRecord(t)
	path := filepath.Join(t.TempDir(), "r.timeline.json")
	if err := rec.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := emulator.LoadRunRecord(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Errorf("read back %+v, wrote %+v", got, rec)
	}
	tl, err := emulator.LoadTimeline(path)
	if err != nil || !reflect.DeepEqual(tl, rec.Timeline) {
		t.Errorf("LoadTimeline: %v, %+v", err, tl)
	}
}

func TestReadRunRecordErrors(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"version", `{"version": 3, "algorithm": "a", "matrix": {"index": 0, "layer": 0}, "result": null, "timeline": {}}`, "field version = 3: not supported"},
		// A newer version is reported as such, not by the first field this build does not know.
		{"version 99", `{"version": 99, "future": 1, "timeline": {}}`, "field version = 99: not supported (this build reads versions 1..2)"},
		{"version string", `{"version": "2", "timeline": {}}`, `field version = "2": not supported`},
		{"source", `{"version": 2, "source": "dream", "algorithm": "a", "matrix": {"index": 0, "layer": 0}, "timeline": {}}`, `field source: "dream"`},
		{"unknown", `{"version": 2, "algo": "a", "timeline": {}}`, `field algo: unknown field`},
		{"unknown nested", `{"version": 2, "timeline": {"circuits": [{"circuit": 0}, {"circuit": 1, "begin": 0}]}}`, `field timeline.circuits[1].begin: unknown field`},
		{"state", `{"version": 2, "timeline": {"switch_changes": [{"stage": 0, "switch": 0, "from": "bar", "to": "diagonal"}]}}`,
			`line 1, column 95: field timeline.switch_changes.to: switch state "diagonal" is not "bar" or "cross"`},
		{"type", `{"version": 2, "timeline": {"circuits": [{"circuit": 0, "end": "soon"}]}}`, `line 1, column 70: field timeline.circuits.end: value "soon" is a JSON string, want a number`},
		{"matrix type", `{"version": 2, "matrix": {"index": 1.5}, "timeline": {}}`, `line 1, column 39: field matrix.index: value 1.5 is not an integer (int)`},
		{"trailing", "{\"version\": 2, \"timeline\": {}}\n]]]", "line 2: data after the JSON value"},
		{"syntax", "{\"version\": 2,\n \"timeline\": {,}}", "line 2: invalid character ','"},
		{"no timeline", `{"version": 1, "algorithm": "a"}`, "field timeline: missing"},
		{"time limit", `{"version": 2, "timeline": {"circuits": [{"circuit": 0, "end": 1e308}]}}`, "field timeline.circuits[0].end = 1e+308 s is above the limit of 1e+06 s"},
		{"count sum", `{"version": 2, "result": {"state_changes": 3}, "state_changes_max": 2, "state_changes_per_switch": [[0, 0, 2], [1, 0, 2]], "timeline": {}}`, "the switches' changes sum to 4, the result's state_changes is 3"},
		{"count max", `{"version": 2, "state_changes_max": 1, "state_changes_per_switch": [[0, 0, 2]], "timeline": {}}`, "field state_changes_max: 1, but the most-changed switch"},
		{"count order", `{"version": 2, "state_changes_max": 1, "state_changes_per_switch": [[1, 0, 1], [0, 3, 1]], "timeline": {}}`, "field state_changes_per_switch[1]: switch 0:3 after 1:0"},
		{"count zero", `{"version": 2, "state_changes_per_switch": [[0, 0, 0]], "timeline": {}}`, "field state_changes_per_switch[0]: [0, 0, 0] is not a switch that changed"},
		{"negative time", `{"version": 2, "timeline": {"switch_changes": [{"stage": 0, "switch": 0, "from": "bar", "to": "cross", "start": -1}]}}`, "field timeline.switch_changes[0].start = -1 s is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := emulator.ReadRunRecord(strings.NewReader(tc.json), "r.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "r.json: ") {
				t.Errorf("error %v, want one naming r.json and containing %q", err, tc.want)
			}
		})
	}
}

// Version 1 records (emulate --timeline before records carried provenance) and bare timelines
// still read.
func TestLoadTimelineOlderForms(t *testing.T) {
	dir := t.TempDir()
	v1 := `{"version": 1, "algorithm": "a", "matrix": {"index": -1, "layer": -1}, "result": null,
	  "timeline": {"circuits": [{"circuit": 0, "ready": 0, "path_ready": 0, "reconfig_start": 0, "transmit_start": 0, "end": 1}], "switch_changes": []}}`
	bare := `{"circuits": [{"circuit": 0, "ready": 0, "path_ready": 0, "reconfig_start": 0, "transmit_start": 0, "end": 1}], "switch_changes": []}`
	for name, body := range map[string]string{"v1.json": v1, "bare.json": bare} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		tl, err := emulator.LoadTimeline(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(tl.Circuits) != 1 || tl.Circuits[0].End != 1 {
			t.Errorf("%s: timeline %+v, want one circuit ending at 1", name, tl)
		}
	}
}

// CheckSchedule tells a record of another schedule from the run of this one: by the digest
// written beside the record, or by the SHA-256 of an older record's schedule input.
func TestCheckSchedule(t *testing.T) {
	rec := exampleRecord(t)
	dir := t.TempDir()
	s, err := schedules.LoadSchedule(writeTempSchedule(t, dir, rec))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := emulator.ScheduleDigest(s)
	if err != nil {
		t.Fatal(err)
	}
	rec.ScheduleFile, rec.ScheduleSHA256 = "m2-a.schedule.json", sum
	recPath := filepath.Join(dir, "m2-a.timeline.json")
	if err := rec.CheckSchedule(recPath, s, "any.json"); err != nil {
		t.Errorf("the record's own schedule: %v", err)
	}
	other := *s
	other.Circuits = other.Circuits[1:]
	err = rec.CheckSchedule(recPath, &other, "other.json")
	for _, want := range []string{"belongs to another schedule", filepath.Join(dir, "m2-a.schedule.json"), "on matrix 2", sum[:12], "not of other.json"} {
		if !errors.Is(err, emulator.ErrOtherSchedule) || !strings.Contains(err.Error(), want) {
			t.Errorf("another schedule: %v, want ErrOtherSchedule containing %q", err, want)
		}
	}
	// An older record: only the schedule input's file hash.
	rec.ScheduleFile, rec.ScheduleSHA256 = "", ""
	in, err := provenance.File("schedule", filepath.Join(dir, "s.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec.Inputs = []provenance.Input{in}
	if err := rec.CheckSchedule(recPath, s, in.Path); err != nil {
		t.Errorf("older record, its schedule: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rec.CheckSchedule(recPath, s, filepath.Join(dir, "t.json")); !errors.Is(err, emulator.ErrOtherSchedule) {
		t.Errorf("older record, another file: %v", err)
	}
	rec.Inputs = nil
	if err := rec.CheckSchedule(recPath, s, "x.json"); err != nil {
		t.Errorf("a record naming no schedule: %v", err)
	}
}

func writeTempSchedule(t *testing.T, dir string, rec *emulator.RunRecord) string {
	t.Helper()
	f, _ := benes.New(2)
	s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: rec.Algorithm, N: 2, Ports: 2,
		Fabric: schedules.Benes, Mode: schedules.Partial,
		Circuits: []schedules.Circuit{{Src: 0, Dst: 1, Bytes: 1e6, Path: f.NewPath(0, 1, 0)}}}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "s.json")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A run record's timeline is read as a bare one is: its errors name the line and column in the
// record, the field under "timeline" and the value.
func TestReadRunRecordErrorPlaces(t *testing.T) {
	const record = `{
 "version": 2,
 "algorithm": "a",
 "timeline": {
  "circuits": [
   {"circuit": 0, "ready": 0, "path_ready": 0, "reconfig_start": 0, "transmit_start": 0, "end": 1}
  ],
  "switch_changes": [
   {"stage": 0, "switch": 0, "from": "bar", "to": "cross", "start": 0, "end": 1},
   {"stage": 1, "switch": 0, "from": "bar", "to": "cross", "start": 0, "end": 1}
  ]
 }
}
`
	for _, c := range []struct{ name, old, new, want string }{
		{"state to", `"to": "cross", "start": 0, "end": 1}` + "\n  ]", `"to": "diagonal", "start": 0, "end": 1}` + "\n  ]",
			`r.json: line 10, column 51: field timeline.switch_changes.to: switch state "diagonal" is not "bar" or "cross"`},
		{"state from", `{"stage": 1, "switch": 0, "from": "bar"`, `{"stage": 1, "switch": 0, "from": "sideways"`,
			`r.json: line 10, column 38: field timeline.switch_changes.from: switch state "sideways" is not "bar" or "cross"`},
		{"to before from", `"to": "cross", "start": 0, "end": 1},
   {"stage": 1, "switch": 0, "from": "bar"`, `"to": "up", "start": 0, "end": 1},
   {"stage": 1, "switch": 0, "from": "up"`,
			`r.json: line 9, column 51: field timeline.switch_changes.to: switch state "up" is not "bar" or "cross"`},
		{"number state", `"to": "cross", "start": 0, "end": 1}` + "\n  ]", `"to": 1, "start": 0, "end": 1}` + "\n  ]",
			`r.json: line 10, column 52: field timeline.switch_changes.to: value 1 is not a string`},
		{"string time", `"start": 0, "end": 1}` + "\n  ]", `"start": "soon", "end": 1}` + "\n  ]",
			`r.json: line 10, column 75: field timeline.switch_changes.start: value "soon" is a JSON string, want a number`},
		{"string stage", `"stage": 1,`, `"stage": "1",`,
			`r.json: line 10, column 17: field timeline.switch_changes.stage: value "1" is a JSON string, want an integer (int32)`},
		{"float circuit", `"circuit": 0,`, `"circuit": 0.5,`,
			`r.json: line 6, column 19: field timeline.circuits.circuit: value 0.5 is not an integer (int)`},
		{"stage out of range", `"stage": 1,`, `"stage": 99999999999,`,
			`r.json: line 10, column 25: field timeline.switch_changes.stage: value 99999999999 is out of range for an integer (int32)`},
		{"string algorithm", `"algorithm": "a"`, `"algorithm": 7`,
			`r.json: line 3, column 16: field algorithm: value 7 is not a string`},
		// Unchanged: an unknown field keeps its indexed path, which encoding/json does not give.
		{"unknown field", `{"circuit": 0,`, `{"circuit": 0, "colour": "red",`,
			`r.json: field timeline.circuits[0].colour: unknown field`},
		// Unchanged: a file that is not an object at all.
		{"not an object", record, `[1]`,
			`r.json: json: cannot unmarshal array into Go value of type emulator.RunRecord`},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(record, c.old, c.new, 1)
			if in == record {
				t.Fatalf("the record has no %q", c.old)
			}
			_, err := emulator.ReadRunRecord(strings.NewReader(in), "r.json")
			if err == nil || err.Error() != c.want {
				t.Errorf("ReadRunRecord: %v\nwant          %s", err, c.want)
			}
		})
	}
}
