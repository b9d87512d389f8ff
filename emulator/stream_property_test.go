package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// The streamed run record (RunRecord.Write, WriteJSON) and Chrome trace (WriteChromeTrace) are
// held to the implementations they replaced (record_oracle_test.go, trace_oracle_test.go): the
// same bytes for every input, and the same error, with nothing written, for every input those
// refused.

// streamFloat draws the floats whose JSON form has caught encoders out: exponent boundaries
// (1e-6, 1e21), shortest round trips (0.1+0.2), subnormals, negative zero, extremes (which
// overflow to infinity in microseconds), any finite bit pattern and, when bad, now and then a NaN
// or an infinity.
func streamFloat(bad bool) *rapid.Generator[float64] {
	tenth, fifth := 0.1, 0.2 // added at run time: as constants they sum to exactly 0.3
	specials := []float64{0, math.Copysign(0, -1), 1, -1, 1e-7, 1e-6, 9.999999e-7, 1.0000001e-6, tenth + fifth, 1e20,
		1e21, 9.99999e20, 1e-300, 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, 1e15, 1e16, 1e-12,
		100e9, 10e-6, 1e-9, 12345678.9, 1 << 53, 1<<53 + 2, 2.5e-8, -3.75e22}
	gens := []*rapid.Generator[float64]{
		rapid.SampledFrom(specials),
		rapid.Float64Range(0, 1),
		rapid.Map(rapid.Float64Range(0, 1), func(f float64) float64 { return f * 1e-3 }),
		rapid.Map(rapid.Uint64(), math.Float64frombits).Filter(func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }),
	}
	if !bad {
		return rapid.OneOf(gens...)
	}
	nonFinite := rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1)})
	return rapid.Custom(func(t *rapid.T) float64 {
		if rapid.IntRange(0, 40).Draw(t, "non-finite?") == 0 {
			return nonFinite.Draw(t, "non-finite")
		}
		return rapid.OneOf(gens...).Draw(t, "float")
	})
}

// streamString draws strings with what encoding/json escapes: quotes, backslashes, control
// characters, HTML's <, > and &, U+2028, and invalid UTF-8.
func streamString() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"", "tetris", "bvn-maxmin", "a\"b\\c", "<&>", "\u2028\u2029", "\x00\x1f\t\n", "\xff\xfe", "émigré", "Δ→∞"}),
		rapid.String(),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	)
}

// streamState draws a switch state: Bar or Cross, or when bad now and then an invalid one.
func streamState(t *rapid.T, bad bool, label string) benes.State {
	if bad && rapid.IntRange(0, 40).Draw(t, label+" invalid?") == 0 {
		return benes.State(rapid.IntRange(2, 255).Draw(t, label+" invalid"))
	}
	return rapid.SampledFrom([]benes.State{benes.Bar, benes.Cross}).Draw(t, label)
}

// sliceCase draws whether a slice is nil (0), empty (1) or has elements (2).
func sliceCase(t *rapid.T, label string) int { return rapid.IntRange(0, 2).Draw(t, label) }

