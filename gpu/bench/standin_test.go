package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/standin"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"

	// The workers of this test binary run the cuda engine on the stand-in libcuda.so.1.
	_ "github.com/tetris-hil/tetris-hil/gpu/transfer/cudaengine"
)

// standInConfig is a sweep through real NVML and real cuda-engine workers, both the stand-in
// driver: NVML loaded into this process, libcuda.so.1 into the workers through LD_LIBRARY_PATH.
func standInConfig(t *testing.T, extraEnv ...string) (Config, string) {
	t.Helper()
	standin.Preload(t, standin.NVML)
	cudaLib := standin.Build(t, standin.CUDA)
	lib, err := nvml.Open(nvml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	log := filepath.Join(t.TempDir(), "cuda.log")
	command, env := workertest.Command(workertest.WorkerRole)
	env = append(env, "LD_LIBRARY_PATH="+standin.Dir(cudaLib), "STANDIN_CUDA_LOG="+log)
	return Config{Lib: lib, Src: 2, Dst: 5, Sizes: []int64{4096, 1 << 20}, Reps: 3, Warmup: 1, Kind: transfer.CE,
		Engine: "cuda", Command: command, Env: append(env, extraEnv...), Timeout: 10 * time.Second}, log
}

// A sweep from GPU 2 to GPU 5 over CUDA IPC between two worker processes, with the stand-in's
// simulated times (2000 ns + bytes/50), and the importer closing before the exporter frees.
func TestSweepOnStandIn(t *testing.T) {
	cfg, log := standInConfig(t)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Via != "ipc" || len(res.Rows) != 2 {
		t.Fatalf("via %s, %d rows", res.Via, len(res.Rows))
	}
	for _, r := range res.Rows {
		want := time.Duration(2000 + r.Bytes/50)
		if d := r.Median - want; d > time.Nanosecond || d < -time.Nanosecond {
			t.Errorf("%d bytes: median %v, want the stand-in's %v", r.Bytes, r.Median, want)
		}
		if r.After.TemperatureC != 42 || len(r.After.Unavailable) != 0 {
			t.Errorf("%d bytes: GPU 2's telemetry %+v, want the stand-in's 42 C", r.Bytes, r.After)
		}
	}
	bad, freed := standin.IPCTeardown(standin.Log(t, log))
	if len(bad) > 0 || freed != 1 {
		t.Errorf("teardown: %d exported buffers freed, violations %q", freed, bad)
	}
}

// A mapping that fails in the importer (as in a container) falls back to a buffer the sender
// allocates on the receiver's GPU.
func TestSweepFallsBackOnStandIn(t *testing.T) {
	cfg, _ := standInConfig(t, "STANDIN_CUDA_IPC_OPEN_FAIL=205")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Via != "peer" {
		t.Errorf("via %s, want peer", res.Via)
	}
}

// Pinning through real NVML (nvmlDeviceSetCpuAffinity of the stand-in binds the calling thread to
// the GPU's CPU, as the real one does): every worker thread runs where NVML says.
func TestCheckPinningOnStandIn(t *testing.T) {
	cfg, _ := standInConfig(t)
	ps, err := CheckPinning(context.Background(), cfg, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	avail, _ := affinity.Available()
	for i, p := range ps {
		want := affinity.Set{avail[i%len(avail)]}.String()
		if !p.OK || p.Want != want || p.Got != want || p.Threads < 2 {
			t.Errorf("GPU %d: %+v, want every thread on CPU %s", p.GPU, p, want)
		}
	}
	var b strings.Builder
	if err := WritePinning(&b, ps); err != nil || strings.Count(b.String(), " ok\n") != 2 {
		t.Errorf("pinning table:\n%s", b.String())
	}
}
