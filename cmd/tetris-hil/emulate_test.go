package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func TestEmulateScheduleGolden(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	stdout, code, err := cli(t, "emulate", "--schedule", "testdata/emulate/hand4.schedule.json",
		"--demand", "testdata/emulate/hand4.csv", "--json", out)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, stdout)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The tool line names the build (Go version, VCS revision); it is checked for its form, and
	// kept out of the golden file so that the file does not change with every toolchain.
	toolLine := regexp.MustCompile(`(?m)^ "tool": "tetris-hil [^"]+",$`)
	if !toolLine.Match(got) {
		t.Errorf("report lacks a tool line naming the build:\n%s", got)
	}
	got = toolLine.ReplaceAll(got, []byte(` "tool": "tetris-hil (build)",`))
	goldenfile.Check(t, "testdata/emulate/hand4.golden.json", got)
	// The record's headline fields, worked by hand: receiver 1 takes 4000 + 5000 bytes at
	// 1 GB/s (9 µs) from two partners, each after a switch change (α_r = 1 µs: 11 µs).
	var rep experiment.Report
	if err := json.Unmarshal(got, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(rep.Runs))
	}
	r := rep.Runs[0]
	if r.Algorithm != "hand" || r.BandwidthBoundSeconds != 9e-6 || r.ReconfigBoundSeconds != 11e-6 || r.LowerBoundSeconds != 11e-6 {
		t.Errorf("run %+v: want algorithm hand, bounds 9 µs and 11 µs", r)
	}
	if !strings.Contains(stdout, "hand") || !strings.Contains(stdout, "STATE_CHANGES") {
		t.Errorf("table lacks the run or its header:\n%s", stdout)
	}
}

