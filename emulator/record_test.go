package emulator_test

import (
	"context"
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

func exampleRecord(t *testing.T) *emulator.RunRecord {
	t.Helper()
	f, _ := benes.New(2)
	s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "hand", N: 2, Ports: 2,
		Fabric: schedules.Benes, Mode: schedules.Partial,
		Circuits: []schedules.Circuit{{Src: 0, Dst: 1, Bytes: 1e6, Path: f.PathFrom(0, 1, 0)}}}
	cfg := emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ParallelReconfig(1e-6)}
	res, tl, err := emulator.Run(context.Background(), s, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &emulator.RunRecord{Version: emulator.RunRecordVersion, Source: emulator.SourceEmulator,
		Tool: provenance.Tool(), Inputs: []provenance.Input{provenance.Builtin("demand", "built-in trace")},
		Algorithm: s.Algorithm, Matrix: emulator.MatrixRef{Index: 2, Layer: 1, Phase: "dispatch", Label: "m2"},
		TransferModel: cfg.Transfer.Name(), ReconfigModel: cfg.Reconfig.Name(), Result: res, Timeline: tl}
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
		{"version", `{"version": 3, "algorithm": "a", "matrix": {"index": 0, "layer": 0}, "result": null, "timeline": {}}`, "field version: 3"},
		{"source", `{"version": 2, "source": "dream", "algorithm": "a", "matrix": {"index": 0, "layer": 0}, "timeline": {}}`, `field source: "dream"`},
		{"unknown", `{"version": 2, "algo": "a", "timeline": {}}`, `unknown field "algo"`},
		{"no timeline", `{"version": 1, "algorithm": "a"}`, "field timeline: missing"},
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