// streamTimeline draws a timeline of arbitrary values: nil and empty lists, any times, switches
// of either fabric's numbering (crossbar: stage −1) and far-flung ids.
func streamTimeline(t *rapid.T, circuits int, bad bool) *schedules.Timeline {
	f := streamFloat(bad)
	tl := &schedules.Timeline{}
	switch sliceCase(t, "circuits") {
	case 1:
		tl.Circuits = []schedules.CircuitTiming{}
	case 2:
		if circuits < 0 {
			circuits = rapid.IntRange(1, 30).Draw(t, "circuit count")
		}
		for i := range circuits {
			ct := schedules.CircuitTiming{Circuit: i, Ready: f.Draw(t, "ready"), PathReady: f.Draw(t, "path ready"),
				ReconfigStart: f.Draw(t, "reconfig start"), TransmitStart: f.Draw(t, "transmit start"), End: f.Draw(t, "end")}
			if rapid.IntRange(0, 4).Draw(t, "ordered?") > 0 {
				// Mostly the order of a real run: ready ≤ path ready ≤ reconfig ≤ transmit ≤ end.
				base := rapid.Float64Range(0, 1e-3).Draw(t, "base")
				ct.Ready, ct.PathReady = base, base+rapid.Float64Range(0, 1e-6).Draw(t, "rnb")
				ct.ReconfigStart = ct.PathReady + rapid.Float64Range(0, 1e-6).Draw(t, "gap")
				ct.TransmitStart = ct.ReconfigStart + rapid.SampledFrom([]float64{0, 1e-5, 1e-8}).Draw(t, "reconfig")
				ct.End = ct.TransmitStart + rapid.Float64Range(0, 1e-4).Draw(t, "transmit")
			}
			if rapid.IntRange(0, 20).Draw(t, "foreign index?") == 0 {
				ct.Circuit = rapid.IntRange(-3, circuits+3).Draw(t, "foreign index")
			}
			tl.Circuits = append(tl.Circuits, ct)
		}
		if len(tl.Circuits) > 1 && rapid.Bool().Draw(t, "permute") {
			perm := rapid.Permutation(tl.Circuits).Draw(t, "order")
			tl.Circuits = perm
		}
	default:
		if circuits > 0 {
			tl.Circuits = make([]schedules.CircuitTiming, circuits)
		}
	}
	switch sliceCase(t, "switch changes") {
	case 1:
		tl.SwitchChanges = []schedules.SwitchChange{}
	case 2:
		wide := rapid.IntRange(0, 5).Draw(t, "wide ids?") == 0
		for range rapid.IntRange(1, 60).Draw(t, "change count") {
			sc := schedules.SwitchChange{Stage: int32(rapid.IntRange(-1, 7).Draw(t, "stage")),
				Switch: int32(rapid.IntRange(0, 9).Draw(t, "switch")),
				From:   streamState(t, bad, "from"), To: streamState(t, bad, "to"),
				Start: f.Draw(t, "start"), End: f.Draw(t, "end")}
			if wide {
				sc.Stage, sc.Switch = rapid.Int32().Draw(t, "wide stage"), rapid.Int32().Draw(t, "wide switch")
			}
			if rapid.IntRange(0, 3).Draw(t, "ordered?") > 0 {
				sc.Start = rapid.Float64Range(0, 1e-3).Draw(t, "change start")
				sc.End = sc.Start + rapid.SampledFrom([]float64{0, 1e-5, 1e-6}).Draw(t, "change length")
			}
			tl.SwitchChanges = append(tl.SwitchChanges, sc)
		}
	}
	return tl
}

