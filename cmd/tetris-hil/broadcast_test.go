package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/switchctl/benchfile"
)

func TestBroadcastGolden(t *testing.T) {
	out, code, err := cli(t, "broadcast", "--nodes", "64", "--tc", "5ms", "--tf", "500ns", "--tb", "50us", "--size", "1000B", "--tc-half")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	goldenfile.Check(t, "testdata/broadcast/paper64.golden.txt", []byte(out))
}

func TestBroadcastSweepGolden(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "sweep.svg")
	js := filepath.Join(dir, "sweep.json")
	out, code, err := cli(t, "broadcast", "sweep", "--nodes", "4:96", "--tc", "5ms", "--tf", "500ns", "--tb", "50us", "--size", "1000B",
		"--plot", svg, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	goldenfile.Check(t, "testdata/broadcast/sweep-paper-4-96.golden.txt", []byte(strings.ReplaceAll(out, dir, "DIR")))
	for _, want := range []string{"N < 68", "N < 10", "N < 56", "N < 58"} {
		if !strings.Contains(out, want) {
			t.Errorf("crossover table lacks %q", want)
		}
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("plot: %v", err)
	}
	var rep sweepReport
	b, err := os.ReadFile(js)
	if err != nil || json.Unmarshal(b, &rep) != nil || rep.Version != 1 || len(rep.Points) != 6*5 || len(rep.Crossovers) != 3 {
		t.Fatalf("json: %v, %d points, %d crossovers", err, len(rep.Points), len(rep.Crossovers))
	}
}

// --json - prints the list the issue asks for: algorithm, nodes, simulated and closed-form seconds.
func TestBroadcastJSON(t *testing.T) {
	stdout, _, code, err := runCLI(t, "broadcast", "--algo", "naive,ring", "--nodes", "16", "--json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	var pts []map[string]any
	if err := json.Unmarshal([]byte(stdout), &pts); err != nil || len(pts) != 2 {
		t.Fatalf("%v\n%s", err, stdout)
	}
	for _, pt := range pts {
		for _, k := range []string{"algorithm", "nodes", "simulated_seconds", "closed_form_seconds"} {
			if _, ok := pt[k]; !ok {
				t.Errorf("%v lacks %s", pt, k)
			}
		}
		if s, c := pt["simulated_seconds"].(float64), pt["closed_form_seconds"].(float64); math.Abs(s-c) > 1e-12*c {
			t.Errorf("%s: simulated %v, closed %v", pt["algorithm"], pt["simulated_seconds"], pt["closed_form_seconds"])
		}
	}
}

// T_r and T_w from a switch bench file: with T_r = 1 ms the ring's 15 requests queue at the
// control station and the time is 15·T_r + T_w + S·T_f + S·T_d.
func TestBroadcastSwitchBench(t *testing.T) {
	bench := filepath.Join(t.TempDir(), "bench.json")
	b, err := (&benchfile.File{Version: benchfile.Version, Backend: "fake", TRSeconds: 1e-3, TWSeconds: 5e-3}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bench, b, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code, err := runCLI(t, "broadcast", "--algo", "ring", "--nodes", "16", "--tb", "100ns", "--switch-bench", bench, "--json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	var pts []struct {
		Sim float64 `json:"simulated_seconds"`
	}
	if err := json.Unmarshal([]byte(stdout), &pts); err != nil || len(pts) != 1 {
		t.Fatalf("%v\n%s", err, stdout)
	}
	want := 15e-3 + 5e-3 + 1024*10e-9 + 1024*90e-9
	if d := pts[0].Sim - want; d > 1e-15 || d < -1e-15 {
		t.Errorf("simulated %.17g, want %.17g", pts[0].Sim, want)
	}
}

func TestBroadcastUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version": 1, "t_r_seconds": -1, "t_w_seconds": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"broadcast", "--nodes", "1"}, "--nodes 1"},
		{[]string{"broadcast", "--algo", "bus"}, "--algo \"bus\""},
		{[]string{"broadcast", "--tc", "5"}, "--tc \"5\""},
		{[]string{"broadcast", "--tc", "5ms", "--tr", "1us", "--tw", "1ms"}, "--tc"},
		{[]string{"broadcast", "--tr", "1us"}, "--tr"},
		{[]string{"broadcast", "--tb", "1ns", "--tf", "10ns"}, "--tb \"1ns\""},
		{[]string{"broadcast", "--tf", "0"}, "--tf \"0\""},
		{[]string{"broadcast", "--size", "0"}, "--size \"0\""},
		{[]string{"broadcast", "--size", "1KiB", "--header", "2KiB"}, "--header \"2KiB\""},
		{[]string{"broadcast", "--switch-bench", "missing.json"}, "missing.json"},
		{[]string{"broadcast", "--switch-bench", bad}, "t_r_seconds"},
		{[]string{"broadcast", "--switch-bench", bad, "--tc", "1ms"}, "--switch-bench"},
		{[]string{"broadcast", "sweep", "--nodes", "64:4"}, "--nodes \"64:4\""},
		{[]string{"broadcast", "sweep", "--nodes", "8,4"}, "--nodes \"8,4\""},
		{[]string{"broadcast", "sweep", "--nodes", "1:8"}, "--nodes \"1:8\""},
		{[]string{"broadcast", "sweep", "--nodes", "4:8", "--plot", "out.pdf"}, "--plot \"out.pdf\""},
		{[]string{"broadcast", "sweep", "--nodes", "4:8", "--json", "/nonexistent/dir/x.json"}, "--json"},
	} {
		out, code, err := cli(t, tc.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, %v; want exit 2 naming %q\n%s", tc.args, code, err, tc.want, out)
		}
	}
}