func TestEmulateTimelineFilesVerify(t *testing.T) {
	dir := t.TempDir()
	stdout, code, err := cli(t, "emulate", "--schedule", "testdata/emulate/hand4.schedule.json",
		"--reconfig-model", "controller", "--tr", "100ns", "--tw", "1us", "--timeline", dir)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, stdout)
	}
	s, err := schedules.LoadSchedule(filepath.Join(dir, "schedule-hand.schedule.json"))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := readTimeline(filepath.Join(dir, "schedule-hand.timeline.json"))
	if err != nil {
		t.Fatal(err)
	}
	if vs := schedules.VerifyTimeline(s, tl); len(vs) > 0 {
		t.Errorf("written timeline fails the verifier: %v", vs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "schedule-hand.trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct {
			Ph  string `json:"ph"`
			Pid int    `json:"pid"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	slices := 0
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" && e.Pid == 1 {
			slices++
		}
	}
	if slices < len(s.Circuits) {
		t.Errorf("%d transmitter slices for %d circuits", slices, len(s.Circuits))
	}
}

func TestEmulateBadInput(t *testing.T) {
	sched := "testdata/emulate/hand4.schedule.json"
	csv := "testdata/emulate/hand4.csv"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--demand", csv, "--algo", "no-such-algorithm"}, `--algo "no-such-algorithm"`},
		{[]string{"--demand", csv, "--bandwidth", "800"}, `--bandwidth "800"`},
		{[]string{"--demand", csv, "--reconfig", "-1us"}, `--reconfig "-1us"`},
		{[]string{"--schedule", sched, "--demand", csv, "--matrix", "7"}, "--matrix 7"},
		{[]string{"--schedule", sched, "--reconfig-model", "serial"}, `--reconfig-model "serial"`},
		{[]string{"--schedule", sched, "--reconfig-model", "controller", "--tw", "-5us"}, `--tw "-5us"`},
		{[]string{"--schedule", sched, "--algo", "tetris"}, "--algo: not with --schedule"},
		{[]string{"--schedule", "testdata/emulate/missing.json"}, "--schedule"},
		{[]string{"--schedule", sched, "--calibration", "testdata/emulate/missing.json"}, "--calibration"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, code, err := cli(t, append([]string{"emulate"}, tc.args...)...)
			if code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("exit %d, error %v; want exit 2 and one line containing %q", code, err, tc.want)
			}
		})
	}
}

func TestEmulateAlgorithmsTotalsAndGantt(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	svg := filepath.Join(dir, "g.svg")
	// The built-in trace's layer 0: dispatch and combine for each of its datasets.
	stdout, code, err := cli(t, "emulate", "--layer", "0", "--algo", "tetris,bvn", "--json", out, "--gantt", svg)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	matrices := len(rep.Runs) / 2
	if matrices < 2 || len(rep.Runs) != 2*matrices || len(rep.Totals) != 2 {
		t.Fatalf("%d runs and %d totals, want two runs per matrix (≥ 2) and 2 totals", len(rep.Runs), len(rep.Totals))
	}
	sum := map[string]float64{}
	for _, r := range rep.Runs {
		sum[r.Algorithm] += r.CompletionSeconds
		if r.Algorithm == "tetris" && r.Speedup != 1 {
			t.Errorf("tetris's speedup over itself is %g", r.Speedup)
		}
		if r.LowerBoundSeconds != max(r.BandwidthBoundSeconds, r.ReconfigBoundSeconds) || r.CompletionSeconds < r.LowerBoundSeconds {
			t.Errorf("%s on matrix %d: completion %g, bounds %g/%g/%g", r.Algorithm, r.Matrix.Index,
				r.CompletionSeconds, r.LowerBoundSeconds, r.BandwidthBoundSeconds, r.ReconfigBoundSeconds)
		}
	}
	for _, tot := range rep.Totals {
		if want := sum[tot.Algorithm] / sum["tetris"]; tot.Matrices != matrices || tot.CompletionSeconds != sum[tot.Algorithm] || tot.Speedup != want {
			t.Errorf("total %+v: want %d matrices, completion %g, speedup %g", tot, matrices, sum[tot.Algorithm], want)
		}
	}
	totals := 0
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "total" && f[1] == fmt.Sprintf("%d-matrices", matrices) {
			totals++
		}
	}
	if totals != 2 {
		t.Errorf("table has no total row:\n%s", stdout)
	}
	for _, name := range []string{"g-m0-tetris.svg", "g-m1-bvn.svg"} {
		g, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Contains(g, []byte("<svg")) {
			t.Errorf("%s: %v, not an SVG", name, err)
		}
	}
	// A PDF Gantt chart, for papers; any other extension is a usage error.
	if _, code, err := cli(t, "emulate", "--matrix", "0", "--algo", "tetris", "--gantt", filepath.Join(dir, "g.pdf")); code != 0 {
		t.Errorf("--gantt g.pdf: exit %d: %v", code, err)
	} else if g, err := os.ReadFile(filepath.Join(dir, "g.pdf")); err != nil || !bytes.HasPrefix(g, []byte("%PDF-")) {
		t.Errorf("g.pdf: %v, not a PDF", err)
	}
	if _, code, _ := cli(t, "emulate", "--matrix", "0", "--algo", "tetris", "--gantt", filepath.Join(dir, "g.eps")); code != 2 {
		t.Errorf("--gantt g.eps: exit %d, want 2", code)
	}
}

func TestScheduleCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s.json")
	stdout, code, err := cli(t, "schedule", "--algo", "tetris", "--demand", "testdata/emulate/hand4.csv",
		"--bandwidth", "8Gbps", "--reconfig", "1us", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, stdout)
	}
	s, err := schedules.LoadSchedule(out)
	if err != nil {
		t.Fatal(err)
	}
	d, err := os.Open("testdata/emulate/hand4.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	dm, err := schedules.ReadCSV(d, "hand4.csv", 0)
	if err != nil {
		t.Fatal(err)
	}
	if vs := schedules.Verify(s, dm); len(vs) > 0 || s.Params.BandwidthBytesPerSecond != 1e9 || s.Params.ReconfigSeconds != 1e-6 {
		t.Errorf("schedule params %+v, violations %v", s.Params, vs)
	}
	// -o and standard output write the same bytes, MarshalIndent's and a newline.
	file, _ := os.ReadFile(out)
	want, err := json.MarshalIndent(s, "", " ")
	if err != nil || !bytes.Equal(file, append(want, '\n')) {
		t.Errorf("-o wrote %d bytes, not MarshalIndent's %d (err %v)", len(file), len(want)+1, err)
	}
	if stdout, _, code, err := runCLI(t, "schedule", "--algo", "tetris", "--demand", "testdata/emulate/hand4.csv",
		"--bandwidth", "8Gbps", "--reconfig", "1us"); code != 0 || stdout != string(file) {
		t.Errorf("standard output (exit %d, %v) differs from -o's file:\n%s", code, err, stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--algo", "nope"}, `--algo "nope"`},
		{[]string{"--algo", "tetris,bvn"}, "schedule takes one algorithm"},
		{[]string{"--fabric", "torus"}, `--fabric "torus"`},
		{[]string{"--bandwidth", "100"}, `--bandwidth "100"`},
	} {
		args := append([]string{"schedule", "--demand", "testdata/emulate/hand4.csv", "-o", out}, tc.args...)
		if _, code, err := cli(t, args...); code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, %v; want exit 2 naming %q", tc.args, code, err, tc.want)
		}
	}
}

// Under the calibration's α-β model (α = 2 µs, β = 1 ns/B, so 1 GB/s asymptotically) every
// circuit of hand4 takes 2 µs longer than under the 1 GB/s bandwidth model, and the lower bounds
// follow the calibration, not --bandwidth: receiver 1 takes 4,000 + 5,000 B from 2 senders,
// (2 + 4) + (2 + 5) = 13 µs, plus one α_r = 1 µs per sender, 15 µs (at 1 GB/s: 9 and 11 µs).
func TestEmulateCalibrationModel(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	stdout, code, err := cli(t, "emulate", "--schedule", "testdata/emulate/hand4.schedule.json",
		"--demand", "testdata/emulate/hand4.csv", "--calibration", "testdata/emulate/cal4.json", "--json", out)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, stdout)
	}
	b, _ := os.ReadFile(out)
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0].Result
	if r.Transfer != "alphabeta fixture" {
		t.Errorf("transfer model %q", r.Transfer)
	}
	if math.Abs(r.Bounds.Bandwidth-13e-6) > 1e-15 || math.Abs(r.Bounds.Reconfig-15e-6) > 1e-15 || r.Ratio() < 1 {
		t.Errorf("bounds %+v, completion %g: want 13 µs and 15 µs from the calibration, and a ratio ≥ 1", r.Bounds, r.Completion)
	}
	// The bandwidth model gives 15 µs (golden); with α on every circuit it must take longer.
	if r.Completion <= 15e-6 {
		t.Errorf("completion %g under α-β, want more than the bandwidth model's 15 µs", r.Completion)
	}
	for _, bad := range [][]string{
		{"--gpu-map", "0,1,x,3"},
		{"--gpu-map", "0,1,2,7"},
		{"--measured", "testdata/emulate/hand4.csv"},
	} {
		args := append([]string{"emulate", "--schedule", "testdata/emulate/hand4.schedule.json", "--calibration", "testdata/emulate/cal4.json"}, bad...)
		if _, code, err := cli(t, args...); code != 2 || err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: exit %d, %v; want exit 2 naming %s", bad, code, err, bad[0])
		}
	}
}

// calibrate's own help example: emulating with a fake server's calibration printed ratios of
// 0.51 to a bound taken at --bandwidth. The bounds now follow the calibration, so no run of
// any algorithm on any matrix is below 1.
func TestEmulateFakeCalibrationBoundsHold(t *testing.T) {
	unsetCUDAVisible(t)
	t.Setenv(envBeCLI, cliRole) // the workers calibrate starts are this test binary
	dir := t.TempDir()
	cal, out := filepath.Join(dir, "cal.json"), filepath.Join(dir, "out.json")
	if _, code, err := cli(t, "calibrate", "--fake", "--no-progress", "-o", cal); code != 0 {
		t.Fatalf("calibrate: exit %d: %v", code, err)
	}
	if stdout, code, err := cli(t, "emulate", "--calibration", cal, "--json", out); code != 0 {
		t.Fatalf("emulate: exit %d: %v\n%s", code, err, stdout)
	}
	b, _ := os.ReadFile(out)
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) < 30 {
		t.Fatalf("%d runs, want every algorithm on 30 matrices", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		res := r.Result
		if res.RatioBandwidth < 1 || res.RatioReconfig < 1 || res.Bounds.Bandwidth <= 0 {
			t.Errorf("%s: completion %g s over bounds %+v: ratios %g and %g", res.Algorithm, res.Completion, res.Bounds, res.RatioBandwidth, res.RatioReconfig)
		}
	}
}
