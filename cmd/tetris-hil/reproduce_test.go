package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator/reproduce"
)

func TestReproduceBadFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	blocked := t.TempDir()
	if err := os.WriteFile(filepath.Join(blocked, "fig9"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fig11", "--out", dir}, `figure "fig11"`},
		{[]string{"fig7"}, "--out"},
		{[]string{"fig7", "--out", file}, "is not a directory"},
		{[]string{"fig7", "--out", dir, "--jobs", "-1"}, "--jobs -1"},
		{[]string{"fig9", "--out", blocked}, "fig9 is not a directory"},
		{[]string{"fig13", "--out", dir, "--calibration", filepath.Join(dir, "none.json")}, "--calibration"},
		{[]string{"fig7", "--out", dir, "--demand", filepath.Join(dir, "none.json")}, "--demand"},
		{[]string{"fig10", "--out", dir, "--measured", file}, "--measured"},
		{[]string{"--out", dir}, "at least one figure"},
		{[]string{"fig7", "--out", dir, "--progress", "always"}, `--progress "always"`},
	} {
		_, code, err := cli(t, append([]string{"reproduce"}, c.args...)...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("reproduce %v: exit %d, error %v; want exit 2 and one line naming %q", c.args, code, err, c.want)
		}
	}
}

// TestReproduceFig6And7: one matrix of the built-in trace; the tables quote the paper beside
// ours, the files and the manifest are written.
func TestReproduceFig6And7(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	out, code, err := cli(t, "reproduce", "fig7", "fig6", "--matrix", "3", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	for _, want := range []string{"Figure 7(a) (Tetris §4.2)", "BvN / Tetris", "20% (read: 1.20)",
		"Figure 6 (Tetris §3)", "Tetris --no-partial", "not stated", "Wrote " + filepath.Join(dir, "reproduce.json")} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "== fig6") > strings.Index(out, "== fig7") {
		t.Errorf("figures not in the paper's order:\n%s", out)
	}
	for _, p := range []string{"fig7/completion-by-workload.svg", "fig7/completion-vs-lower-bound.png", "fig7/tables.txt", "fig6/ablations.csv"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Error(err)
		}
	}
	var m reproduce.Manifest
	b, err := os.ReadFile(filepath.Join(dir, "reproduce.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Figures) != 2 || len(m.Inputs) != 1 || m.Inputs[0].Role != "demand" || m.Tool == "" {
		t.Errorf("manifest: %d figures, inputs %+v, tool %q", len(m.Figures), m.Inputs, m.Tool)
	}
}

// TestReproduceFakeCalibration: without --calibration, Figure 13 runs on a fake calibration the
// command makes, says so, and records it (with its hash) among the inputs.
func TestReproduceFakeCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("starts fake GPU workers")
	}
	unsetCUDAVisible(t)
	t.Setenv(envBeCLI, cliRole) // the workers the fake calibration starts are this test binary
	dir := t.TempDir()
	out, code, err := cli(t, "reproduce", "fig13", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	for _, want := range []string{"fake calibration", "Figure 13 (Tetris §4.2)", "α (fixed cost per transfer)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "reproduce.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m reproduce.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Inputs) != 1 || m.Inputs[0].Role != "calibration" || len(m.Inputs[0].SHA256) != 64 {
		t.Errorf("manifest inputs %+v: want the fake calibration with its hash", m.Inputs)
	}
	// The fake's planted α is 3 µs (±5 % per pair): the fit must find it.
	a, ok := m.Figures[0].Value("alpha")
	if !ok || a < 2.7e-6 || a > 3.3e-6 {
		t.Errorf("fitted median α %g, want about 3 µs", a)
	}
}

// TestReproduceMeasured: Figure 10 timed by a measured table makes no fake calibration and
// records the table among the inputs.
func TestReproduceMeasured(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "measured.csv")
	csv := "src,dst,bytes,seconds\n"
	for s := range 8 {
		for d := range 8 {
			if s != d {
				csv += fmt.Sprintf("%d,%d,1000000,%g\n", s, d, 1e-5*(1+float64((s+d)%3)/10))
			}
		}
	}
	if err := os.WriteFile(table, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, err := cli(t, "reproduce", "fig10", "--measured", table, "--matrix", "3", "--out", filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	if !strings.Contains(out, "measured times from "+table) || !strings.Contains(out, "Figure 10(a) (Tetris §4.2)") || strings.Contains(out, "fake") {
		t.Errorf("output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", fakeCalibrationName)); err == nil {
		t.Error("a fake calibration was made though --measured times Figure 10")
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "reproduce.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m reproduce.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Inputs) != 2 || m.Inputs[1].Role != "measured" || len(m.Inputs[1].SHA256) != 64 {
		t.Errorf("inputs %+v", m.Inputs)
	}
}
