package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/hil"
	"github.com/tetris-hil/tetris-hil/switchctl"
)

func TestReplayBadFlags(t *testing.T) {
	unsetCUDAVisible(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	if err := os.WriteFile(filepath.Join(dir, "a-file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fake", "--matrix", "0"}, "--out: missing"},
		{[]string{"--fake", "--out", out}, "the selection holds 30 matrices"},
		{[]string{"--fake", "--matrix", "0", "--fake-gpus", "4", "--out", out}, "8 endpoints and this machine 4 GPUs"},
		{[]string{"--fake", "--matrix", "0", "--gpu-map", "0,0,1,2,3,4,5,6", "--out", out}, "--allow-shared-gpu"},
		{[]string{"--fake", "--matrix", "0", "--gpu-map", "0,1,2", "--out", out}, "3 entries, the schedules have 8 endpoints"},
		{[]string{"--fake", "--matrix", "0", "--gpu-map", "0,1,2,3,4,5,6,9", "--out", out}, `"9" is not a GPU of this machine`},
		{[]string{"--matrix", "0", "--in-process", "--out", out}, "--in-process: only with --fake"},
		{[]string{"--fake", "--matrix", "0", "--spin", "fast", "--out", out}, `--spin "fast"`},
		{[]string{"--fake", "--matrix", "0", "--fake-alpha", "5", "--out", out}, `--fake-alpha "5"`},
		// A missing directory is created with its parents; a path through a file cannot be.
		{[]string{"--fake", "--matrix", "0", "--out", filepath.Join(dir, "a-file", "run")}, "a-file is a file, not a directory"},
		{[]string{"--selftest-delays", "--selftest-reps", "0"}, "--selftest-reps 0"},
	} {
		_, code, err := cli(t, append([]string{"replay"}, tc.args...)...)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if code != 2 || !strings.Contains(got, tc.want) || strings.Count(strings.TrimSpace(got), "\n") > 0 {
			t.Errorf("replay %v: exit %d, output %q; want exit 2 and one line with %q", tc.args, code, got, tc.want)
		}
	}
}

func TestReplaySelfTest(t *testing.T) {
	out, code, err := cli(t, "replay", "--selftest-delays", "--selftest-reps", "20")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	for _, want := range []string{"20 waits per delay", "10ns", "10µs", "100µs", "10ms", "P99"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A one-GPU fake machine, eight endpoints on GPU 0: compiled on the fake device, and host-driven
// through the fake switch controller with GPU 0's worker processes (this test binary as
// tetris-hil worker); clocks locked and restored, the summary saying the GPU was shared and how
// the replay ran, and verify accepting the measured timeline.
func TestReplayFakeSharedGPU(t *testing.T) {
	unsetCUDAVisible(t)
	t.Setenv(envBeCLI, cliRole)
	wiring := filepath.Join("..", "..", "examples", "wiring-8x8-serial.yaml")
	for _, tc := range []struct {
		exec  string
		extra []string
	}{{hil.ExecCompiled, nil}, {hil.ExecHostDriven, []string{"--wiring", wiring}}} {
		dir := filepath.Join(t.TempDir(), "run")
		args := append([]string{"replay", "--fake", "--fake-gpus", "1", "--allow-shared-gpu", "--lock-clocks", "--unpinned",
			"--matrix", "0", "--algo", "tetris,bvn", "--bandwidth", "8Gbps", "--reconfig", "1ms", "--out", dir}, tc.extra...)
		out, code, err := cli(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %v\n%s", tc.exec, code, err, out)
		}
		for _, want := range []string{"ALGORITHM", "tetris", "bvn", "LIVE/PRED", "share a GPU", "execution: " + tc.exec, "run directory: " + dir} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.exec, want, out)
			}
		}
		m, s := readRunDir(t, dir)
		if !m.Complete || !m.SharedGPU || len(m.Endpoints) != 8 || m.Engine != "fake" || m.Clocks != "locked for the run, restored" ||
			m.Flags["allow-shared-gpu"] != "true" || len(m.Inputs) != 1+len(tc.extra)/2 || m.Inventory == nil || len(m.Inventory.GPUs) != 1 {
			t.Errorf("%s: manifest: %+v", tc.exec, m)
		}
		if len(s.Runs) != 2 || !s.Runs[0].SharedGPU || s.Runs[0].PredictedCompletionSeconds <= 0 || s.Runs[0].Execution != tc.exec {
			t.Errorf("%s: summary: %+v", tc.exec, s)
		}
		got, code, err := cli(t, "verify", filepath.Join(dir, m.Runs[0].Schedule), "--matrix", "0", "--timeline", filepath.Join(dir, m.Runs[0].Live))
		if code != 0 {
			t.Errorf("%s: verify --timeline of the live record: exit %d: %v\n%s", tc.exec, code, err, got)
		}
	}
}

