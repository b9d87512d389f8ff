package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"
	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
)

// cliRole makes the test binary act as the tetris-hil binary, so that gpu-bench can start it as
// its workers (os.Executable() is the test binary here); tests set envBeCLI to cliRole for it.
const (
	cliRole  = "cli"
	envBeCLI = workertest.Env
)

func TestMain(m *testing.M) {
	workertest.Main(m, map[string]workertest.Role{
		// As main does: the first SIGINT cancels the context (a calibration keeps its partial file).
		cliRole: func(args []string) int {
			ctx, stop := signalContext(context.Background())
			defer stop()
			code := run(ctx, args)
			if path := os.Getenv(envHWMFile); path != "" {
				writePeakMemory(path)
			}
			return code
		},
		signalRole: signalTwice,
	})
}

// unsetCUDAVisible removes CUDA_VISIBLE_DEVICES for the test (t.Setenv restores it afterwards).
func unsetCUDAVisible(t *testing.T) {
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	os.Unsetenv("CUDA_VISIBLE_DEVICES")
}

func TestDevicesFakeJSONGolden(t *testing.T) {
	unsetCUDAVisible(t)
	out, code, err := cli(t, "devices", "--fake", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	goldenfile.Check(t, filepath.Join("testdata", "devices", "fake8.golden.json"), []byte(out))
	var inv nvml.Inventory
	if err := json.Unmarshal([]byte(out), &inv); err != nil {
		t.Fatal(err)
	}
	if len(inv.GPUs) != 8 || len(inv.Pairs) != 28 || inv.CUDAVisibleDevices != nil {
		t.Errorf("%d GPUs, %d pairs, CUDA_VISIBLE_DEVICES %v", len(inv.GPUs), len(inv.Pairs), inv.CUDAVisibleDevices)
	}
}

func TestDevicesFakeTable(t *testing.T) {
	unsetCUDAVisible(t)
	out, code, err := cli(t, "devices", "--fake", "--fake-gpus", "4")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	for _, want := range []string{"4 GPUs", "GPU0  X     NV18", "00000000:5d:00.0", "Legend:", "Fake CPU affinity"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "GPU4") {
		t.Errorf("--fake-gpus 4 printed a fifth GPU:\n%s", out)
	}
}

// TestDevicesCheckWorkers starts a pinned worker per fake GPU (this test binary acting as
// tetris-hil worker) and checks the report.
func TestDevicesCheckWorkers(t *testing.T) {
	unsetCUDAVisible(t)
	t.Setenv(envBeCLI, cliRole)
	out, code, err := cli(t, "devices", "--fake", "--fake-gpus", "2", "--check-workers")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	if !strings.Contains(out, "Worker pinning (fake engine)") || strings.Count(out, " ok\n") != 2 {
		t.Errorf("output:\n%s", out)
	}
}

// TestDevicesWithoutNVIDIA runs where there is no NVIDIA driver (this machine, CI): the command
// must fail, name what is missing and suggest --fake.
func TestDevicesWithoutNVIDIA(t *testing.T) {
	if lib, err := nvml.Open(nvml.Options{}); err == nil {
		lib.Close()
		t.Skip("this machine has NVML and a GPU")
	}
	_, code, err := cli(t, "devices")
	if code == 0 || err == nil {
		t.Fatalf("devices without NVIDIA software exited %d", code)
	}
	for _, want := range []string{"libnvidia-ml.so.1", "--fake"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not mention %q", err, want)
		}
	}
}

func TestGPUCommandsUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"devices", "--fake", "--fake-gpus", "0"}, "--fake-gpus 0"},
		{[]string{"gpu-bench", "--fake", "--copy", "dma"}, "--copy"},
		{[]string{"gpu-bench", "--fake", "--min", "1MiB", "--max", "4KiB"}, "--min 1MiB --max 4KiB"},
		{[]string{"gpu-bench", "--fake", "--fake-bandwidth", "370"}, "--fake-bandwidth"},
		{[]string{"gpu-bench", "--fake", "--reps", "0"}, "--reps 0"},
		{[]string{"gpu-bench", "--fake", "--timeout", "0s"}, "--timeout"},
	}
	for _, tt := range tests {
		_, code, err := cli(t, tt.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: exit %d, %v; want exit 2 naming %q", tt.args, code, err, tt.want)
		}
	}
}

// TestGPUBenchFake runs the real binary path: gpu-bench starts two worker processes (this test
// binary acting as tetris-hil worker) and prints the sweep.
func TestGPUBenchFake(t *testing.T) {
	unsetCUDAVisible(t)
	t.Setenv(envBeCLI, cliRole) // inherited by the workers gpu-bench starts
	dir := t.TempDir()
	out, code, err := cli(t, "gpu-bench", "--fake", "--src", "2", "--dst", "6", "--copy", "sm",
		"--max", "1MiB", "--reps", "9", "--fake-alpha", "10us", "--fake-bandwidth", "100GB/s",
		"--json", filepath.Join(dir, "r.json"))
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	if !strings.Contains(out, "GPU 2 -> GPU 6: SM copies via ipc, engine fake") || !strings.Contains(out, "1 MiB") {
		t.Errorf("table:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res bench.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 9 || res.Kind != "sm" || len(res.Rows[8].Times) != 9 {
		t.Fatalf("result: %d rows, kind %s", len(res.Rows), res.Kind)
	}
	// 1 MiB at about 100 GB/s plus about 10 µs: about 20.5 µs (pairs lie within ±5 % of both).
	if m := res.Rows[8].Median.Seconds(); m < 19e-6 || m > 22.5e-6 {
		t.Errorf("1 MiB median %.3g s, want about 20.5 µs", m)
	}
}

// TestWorkerCommandIsHidden checks the harness's worker subcommand exists but stays out of help.
func TestWorkerCommandIsHidden(t *testing.T) {
	out, _, _ := cli(t, "--help")
	if regexp.MustCompile(`(?m)^\s+worker\s`).MatchString(out) || !strings.Contains(out, "gpu-bench") || !strings.Contains(out, "devices") {
		t.Errorf("help:\n%s", out)
	}
	cmd := exec.Command(os.Args[0], "worker", "--engine", "nope")
	cmd.Env = append(os.Environ(), envBeCLI+"="+cliRole)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err == nil || !strings.Contains(stdout.String(), "opening nope engine on GPU 0") {
		t.Errorf("worker with a bad engine: %v, stdout %q; want a failed hello naming the engine", err, stdout.String())
	}
}
