package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/hil"
)

// --process-per-gpu runs the compiled programs in worker processes (this test binary as
// tetris-hil worker), one per GPU, without and with the fake switch controller: compiled either
// way, each GPU's clock offset in the summary, live never ahead of the prediction without a
// controller, and verify accepting the measured timeline.
func TestReplayProcessPerGPU(t *testing.T) {
	unsetCUDAVisible(t)
	t.Setenv(envBeCLI, cliRole)
	wiring := filepath.Join("..", "..", "examples", "wiring-8x8-serial.yaml")
	for _, extra := range [][]string{nil, {"--wiring", wiring}} {
		dir := filepath.Join(t.TempDir(), "run")
		args := append([]string{"replay", "--fake", "--process-per-gpu", "--fake-gpus", "2", "--gpu-map", "0,0,0,0,1,1,1,1",
			"--allow-shared-gpu", "--unpinned", "--matrix", "0", "--algo", "tetris,bvn", "--bandwidth", "8Gbps", "--reconfig", "1ms", "--out", dir}, extra...)
		out, code, err := cli(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %v\n%s", extra, code, err, out)
		}
		if !strings.Contains(out, "execution: compiled") {
			t.Errorf("%v: output lacks the compiled execution:\n%s", extra, out)
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
		for _, r := range s.Runs {
			// Without a controller every copy and delay is the model's, so live cannot beat the
			// prediction; with one, the live commands group the changes requested at one
			// instant, which real stamps rarely share, and a queue of other commands can end
			// sooner or later than the predicted one.
			if r.Execution != hil.ExecCompiled || len(r.ClockOffsets) != 2 || extra == nil && r.LiveOverPredicted < 1-1e-9 || r.Commands == 0 {
				t.Errorf("%v: %s: execution %q, clocks %+v, live/predicted %v, %d commands", extra, r.Algorithm, r.Execution, r.ClockOffsets, r.LiveOverPredicted, r.Commands)
			}
		}
		if len(s.Runs) != 2 || (extra != nil) != (m.Wiring != nil) {
			t.Errorf("%v: %d runs, wiring %+v", extra, len(s.Runs), m.Wiring)
		}
		got, code, err := cli(t, "verify", filepath.Join(dir, m.Runs[0].Schedule), "--matrix", "0", "--timeline", filepath.Join(dir, m.Runs[0].Live))
		if code != 0 {
			t.Errorf("%v: verify --timeline of the live record: exit %d: %v\n%s", extra, code, err, got)
		}
	}
	_, code, err := cli(t, "replay", "--process-per-gpu", "--matrix", "0", "--out", filepath.Join(t.TempDir(), "r"))
	if code != 2 || err == nil || !strings.Contains(err.Error(), "--process-per-gpu: only with --fake") {
		t.Errorf("--process-per-gpu without --fake: exit %d, %v", code, err)
	}
}