// Ctrl-C in a real tetris-hil process (this test binary as the CLI) in the middle of a replay
// through the fake switch controller: it exits 130 (SIGINT) saying where the measurements are, the manifest
// says interrupted, every JSON file it wrote parses, the locked clocks were restored, and the
// change log ends with the switches put safe.
func TestReplaySIGINT(t *testing.T) {
	unsetCUDAVisible(t)
	dir := filepath.Join(t.TempDir(), "run")
	wiring := filepath.Join("..", "..", "examples", "wiring-8x8-serial.yaml")
	cmd := exec.Command(os.Args[0], "--log-level", "error", "replay", "--fake", "--unpinned", "--in-process", "--lock-clocks",
		"--matrix", "0", "--algo", "bvn", "--bandwidth", "8Gbps", "--fake-alpha", "20ms", "--wiring", wiring, "--out", dir)
	cmd.Env = append(os.Environ(), envBeCLI+"="+cliRole)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// BvN's 43 rounds of at least 20 ms copies and a command each take seconds: wait for the
	// first manifest, then a little.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "m0-bvn.predicted.json")); err == nil {
			break
		}
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(out.String(), "interrupted") {
		t.Fatalf("exit %v, output:\n%s", err, out.String())
	}
	var m hil.Manifest
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Complete || m.Status != "interrupted" || m.Runs[0].Partial == "" || m.Clocks != "locked for the run, restored" {
		t.Errorf("manifest: complete %v, status %q, clocks %q, runs %+v", m.Complete, m.Status, m.Clocks, m.Runs)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || !json.Valid(b) {
			t.Errorf("%s: not valid JSON (%v)", e.Name(), err)
		}
	}
	log, err := switchctl.ReadChangeLog(filepath.Join(dir, "switch-log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(log) == 0 || !log[len(log)-1].Halt {
		t.Errorf("the change log (%d entries) does not end with the switches put safe", len(log))
	}
}

