package schedules

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// scheduleJSON is a valid crossbar schedule file with one 1-byte circuit 0→1; edit replaces
// exact substrings of it to make hostile variants.
const scheduleJSON = `{"version":1,"algorithm":"hand","n":2,"ports":2,"fabric":"crossbar","mode":"partial",` +
	`"params":{"bandwidth_bytes_per_second":1,"reconfig_seconds":0.5},` +
	`"circuits":[{"src":0,"dst":1,"bytes":1,"group":0,"path":[],"planned_start":0,"planned_end":1}]}`

const barrierJSON = `{"version":1,"algorithm":"hand","n":2,"ports":2,"fabric":"crossbar","mode":"barrier",` +
	`"params":{"bandwidth_bytes_per_second":1,"reconfig_seconds":0},` +
	`"circuits":[{"src":0,"dst":1,"bytes":1,"group":0,"path":[]}],"rounds":[{"group":0,"planned_duration":1}]}`

func edit(s string, pairs ...string) string { return strings.NewReplacer(pairs...).Replace(s) }

// Every hostile schedule file is refused by the reader with one line naming the field and the
// value; none reaches the executor.
func TestReadScheduleRejectsHostileFiles(t *testing.T) {
	if _, err := ReadSchedule(strings.NewReader(scheduleJSON), "s.json"); err != nil {
		t.Fatalf("the valid base file is refused: %v", err)
	}
	if _, err := ReadSchedule(strings.NewReader(barrierJSON), "s.json"); err != nil {
		t.Fatalf("the valid barrier file is refused: %v", err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"trailing brackets", scheduleJSON + "]]]", "line 1, column 246: trailing data after the schedule object"},
		{"a second object", scheduleJSON + "\n{}", "line 2, column 1: trailing data after the schedule object"},
		{"group 2^62", edit(scheduleJSON, `"group":0`, `"group":4611686018427387904`), "field circuits[0].group: 4611686018427387904 is above the limit of 2147483647"},
		{"round group 2^62", edit(barrierJSON, `"rounds":[{"group":0`, `"rounds":[{"group":4611686018427387904`), "field rounds[0].group: 4611686018427387904 is above the limit of 2147483647"},
		{"bytes MaxInt64", edit(scheduleJSON, `"bytes":1`, `"bytes":9223372036854775807`), "field circuits[0].bytes: 9223372036854775807 is above the limit of 9007199254740992 bytes (2^53)"},
		{"bytes beyond int64", edit(scheduleJSON, `"bytes":1`, `"bytes":99999999999999999999`), "field circuits.bytes: value 99999999999999999999 is out of range for an integer (int64)"},
		{"bytes as a string", edit(scheduleJSON, `"bytes":1`, `"bytes":"1"`), `line 1, column 191: field circuits.bytes: value "1" is a JSON string, want an integer (int64)`},
		{"n as a string", edit(scheduleJSON, `"n":2`, `"n":"4"`), `field n: value "4" is a JSON string, want an integer (int)`},
		{"fractional src", edit(scheduleJSON, `"src":0`, `"src":0.5`), "field circuits.src: value 0.5 is not an integer (int)"},
		{"path as an object", edit(scheduleJSON, `"path":[]`, `"path":{}`), "field circuits.path: a JSON object, want an array"},
		{"reconfig 1e308", edit(scheduleJSON, `"reconfig_seconds":0.5`, `"reconfig_seconds":1e308`), "field params.reconfig_seconds = 1e+308 s is above the limit of 1e+06 s"},
		{"negative reconfig", edit(scheduleJSON, `"reconfig_seconds":0.5`, `"reconfig_seconds":-1`), "field params.reconfig_seconds = -1 s is negative"},
		{"planned end 1e308", edit(scheduleJSON, `"planned_end":1`, `"planned_end":1e308`), "field circuits[0].planned_end = 1e+308 s is above the limit of 1e+06 s"},
		{"planned duration 1e308", edit(barrierJSON, `"planned_duration":1`, `"planned_duration":1e308`), "field rounds[0].planned_duration = 1e+308 s is above the limit of 1e+06 s"},
		{"crossbar n 2^40", edit(scheduleJSON, `"n":2`, `"n":1099511627776`), "field n: 1099511627776 is above the limit of 1048576 ports on any fabric"},
		{"benes n 2^31", edit(scheduleJSON, `"n":2`, `"n":2147483648`, `"crossbar"`, `"benes"`), "field n: 2147483648 is above the limit of 1048576 ports"},
		{"unknown field", edit(scheduleJSON, `"algorithm"`, `"algorithmz"`), `s.json: unknown field "algorithmz"`},
		{"truncated", scheduleJSON[:100], "line 1: truncated file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadSchedule(strings.NewReader(c.in), "s.json")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "s.json: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line from s.json containing %q", err, c.want)
			}
			t.Logf("%s", err)
		})
	}
}

