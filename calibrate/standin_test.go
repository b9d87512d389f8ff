package calibrate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/standin"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"

	// The workers of this test binary run the cuda engine on the stand-in libcuda.so.1.
	_ "github.com/tetris-hil/tetris-hil/gpu/transfer/cudaengine"
)

// TestTeardownOnStandIn calibrates two GPUs and one's loopback with the cuda engine in real
// worker processes on the stand-in driver (NVML in this process, CUDA in the workers) and checks
// the teardown in the stand-in's log of every process: each exported buffer is closed by every
// process that opened it before its exporter frees it (cuda.h leaves the other order undefined).
// Senders import from each other (0 → 1 and 1 → 0) and from the loopback worker, so no order of
// stopping processes alone can satisfy it.
func TestTeardownOnStandIn(t *testing.T) {
	standin.Preload(t, standin.NVML)
	cudaLib := standin.Build(t, standin.CUDA)
	lib, err := nvml.Open(nvml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	inv, err := lib.Inventory(nil)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "cuda.log")
	command, env := workertest.Command(workertest.WorkerRole)
	env = append(env, "LD_LIBRARY_PATH="+standin.Dir(cudaLib), "STANDIN_CUDA_LOG="+log)
	cfg := Config{
		Plan: model.Plan{Pairs: [][2]int{{0, 1}, {1, 0}, {1, 1}}, Sizes: []int64{4096, 16384, 65536}, Warmup: 1, Reps: 3,
			Copy: "ce", Patterns: []string{model.Isolated}, VerifyEvery: 1, Engine: "cuda"},
		Workers:     bench.Config{Lib: lib, Command: command, Env: env, Timeout: 10 * time.Second},
		Inventory:   InventoryFrom(inv, "test"),
		StartMargin: time.Millisecond,
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Calibration.Pairs); n != 3 {
		t.Errorf("%d pairs calibrated, want 3", n)
	}
	lines := standin.Log(t, log)
	bad, freed := standin.IPCTeardown(lines)
	for _, b := range bad {
		t.Error(b)
	}
	if freed < 3 {
		t.Errorf("%d exported buffers opened and freed, want 3 (one per receiver)\n%s", freed, strings.Join(lines, "\n"))
	}
}