// streamRecord draws a run record of arbitrary values, timeline included unless it draws none.
func streamRecord(t *rapid.T, bad bool) *RunRecord {
	str, f := streamString(), streamFloat(bad)
	r := &RunRecord{Version: rapid.IntRange(-1, 3).Draw(t, "version"), Source: str.Draw(t, "source"),
		Tool: str.Draw(t, "tool"), Algorithm: str.Draw(t, "algorithm"),
		Matrix: MatrixRef{Index: rapid.Int().Draw(t, "index"), Layer: rapid.IntRange(-1, 60).Draw(t, "layer"),
			Phase: str.Draw(t, "phase"), Dataset: str.Draw(t, "dataset"), Label: str.Draw(t, "label")},
		TransferModel: str.Draw(t, "transfer"), ReconfigModel: str.Draw(t, "reconfig"),
		ScheduleFile: str.Draw(t, "schedule file"), ScheduleSHA256: str.Draw(t, "schedule sha")}
	switch sliceCase(t, "inputs") {
	case 1:
		r.Inputs = []provenance.Input{}
	case 2:
		for range rapid.IntRange(1, 3).Draw(t, "input count") {
			r.Inputs = append(r.Inputs, provenance.Input{Role: str.Draw(t, "role"), Path: str.Draw(t, "path"), SHA256: str.Draw(t, "sha")})
		}
	}
	if rapid.IntRange(0, 5).Draw(t, "result?") > 0 {
		res := &Result{Algorithm: str.Draw(t, "result algorithm"), Transfer: str.Draw(t, "result transfer"),
			Reconfig: str.Draw(t, "result reconfig"), Completion: f.Draw(t, "completion"),
			Bounds:         schedules.Bounds{Bandwidth: f.Draw(t, "bound bw"), Reconfig: f.Draw(t, "bound rc")},
			BoundBandwidth: f.Draw(t, "b"), BoundReconfig: f.Draw(t, "alpha"),
			RatioBandwidth: f.Draw(t, "ratio bw"), RatioReconfig: f.Draw(t, "ratio rc"),
			Groups: rapid.Int().Draw(t, "groups"), Circuits: rapid.Int().Draw(t, "result circuits"),
			StateChanges: rapid.Int().Draw(t, "state changes"), ReconfigEvents: rapid.Int().Draw(t, "events"),
			RNBWait: f.Draw(t, "rnb"), Events: rapid.Int().Draw(t, "event count")}
		switch sliceCase(t, "endpoints") {
		case 1:
			res.Endpoints = []EndpointTime{}
		case 2:
			for range rapid.IntRange(1, 6).Draw(t, "endpoint count") {
				res.Endpoints = append(res.Endpoints, EndpointTime{Port: rapid.IntRange(-1, 600).Draw(t, "port"),
					Rx: rapid.Bool().Draw(t, "rx"), Busy: f.Draw(t, "busy"), Reconfiguring: f.Draw(t, "reconfiguring"),
					Idle: f.Draw(t, "idle")})
			}
		}
		switch sliceCase(t, "notes") {
		case 1:
			res.Notes = []string{}
		case 2:
			res.Notes = rapid.SliceOfN(str, 1, 4).Draw(t, "note list")
		}
		r.Result = res
	}
	if rapid.IntRange(0, 5).Draw(t, "timeline?") > 0 {
		r.Timeline = streamTimeline(t, -1, bad)
	}
	return r
}

// firstDiff describes where got and want part.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-60)
	return fmt.Sprintf("at byte %d of %d (want %d):\ngot  …%q\nwant …%q", i, len(got), len(want),
		got[from:min(len(got), i+60)], want[from:min(len(want), i+60)])
}

// sameOutcome fails t unless the two writes (bytes written, error) agree: the same bytes, or the
// same error with nothing written by either.
func sameOutcome(t *rapid.T, what string, got []byte, gotErr error, want []byte, wantErr error) {
	t.Helper()
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("%s: error %v, the old writer's %v", what, gotErr, wantErr)
	}
	if gotErr != nil {
		if len(got) != 0 || len(want) != 0 {
			t.Fatalf("%s: refused with %v after writing %d bytes (old: %d)", what, gotErr, len(got), len(want))
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the old writer's %s", what, firstDiff(got, want))
	}
}

