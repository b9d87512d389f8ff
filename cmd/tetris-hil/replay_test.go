package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/hil"
)

func TestReplayBadFlags(t *testing.T) {
	unsetCUDAVisible(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
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
		{[]string{"--fake", "--matrix", "0", "--out", filepath.Join(dir, "no", "such")}, "--out"},
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

// A one-GPU fake machine: eight endpoints on GPU 0's workers (this test binary as tetris-hil
// worker), clocks locked and restored, the summary saying the GPU was shared, and verify
// accepting the measured timeline.
func TestReplayFakeSharedGPU(t *testing.T) {
	unsetCUDAVisible(t)
	t.Setenv(envBeCLI, cliRole)
	dir := filepath.Join(t.TempDir(), "run")
	out, code, err := cli(t, "replay", "--fake", "--fake-gpus", "1", "--allow-shared-gpu", "--lock-clocks", "--unpinned",
		"--matrix", "0", "--algo", "tetris,bvn", "--bandwidth", "8Gbps", "--reconfig", "1ms", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	for _, want := range []string{"ALGORITHM", "tetris", "bvn", "LIVE/PRED", "share a GPU", "run directory: " + dir} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
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
	if !m.Complete || !m.SharedGPU || len(m.Endpoints) != 8 || m.Engine != "fake" || m.Clocks != "locked for the run, restored" ||
		m.Flags["allow-shared-gpu"] != "true" || len(m.Inputs) != 1 || m.Inventory == nil || len(m.Inventory.GPUs) != 1 {
		t.Errorf("manifest: %+v", m)
	}
	if len(s.Runs) != 2 || !s.Runs[0].SharedGPU || s.Runs[0].PredictedCompletionSeconds <= 0 {
		t.Errorf("summary: %+v", s)
	}
	got, code, err := cli(t, "verify", filepath.Join(dir, m.Runs[0].Schedule), "--matrix", "0", "--timeline", filepath.Join(dir, m.Runs[0].Live))
	if code != 0 {
		t.Errorf("verify --timeline of the live record: exit %d: %v\n%s", code, err, got)
	}
}
