package hil

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/standin"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"

	// The workers of this test binary run the cuda engine on the stand-in libcuda.so.1.
	_ "github.com/tetris-hil/tetris-hil/gpu/transfer/cudaengine"
)

// Endpoints that import from each other (0 → 1 and 1 → 0, a cycle 0 → 1 → 2 → 0) on the stand-in
// driver: at Close, every importer closes its IPC buffer before its exporter frees it.
func TestWorkersTeardownOnStandIn(t *testing.T) {
	standin.Preload(t, standin.NVML)
	cudaLib := standin.Build(t, standin.CUDA)
	lib, err := nvml.Open(nvml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	log := filepath.Join(t.TempDir(), "cuda.log")
	command, env := workertest.Command(workertest.WorkerRole)
	env = append(env, "LD_LIBRARY_PATH="+standin.Dir(cudaLib), "STANDIN_CUDA_LOG="+log)
	cfg := bench.Config{Lib: lib, Engine: "cuda", Command: command, Env: env, Timeout: 10 * time.Second, Unpinned: true}
	pairs := map[[2]int]int64{{0, 1}: 4096, {1, 0}: 4096, {1, 2}: 8192, {2, 0}: 8192}
	ws, err := StartWorkers(context.Background(), cfg, []int{0, 1, 2}, pairs, transfer.CE)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Via["ipc"] != 4 {
		t.Errorf("buffers via %v, want 4 by IPC", ws.Via)
	}
	if _, _, err := ws.Transfer(context.Background(), 1, 2, 8192); err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	bad, freed := standin.IPCTeardown(standin.Log(t, log))
	for _, b := range bad {
		t.Error(b)
	}
	if freed != 4 {
		t.Errorf("%d exported buffers opened and freed, want 4", freed)
	}
}