// A schedule file from any producer is replayed as it is, checked against its demand first.
func TestReplayScheduleFile(t *testing.T) {
	unsetCUDAVisible(t)
	dir := t.TempDir()
	sched := filepath.Join(dir, "s.json")
	if out, code, err := cli(t, "schedule", "--algo", "maxweight", "--matrix", "0", "--bandwidth", "8Gbps", "-o", sched); code != 0 {
		t.Fatalf("schedule: exit %d: %v\n%s", code, err, out)
	}
	run := filepath.Join(dir, "run")
	out, code, err := cli(t, "replay", "--fake", "--fake-noise", "0", "--schedule", sched, "--matrix", "0",
		"--reconfig", "1ms", "--out", run)
	if code != 0 {
		t.Fatalf("replay --schedule: exit %d: %v\n%s", code, err, out)
	}
	if !strings.Contains(out, "maxweight") {
		t.Errorf("output lacks the schedule's algorithm:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(run, "m0-maxweight.live.json")); err != nil {
		t.Error(err)
	}
	// Matrix 1 is not what the schedule delivers: exit 1, as verify would.
	if _, code, err := cli(t, "replay", "--fake", "--schedule", sched, "--matrix", "1", "--out", filepath.Join(dir, "r3")); code != 1 ||
		err == nil || !strings.Contains(err.Error(), "invalid for") {
		t.Errorf("a schedule replayed against another matrix: exit %d, %v", code, err)
	}
	if _, code, err := cli(t, "replay", "--fake", "--schedule", sched, "--algo", "tetris", "--out", filepath.Join(dir, "r2")); code != 2 ||
		err == nil || !strings.Contains(err.Error(), "--algo: not with --schedule") {
		t.Errorf("--algo with --schedule: exit %d, %v", code, err)
	}
}

// Without --wiring a fake replay runs compiled on the fake device, as its help's example at
// NVLink scale shows: no workers, the table and summary.json say so and report the harness's
// cost, and the measured timeline passes the verifier. In virtual time the same programs give
// exactly the prediction, with no harness cost at all.
func TestReplayCompiledFake(t *testing.T) {
	unsetCUDAVisible(t)
	dir := t.TempDir()
	for _, virtual := range []bool{false, true} {
		run := filepath.Join(dir, fmt.Sprintf("r-%v", virtual))
		args := []string{"replay", "--fake", "--fake-alpha", "5us", "--fake-bandwidth", "370GB/s", "--matrix", "0",
			"--algo", "tetris,bvn,sunflow,maxweight", "--reconfig", "10us", "--out", run}
		if virtual {
			args = append(args, "--virtual")
		}
		out, code, err := cli(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %v\n%s", code, err, out)
		}
		for _, want := range []string{"HARNESS MEDIAN", "execution: compiled", "maxweight"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		var s hil.Summary
		b, err := os.ReadFile(filepath.Join(run, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Runs) != 4 {
			t.Fatalf("summary: %+v", s)
		}
		for _, r := range s.Runs {
			if r.Execution != hil.ExecCompiled || r.HarnessCost.Worst < 0 || r.HarnessCost.Median > r.HarnessCost.P99 {
				t.Errorf("%s: execution %q, harness cost %+v", r.Algorithm, r.Execution, r.HarnessCost)
			}
			// Live can never beat the prediction: every copy lasts exactly its modelled time and
			// starts no earlier than its waits end.
			if r.LiveOverPredicted < 1-1e-9 || virtual && (r.LiveOverPredicted != 1 || r.HarnessCost.Worst != 0) {
				t.Errorf("%s (virtual %v): live/predicted %v, harness %+v", r.Algorithm, virtual, r.LiveOverPredicted, r.HarnessCost)
			}
		}
		var m hil.Manifest
		b, _ = os.ReadFile(filepath.Join(run, "manifest.json"))
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		got, code, err := cli(t, "verify", filepath.Join(run, m.Runs[0].Schedule), "--matrix", "0", "--timeline", filepath.Join(run, m.Runs[0].Live))
		if code != 0 {
			t.Errorf("verify --timeline of the compiled live record: exit %d: %v\n%s", code, err, got)
		}
	}
	if _, code, err := cli(t, "replay", "--fake", "--virtual", "--wiring", filepath.Join("..", "..", "examples", "wiring-8x8-serial.yaml"),
		"--matrix", "0", "--out", filepath.Join(dir, "bad")); code != 2 || !strings.Contains(err.Error(), "--virtual") {
		t.Errorf("--virtual with --wiring: exit %d, %v", code, err)
	}
}

// The replay table names each column's unit in its heading and holds bare numbers: the same
// value reads the same whatever unit another row would have chosen.
func TestReplayTableUnitsInHeadings(t *testing.T) {
	sum := &hil.Summary{Runs: []hil.RunSummary{
		{Algorithm: "tetris", CompletionSeconds: 0.07991, PredictedCompletionSeconds: 0.07823, LiveOverPredicted: 1.0214, Commands: 38, HarnessCost: hil.Diff{Median: 2e-6, P99: 5e-6, Worst: 9e-6},
			StartDifference: hil.Diff{Median: 1.114e-3, P99: 3.19e-3, Worst: 3.19e-3}, EndDifference: hil.Diff{Median: 1.125e-3, P99: 2.898e-3, Worst: -2.898e-3}},
		{Algorithm: "bvn", CompletionSeconds: 0.3186, PredictedCompletionSeconds: 0.3025, LiveOverPredicted: 1.0533, Commands: 43, HarnessCost: hil.Diff{Median: 1.5e-6, P99: 40e-6, Worst: 44e-6},
			StartDifference: hil.Diff{Median: 800e-6, P99: 15.99e-3, Worst: 16.05e-3}, EndDifference: hil.Diff{Median: 7.993e-3, P99: 16.09e-3, Worst: 16.17e-3}},
	}}
	var b strings.Builder
	if err := writeReplayTable(&b, sum); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.Contains(lines[0], "LIVE (ms)") || !strings.Contains(lines[0], "START Δ MEDIAN (ms)") || !strings.Contains(lines[0], "HARNESS MEDIAN (µs)") {
		t.Errorf("heading %q", lines[0])
	}
	want := [][]string{
		// The smallest Δ (0.8 ms) keeps four significant digits: four decimals for the column.
		{"tetris", "79.91", "78.23", "1.0214", "1.1140", "3.1900", "+3.1900", "1.1250", "2.8980", "-2.8980", "2.000", "5.000", "9.000", "38"},
		{"bvn", "318.60", "302.50", "1.0533", "0.8000", "15.9900", "+16.0500", "7.9930", "16.0900", "+16.1700", "1.500", "40.000", "44.000", "43"},
	}
	for i, w := range want {
		if got := strings.Fields(lines[i+1]); strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("row %d: %v, want %v", i, got, w)
		}
	}
}

// readRunDir decodes a replay run directory's manifest.json and summary.json.
func readRunDir(t *testing.T, dir string) (hil.Manifest, hil.Summary) {
	t.Helper()
	var m hil.Manifest
	var s hil.Summary
	for name, v := range map[string]any{"manifest.json": &m, "summary.json": &s} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return m, s
}