// Two schedules whose bytes add up past 2^53 are refused, although each circuit is below it.
func TestReadScheduleRejectsTotalAboveLimit(t *testing.T) {
	in := edit(scheduleJSON, `"circuits":[{"src":0,"dst":1,"bytes":1,`, fmt.Sprintf(`"circuits":[{"src":1,"dst":0,"bytes":%d,"group":0,"path":[]},{"src":0,"dst":1,"bytes":%d,`, MaxBytes, MaxBytes))
	_, err := ReadSchedule(strings.NewReader(in), "s.json")
	if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "field circuits[1].bytes: 9007199254740992 brings the schedule's total above the limit") {
		t.Fatalf("error %v, want the total above the limit", err)
	}
}

// LoadChecked, the reader for every command that executes a file, refuses what verify rejects
// on the file alone: a 0-byte circuit, an end before the start, a duplicate circuit.
func TestLoadCheckedAppliesStaticChecks(t *testing.T) {
	dup := edit(scheduleJSON, `"circuits":[`, `"circuits":[{"src":0,"dst":1,"bytes":1,"group":0,"path":[]},`)
	for _, c := range []struct{ name, in, want string }{
		{"zero bytes", edit(scheduleJSON, `"bytes":1`, `"bytes":0`), "endpoint: circuit 0: 0→1 carries 0 bytes"},
		{"end before start", edit(scheduleJSON, `"planned_start":0`, `"planned_start":2`), "header: circuit 0: planned end 1 is before planned start 2"},
		{"duplicate", dup, "duplicate: circuit 1: 0→1 repeats circuit 0 in group 0"},
		{"negative group", edit(scheduleJSON, `"group":0`, `"group":-1`), "header: circuit 0: group -1 is negative"},
		{"bad endpoint", edit(scheduleJSON, `"dst":1`, `"dst":7`), "endpoint: circuit 0: src 0, dst 7: not both real ports"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.json")
			if err := os.WriteFile(path, []byte(c.in), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadSchedule(path); err != nil {
				t.Fatalf("LoadSchedule refuses what verify should list as a violation: %v", err)
			}
			_, err := LoadChecked(path)
			var se *StaticError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("LoadChecked: %v, want a StaticError containing %q", err, c.want)
			}
			t.Logf("%s", err)
		})
	}
	path := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(path, []byte(scheduleJSON), 0o644)
	if _, err := LoadChecked(path); err != nil {
		t.Fatalf("valid file refused: %v", err)
	}
}

// The byte limits of demand matrices: loads that would overflow int64, or leave float64's exact
// range, are refused with the entry and the limit.
func TestDemandLimits(t *testing.T) {
	m := int64(math.MaxInt64)
	for _, c := range []struct {
		name string
		rows [][]int64
		want string
	}{
		{"3×3 of MaxInt64", [][]int64{{m, m, m}, {m, m, m}, {m, m, m}}, "entry [0][0] = 9223372036854775807 brings the matrix total above the limit of 9007199254740992 bytes (2^53)"},
		{"1e18 and 1", [][]int64{{0, 1e18, 1, 1}, {1, 0, 1e18, 1}, {1, 1, 0, 1e18}, {1e18, 1, 1, 0}}, "entry [0][1] = 1000000000000000000 brings"},
		{"sum just above", [][]int64{{0, MaxBytes}, {1, 0}}, "entry [1][0] = 1 brings the matrix total above"},
	} {
		_, err := DemandFromRows(c.rows)
		if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := DemandFromRows([][]int64{{0, MaxBytes / 2}, {MaxBytes / 2, 0}}); err != nil {
		t.Errorf("a total of exactly 2^53 is refused: %v", err)
	}
}

// The drain-time limit: a demand that would take longer than MaxSeconds at the bandwidth.
func TestCheckHorizon(t *testing.T) {
	d, _ := DemandFromRows([][]int64{{0, 1e15}, {1, 0}})
	if err := (Options{Bandwidth: 1e11, Reconfig: 1e-5}).CheckHorizon(d); err != nil {
		t.Errorf("1e15 B at 100 GB/s (1e4 s) refused: %v", err)
	}
	err := (Options{Bandwidth: 1e8, Reconfig: 1e-5}).CheckHorizon(d)
	if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "may take 1e+07 s, above the limit of 1e+06 s") {
		t.Errorf("1e15 B at 100 MB/s: %v, want the time limit", err)
	}
	if err := (Options{Bandwidth: 1e11, Reconfig: 1e308}).Check(); err == nil || !strings.Contains(err.Error(), "above the limit of 1e+06 s") {
		t.Errorf("α_r = 1e308: %v, want the time limit", err)
	}
}