// readIfThere is the file at path, nil if there is none.
func readIfThere(t *rapid.T, path string) []byte {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordCase writes r with Write and WriteJSON and with the old Write, and compares.
func recordCase(t *rapid.T, dir string, r *RunRecord) error {
	// One path for both, since errors name it.
	path := filepath.Join(dir, "r.timeline.json")
	os.Remove(path)
	wantErr := r.oracleWrite(path)
	want := readIfThere(t, path)
	os.Remove(path)
	gotErr := r.Write(path)
	sameOutcome(t, "Write", readIfThere(t, path), gotErr, want, wantErr)
	var buf bytes.Buffer
	err := r.WriteJSON(&buf)
	marshalled, marshalErr := json.MarshalIndent(r, "", " ")
	if marshalErr == nil {
		marshalled = append(marshalled, '\n')
	} else {
		marshalled = nil
	}
	sameOutcome(t, "WriteJSON", buf.Bytes(), err, marshalled, marshalErr)
	return gotErr
}

// TestPropertyRunRecordMatchesMarshalIndent: for every record, Write writes the file the old
// Write wrote and WriteJSON the bytes of MarshalIndent and a newline; every record the old
// writer refused (a NaN or infinity in the result or the timeline, an invalid switch state) is
// refused with the same error and nothing written.
func TestPropertyRunRecordMatchesMarshalIndent(t *testing.T) {
	for _, bad := range []bool{false, true} {
		t.Run(fmt.Sprintf("non-finite=%v", bad), func(t *testing.T) {
			dir := t.TempDir()
			refused := 0
			rapid.Check(t, func(t *rapid.T) {
				if err := recordCase(t, dir, streamRecord(t, bad)); err != nil {
					if !bad {
						t.Fatalf("a record of finite values was refused: %v", err)
					}
					refused++
				}
			})
			if bad && refused == 0 {
				t.Errorf("no record was refused: the error path went untested")
			}
		})
	}
}

// TestPropertyRunRecordOfRuns: the records of real emulated runs, on both fabrics, in both modes
// and under both reconfiguration models.
func TestPropertyRunRecordOfRuns(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]schedules.Mode{schedules.Partial, schedules.Barrier}).Draw(t, "mode")
		s := genSchedule(t, mode)
		rc := ParallelReconfig(rapid.SampledFrom([]float64{0, 1e-9, 1e-6}).Draw(t, "alpha"))
		if rapid.Bool().Draw(t, "controller") {
			rc = ControllerReconfig(1e-6, 1e-5)
		}
		res, tl, err := Run(context.Background(), s, nil, Config{Transfer: BandwidthModel(1e11), Reconfig: rc})
		if err != nil {
			t.Fatal(err)
		}
		r := &RunRecord{Version: RunRecordVersion, Source: SourceEmulator, Algorithm: s.Algorithm,
			Matrix: MatrixRef{Index: -1, Layer: -1}, TransferModel: "bandwidth", ReconfigModel: rc.Name(), Result: res, Timeline: tl}
		if err := recordCase(t, dir, r); err != nil {
			t.Fatal(err)
		}
		var got, want bytes.Buffer
		gotErr, wantErr := WriteChromeTrace(&got, s, tl), oracleWriteChromeTrace(&want, s, tl)
		sameOutcome(t, "WriteChromeTrace", got.Bytes(), gotErr, want.Bytes(), wantErr)
	})
}

// streamTraceSchedule draws a schedule for a trace: any n, ports and sizes (the trace does not
// validate the schedule).
func streamTraceSchedule(t *rapid.T) *schedules.Schedule {
	s := &schedules.Schedule{N: rapid.SampledFrom([]int{0, 1, 2, 3, 8, 16, 1 << 20}).Draw(t, "n"),
		Fabric: rapid.SampledFrom([]schedules.FabricKind{schedules.Benes, schedules.Crossbar}).Draw(t, "fabric")}
	switch sliceCase(t, "circuits") {
	case 1:
		s.Circuits = []schedules.Circuit{}
	case 2:
		for range rapid.IntRange(1, 30).Draw(t, "count") {
			s.Circuits = append(s.Circuits, schedules.Circuit{Src: rapid.IntRange(-2, 40).Draw(t, "src"),
				Dst: rapid.IntRange(-2, 40).Draw(t, "dst"), Bytes: rapid.Int64().Draw(t, "bytes"), Group: rapid.Int().Draw(t, "group")})
		}
	}
	return s
}

