package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/gpu/standin"
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
		m, s := readRunDir(t, dir)
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
	_, code, err := cli(t, "replay", "--process-per-gpu", "--fake", "--virtual", "--matrix", "0", "--out", filepath.Join(t.TempDir(), "r"))
	if code != 2 || err == nil || !strings.Contains(err.Error(), "--process-per-gpu: not with --virtual") {
		t.Errorf("--process-per-gpu --virtual: exit %d, %v", code, err)
	}
	// Without --fake it runs on the GPUs; without one, it fails saying how to replay without.
	if _, err := os.Stat("/dev/nvidiactl"); err != nil {
		_, code, err := cli(t, "replay", "--process-per-gpu", "--matrix", "0", "--out", filepath.Join(t.TempDir(), "r"))
		if code == 0 || err == nil || !strings.Contains(err.Error(), "--fake") {
			t.Errorf("--process-per-gpu without a GPU: exit %d, %v", code, err)
		}
	}
}

// Without --fake, --process-per-gpu runs the compiled programs as CUDA stream programs, one
// worker process per GPU: here on the stand-in NVIDIA libraries (NVML and libcuda, whose GPUs'
// clocks are each off by their own thousands of seconds), with the CLI itself a child process
// that finds them through LD_LIBRARY_PATH. The run is compiled, its clock offsets are the
// stand-in's skews, and verify accepts the measured timelines.
func TestReplayProcessPerGPUOnStandIn(t *testing.T) {
	unsetCUDAVisible(t)
	libs := standin.Dir(standin.Build(t, standin.NVML)) + ":" + standin.Dir(standin.Build(t, standin.CUDA))
	for _, kind := range []string{"ce", "sm"} {
		dir := filepath.Join(t.TempDir(), "run")
		cmd := exec.Command(os.Args[0], "replay", "--process-per-gpu", "--gpu-map", "0,0,0,0,1,1,1,1", "--allow-shared-gpu", "--unpinned",
			"--matrix", "0", "--algo", "tetris,bvn", "--reconfig", "10us", "--copy", kind, "--out", dir)
		cmd.Env = append(os.Environ(), envBeCLI+"="+cliRole, "LD_LIBRARY_PATH="+libs, "STANDIN_CUDA_CLOCK_SKEW=1000000000000")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", kind, err, out)
		}
		if !strings.Contains(string(out), "execution: compiled") {
			t.Errorf("%s: output lacks the compiled execution:\n%s", kind, out)
		}
		m, s := readRunDir(t, dir)
		for _, r := range s.Runs {
			if r.Execution != hil.ExecCompiled || len(r.ClockOffsets) != 2 {
				t.Fatalf("%s: %s: execution %q, clocks %+v", kind, r.Algorithm, r.Execution, r.ClockOffsets)
			}
			for _, o := range r.ClockOffsets {
				if want := -(int64(o.GPU)+1)*1e12 - 777; o.OffsetNS-want < -o.UncertaintyNS || o.OffsetNS-want > o.UncertaintyNS {
					t.Errorf("%s: %s: GPU %d's offset %d ± %d ns, the stand-in's clock is off by %d ns", kind, r.Algorithm, o.GPU, o.OffsetNS, o.UncertaintyNS, want)
				}
			}
		}
		for _, run := range m.Runs {
			if b, err := os.ReadFile(filepath.Join(dir, run.Live)); err != nil || !strings.Contains(string(b), "compiled stream programs in worker processes") {
				t.Errorf("%s: %s does not say the copies were the GPUs' stream programs (%v)", kind, run.Live, err)
			}
			got, code, err := cli(t, "verify", filepath.Join(dir, run.Schedule), "--matrix", "0", "--timeline", filepath.Join(dir, run.Live))
			if code != 0 {
				t.Errorf("%s: verify --timeline %s: exit %d: %v\n%s", kind, run.Live, code, err, got)
			}
		}
	}
}
