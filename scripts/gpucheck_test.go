// Package scripts holds the tests of the shell scripts next to it.
package scripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tetris-hil/tetris-hil/gpu/standin"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	rc := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(rc)
}

// binary builds tetris-hil once for the tests (CGO_ENABLED=0, as for a GPU machine).
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs the device check script")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "gpucheck-"); buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "tetris-hil"), "../cmd/tetris-hil")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "tetris-hil")
}

// gpuCheck runs gpu_check.sh with args and the environment env added; it returns the exit
// status, the log the script wrote and its list of failed steps.
func gpuCheck(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("bash", append([]string{"gpu_check.sh"}, args...)...)
	cmd.Env = append(os.Environ(), append([]string{"BIN=" + bin, "OUT=" + out, "REPLAY=0", "SIZES=4KiB..1MiB", "REPS=3"}, env...)...)
	b, err := cmd.CombinedOutput()
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(filepath.Join(out, "gpu_check.log"))
	if len(log) == 0 {
		log = b
	}
	m := regexp.MustCompile(`failed steps: (.*)`).FindStringSubmatch(string(log))
	failed := ""
	if m != nil {
		failed = m[1]
	}
	return rc, string(log), failed
}

var steps = []string{"devices", "devices-json", "pinning", "ipc-calibrate-ce", "ipc-show-ce", "ipc-calibrate-sm", "ipc-show-sm", "lock-clocks"}

// On the fake server every step runs and passes, the replay check too, each leaving its exit
// status in the log.
func TestGPUCheckFake(t *testing.T) {
	rc, log, failed := gpuCheck(t, binary(t), []string{"REPLAY=1"}, "--fake")
	if rc != 0 || failed != "none" {
		t.Fatalf("exit %d, failed %q\n%s", rc, failed, log)
	}
	for _, s := range steps {
		if !strings.Contains(log, "=== "+s+": exit 0") {
			t.Errorf("no passing %s step in the log", s)
		}
	}
	if !strings.Contains(log, "=== replay-check: exit 0") || !strings.Contains(log, "all steps passed") {
		t.Errorf("the replay check did not pass:\n%s", log)
	}
	if !strings.Contains(log, "=== nvidia-smi: skipped (--fake)") {
		t.Errorf("skips not reported:\n%s", log)
	}
}

// On the stand-in driver (real NVML and CUDA bindings, real worker processes) the real-GPU
// path runs: the calibrations' copies go through CUDA IPC between two processes, and where the
// IPC mapping fails the check says so instead of passing on the peer path's numbers.
func TestGPUCheckOnStandInDriver(t *testing.T) {
	bin := binary(t)
	libs := standin.Dir(standin.Build(t, standin.NVML)) + ":" + standin.Dir(standin.Build(t, standin.CUDA))
	_, smi := exec.LookPath("nvidia-smi")
	rc, log, failed := gpuCheck(t, bin, []string{"LD_LIBRARY_PATH=" + libs})
	if smi == nil {
		t.Logf("nvidia-smi is installed: its steps may pass")
	} else if rc != 1 || failed != "nvidia-smi(rc=127) nvidia-smi-topo(rc=127) clocks-after(rc=127)" {
		t.Errorf("exit %d, failed %q; want 1 and only the nvidia-smi steps (no nvidia-smi here)\n%s", rc, failed, log)
	}
	for _, s := range steps {
		if !strings.Contains(log, "=== "+s+": exit 0") {
			t.Errorf("no passing %s step in the log", s)
		}
	}
	for _, k := range []string{"ce", "sm"} {
		if !regexp.MustCompile(`=== ipc-` + k + `: [1-9]\d* IPC buffers opened by a second process, 0 fallbacks`).MatchString(log) {
			t.Errorf("ipc-%s: no IPC buffer opened by a second process in the log", k)
		}
	}

	_, log, failed = gpuCheck(t, bin, []string{"LD_LIBRARY_PATH=" + libs, "STANDIN_CUDA_IPC_OPEN_FAIL=205"})
	for _, k := range []string{"ipc-ce", "ipc-sm"} {
		if !strings.Contains(" "+failed+" ", " "+k+" ") {
			t.Errorf("with the IPC mapping failing, %s is not among the failed steps %q", k, failed)
		}
	}
	if !strings.Contains(log, "CUDA IPC unavailable, copies go by the peer path") {
		t.Errorf("the log does not say IPC fell back:\n%s", log)
	}
}

// Without a GPU or a driver the check fails clearly: each step says what is missing.
func TestGPUCheckWithoutDriver(t *testing.T) {
	if standin.Compiler() == "" {
		t.Skip("no C compiler")
	}
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"} {
		if _, err := os.Stat(filepath.Join(dir, "libnvidia-ml.so.1")); err == nil {
			t.Skip("an NVIDIA driver is installed here")
		}
	}
	rc, log, failed := gpuCheck(t, binary(t), nil)
	if rc != 1 || !strings.Contains(failed, "devices(rc=1)") || !strings.Contains(log, "libnvidia-ml.so.1 not found") || !strings.Contains(log, "run with --fake") {
		t.Errorf("exit %d, failed %q; want the devices step failing, naming libnvidia-ml.so.1 and --fake\n%s", rc, failed, log)
	}
	rc, log, _ = gpuCheck(t, filepath.Join(t.TempDir(), "absent"), nil)
	if rc != 2 || !strings.Contains(log, "no executable") {
		t.Errorf("without the binary: exit %d\n%s", rc, log)
	}
}