// TestPropertyChromeTraceMatchesOld: for every schedule and timeline, WriteChromeTrace writes the
// bytes the old writer did, and refuses what it refused (a timeline of another length, a foreign
// circuit index, a time that is not finite or not finite in microseconds) with the same error,
// writing nothing.
func TestPropertyChromeTraceMatchesOld(t *testing.T) {
	for _, bad := range []bool{false, true} {
		t.Run(fmt.Sprintf("non-finite=%v", bad), func(t *testing.T) {
			refused, written := 0, 0
			rapid.Check(t, func(t *rapid.T) {
				s := streamTraceSchedule(t)
				n := len(s.Circuits)
				if rapid.IntRange(0, 30).Draw(t, "other length?") == 0 {
					n = rapid.IntRange(0, 5).Draw(t, "other length")
				}
				tl := streamTimeline(t, n, bad)
				var got, want bytes.Buffer
				err, wantErr := WriteChromeTrace(&got, s, tl), oracleWriteChromeTrace(&want, s, tl)
				sameOutcome(t, "WriteChromeTrace", got.Bytes(), err, want.Bytes(), wantErr)
				if err != nil {
					refused++
				} else {
					written++
				}
			})
			t.Logf("%d traces refused, %d written", refused, written)
			if refused == 0 || written == 0 {
				t.Errorf("%d traces refused, %d written: a path went untested", refused, written)
			}
		})
	}
}

// TestRunRecordRefusedBeforeOpening: a record that cannot be encoded is refused before its path
// is opened (the path's directory does not exist, so opening it would be a different error),
// with the error type encoding/json gives; a nil record is written as null, as before.
func TestRunRecordRefusedBeforeOpening(t *testing.T) {
	okTimeline := func() *schedules.Timeline {
		return &schedules.Timeline{Circuits: []schedules.CircuitTiming{{End: 1e-6}},
			SwitchChanges: []schedules.SwitchChange{{From: benes.Bar, To: benes.Cross, End: 1e-6}}}
	}
	var unsupported *json.UnsupportedValueError
	var marshaler *json.MarshalerError
	tests := []struct {
		name   string
		record func() *RunRecord
		as     any // the error type, nil for a record that is written
	}{
		{"NaN in the result", func() *RunRecord {
			return &RunRecord{Result: &Result{Completion: math.NaN()}, Timeline: okTimeline()}
		}, &unsupported},
		{"infinite circuit end", func() *RunRecord {
			tl := okTimeline()
			tl.Circuits[0].End = math.Inf(1)
			return &RunRecord{Timeline: tl}
		}, &unsupported},
		{"negative infinite change start", func() *RunRecord {
			tl := okTimeline()
			tl.SwitchChanges[0].Start = math.Inf(-1)
			return &RunRecord{Timeline: tl}
		}, &unsupported},
		{"invalid switch state", func() *RunRecord {
			tl := okTimeline()
			tl.SwitchChanges[0].To = benes.State(9)
			return &RunRecord{Timeline: tl}
		}, &marshaler},
		{"nil record", func() *RunRecord { return nil }, nil},
		{"empty record", func() *RunRecord { return &RunRecord{} }, nil},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.record()
			missing := filepath.Join(dir, "missing", "r.timeline.json")
			err, wantErr := r.Write(missing), r.oracleWrite(missing)
			var buf bytes.Buffer
			jsonErr := r.WriteJSON(&buf)
			if tt.as == nil {
				want, _ := json.MarshalIndent(r, "", " ")
				if jsonErr != nil || !bytes.Equal(buf.Bytes(), append(want, '\n')) {
					t.Errorf("WriteJSON: %v, %q; want %q", jsonErr, buf.Bytes(), want)
				}
				return
			}
			if err == nil || wantErr == nil || err.Error() != wantErr.Error() {
				t.Errorf("Write: %v; the old Write: %v", err, wantErr)
			}
			if !errors.As(err, tt.as) || !errors.As(jsonErr, tt.as) {
				t.Errorf("Write: %v, WriteJSON: %v; want both a %T", err, jsonErr, tt.as)
			}
			if buf.Len() != 0 {
				t.Errorf("WriteJSON wrote %d bytes before refusing", buf.Len())
			}
		})
	}
}