func TestReadCSVHostile(t *testing.T) {
	for _, c := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"underscore literal", "0,1_000\n1,0\n", 0, `line 1, column 2: value "1_000" is not a number`},
		{"hex float", "0,0x1p4\n1,0\n", 0, `line 1, column 2: value "0x1p4" is not a number`},
		{"hex int", "0,0x10\n1,0\n", 0, `line 1, column 2: value "0x10" is not a number`},
		{"3-column header over 2×2", "a,b,c\n0,1\n1,0\n", 0, "line 1 is a header of 3 names over rows of 2 values (line 2)"},
		{"3×3 of MaxInt64", strings.Repeat("9223372036854775807,9223372036854775807,9223372036854775807\n", 3), 0, "entry [0][0] = 9223372036854775807 brings the matrix total above"},
		{"line too long", "0," + strings.Repeat("0", 5000) + "\n", 2, "line 1 is longer than 4224 bytes, above the limit for a row of at most 2 values (64 bytes per value; raise it with --max-ports)"},
		{"long value not echoed", "0," + strings.Repeat("x", 300) + "\n1,0\n", 0, `value "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..." is not a number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(c.in), "m.csv", c.max)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "m.csv: ") {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			t.Logf("%s", err)
		})
	}
	d, err := ReadCSV(strings.NewReader("a,b\n0,4.096e3\n1E2,0\n"), "m.csv", 0)
	if err != nil || d.Bytes[0][1] != 4096 || d.Bytes[1][0] != 100 {
		t.Fatalf("a header and NumPy floats: %v, %v", d, err)
	}
}

// alternating is an n = 2 Beneš schedule of k circuits 0→1, 1→0, 0→1, ... through the one
// switch, alternating Cross and Bar, with the timeline a correct execution gives: circuit i
// transmits over [2i, 2i+1] and the switch changes over [2i−1, 2i] between two of them.
func alternating(k int) (*Schedule, *Timeline) {
	s := &Schedule{Version: FormatVersion, Algorithm: "alternating", N: 2, Ports: 2, Fabric: Benes, Mode: Partial,
		Params: Params{BandwidthBytesPerSecond: 1, ReconfigSeconds: 1}}
	tl := &Timeline{}
	for i := range k {
		src := i % 2
		// 0→1 crosses the switch, 1→0 too: vary by the lane instead. 0→0 bar, 0→1 cross.
		dst := (i / 2) % 2
		st := benes.Bar
		if src != dst {
			st = benes.Cross
		}
		in, out := src, dst
		s.Circuits = append(s.Circuits, Circuit{Src: src, Dst: dst, Bytes: 1, Group: i, Path: benes.PathOf([]benes.Traversal{{Stage: 0, Switch: 0, In: in, Out: out}})})
		t0 := float64(2 * i)
		tl.Circuits = append(tl.Circuits, CircuitTiming{Circuit: i, Ready: t0, PathReady: t0, ReconfigStart: t0, TransmitStart: t0, End: t0 + 1})
		prev := benes.Bar
		if i > 0 {
			prev = s.Circuits[i-1].Path.At(0).State()
		}
		if st != prev {
			tl.SwitchChanges = append(tl.SwitchChanges, SwitchChange{Stage: 0, Switch: 0, From: prev, To: st, Start: t0 - 1, End: t0})
		}
	}
	return s, tl
}

// The timeline check walks each switch's changes once per traversal by binary search: 10^6
// circuits through one switch check in seconds (the walk from t = 0 for every traversal took
// minutes). Not a timing test: it asserts the result, and the time is logged.
func TestVerifyTimelineManyCircuitsOneSwitch(t *testing.T) {
	k := 1_000_000
	if testing.Short() {
		k = 100_000
	}
	s, tl := alternating(k)
	start := time.Now()
	vs := VerifyTimeline(s, tl)
	t.Logf("%d circuits, %d switch changes: %v", k, len(tl.SwitchChanges), time.Since(start))
	if len(vs) != 0 {
		t.Fatalf("valid timeline rejected: %v", ViolationsError(vs))
	}
	// Move one change into the middle of circuit k/2's transmission: exactly that is reported.
	mid := len(tl.SwitchChanges) / 2
	ch := &tl.SwitchChanges[mid]
	victim := int(ch.End) / 2
	ch.Start, ch.End = ch.Start+1.5, ch.End+1.5
	vs = VerifyTimeline(s, tl)
	if len(vs) == 0 {
		t.Fatal("a change under a live circuit is not reported")
	}
	found := false
	for _, v := range vs {
		found = found || v.Kind == SwitchUnderLiveCircuit && v.Circuit == victim
	}
	if !found {
		t.Fatalf("circuit %d not reported: %v", victim, ViolationsError(vs))
	}
}

func BenchmarkVerifyTimelineOneSwitch(b *testing.B) {
	for _, k := range []int{10_000, 100_000} {
		s, tl := alternating(k)
		b.Run(fmt.Sprint(k), func(b *testing.B) {
			for b.Loop() {
				if vs := VerifyTimeline(s, tl); len(vs) != 0 {
					b.Fatal(vs[0])
				}
			}
		})
	}
}

// A circuit and a switch change both shorter than the timeline's resolution at their time (a
// 1-byte transfer at 10^4 s with α_r = 0) cannot be ordered by their times; the verifier
// accepts either order instead of reporting the switch in the wrong state, and still catches a
// switch that never reaches the state a circuit needs.
func TestVerifyTimelineSubResolutionEvents(t *testing.T) {
	const t0 = 11258.999068446241
	s := &Schedule{Version: FormatVersion, Algorithm: "hand", N: 2, Ports: 2, Fabric: Benes, Mode: Partial,
		Params: Params{BandwidthBytesPerSecond: 1e11},
		Circuits: []Circuit{
			{Src: 0, Dst: 0, Bytes: 1, Group: 0, Path: benes.PathOf([]benes.Traversal{{Stage: 0, Switch: 0, In: 0, Out: 0}})},
			{Src: 0, Dst: 1, Bytes: 1 << 40, Group: 1, Path: benes.PathOf([]benes.Traversal{{Stage: 0, Switch: 0, In: 0, Out: 1}})},
		}}
	end := t0 + 1e-11 // rounds to t0 + 1 ulp
	tl := &Timeline{
		Circuits: []CircuitTiming{
			{Circuit: 0, Ready: t0, PathReady: t0, ReconfigStart: t0, TransmitStart: t0, End: end},
			{Circuit: 1, Ready: end, PathReady: end, ReconfigStart: end, TransmitStart: end, End: end + 11},
		},
		SwitchChanges: []SwitchChange{{Stage: 0, Switch: 0, From: benes.Bar, To: benes.Cross, Start: end, End: end}},
	}
	if vs := VerifyTimeline(s, tl); len(vs) != 0 {
		t.Fatalf("valid timeline rejected: %v", ViolationsError(vs))
	}
	tl.SwitchChanges = nil
	if vs := VerifyTimeline(s, tl); len(vs) != 1 || vs[0].Kind != SwitchUnderLiveCircuit || vs[0].Circuit != 1 {
		t.Fatalf("a missing change: %v, want circuit 1 in the wrong state", ViolationsError(vs))
	}
}

// isDecimal is the grammar [+-]?(d+.?d*|.d+)([eE][+-]?d+)?.
func TestIsDecimal(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "4096": true, "+7": true, "-1": true, "1.": true, ".5": true, "4.096e3": true, "1E+06": true, "1.5e-3": true,
		"": false, "+": false, ".": false, "e5": false, "1e": false, "1e+": false, "1_000": false, "0x10": false, "0x1p4": false,
		"Inf": false, "NaN": false, "1.2.3": false, "1e5.0": false, " 1": false, "1 ": false, "--1": false,
	} {
		if got := isDecimal(s); got != want {
			t.Errorf("isDecimal(%q) = %v, want %v", s, got, want)
		}
	}
}
