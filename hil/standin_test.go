package hil

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/standin"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"
	"github.com/tetris-hil/tetris-hil/schedules"

	// The workers of this test binary run the cuda engine on the stand-in libcuda.so.1, and
	// the compiled programs on it as stream programs.
	_ "github.com/tetris-hil/tetris-hil/gpu/program/cudaprog"
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

// A compiled replay across four cuda-engine worker processes on the stand-in driver (two
// endpoints per GPU): every worker runs its endpoints as stream programs over the shared file,
// copies to another GPU go into buffers its worker exported for the run, and each GPU's clock
// (off by its own thousands of seconds on the stand-in) is put on CLOCK_MONOTONIC by its
// measured offset. The live timelines verify, no circuit starts before the emulator says it
// can with the stand-in's copy times, and the exporters free only after the importers closed.
func TestProcessDeviceOnStandIn(t *testing.T) {
	standin.Preload(t, standin.NVML)
	cudaLib := standin.Build(t, standin.CUDA)
	lib, err := nvml.Open(nvml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	log := filepath.Join(t.TempDir(), "cuda.log")
	const skew = int64(1000 * time.Second)
	command, env := workertest.Command(workertest.WorkerRole)
	env = append(env, "LD_LIBRARY_PATH="+standin.Dir(cudaLib), "STANDIN_CUDA_LOG="+log, fmt.Sprintf("STANDIN_CUDA_CLOCK_SKEW=%d", skew))
	cfg := bench.Config{Lib: lib, Engine: "cuda", Command: command, Env: env, Timeout: 20 * time.Second, Unpinned: true, Kind: transfer.CE}
	dev, err := StartProcessDevice(context.Background(), cfg, fourGPUs, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The stand-in's copy time, 2000 ns + bytes/50, as the prediction's model.
	var standinCopy standinCopyModel
	rc := emulator.ParallelReconfig(10e-6)
	for _, j := range plan(t, 0, "tetris", "bvn") {
		s := j.Schedule
		live, err := ReplayCompiled(context.Background(), s, dev, rc)
		if err != nil {
			t.Fatalf("%s: %v", s.Algorithm, err)
		}
		_, pred, err := emulator.Run(context.Background(), s, nil, emulator.Config{Transfer: standinCopy, Reconfig: rc})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range live.Timeline.Circuits {
			p := pred.Circuits[i]
			if c.TransmitStart < p.TransmitStart-1e-9 || c.End < p.End-1e-9 {
				t.Errorf("%s: circuit %d ran %g..%g s, before the prediction %g..%g s", s.Algorithm, i, c.TransmitStart, c.End, p.TransmitStart, p.End)
			}
		}
		if vs := schedules.VerifyTimeline(s, live.Timeline); len(vs) > 0 {
			t.Errorf("%s: the live timeline violates %v", s.Algorithm, vs[0])
		}
		if live.Execution != ExecCompiled || live.Timeline.Completion() > 10 {
			t.Errorf("%s: execution %q, live %g s", s.Algorithm, live.Execution, live.Timeline.Completion())
		}
		for _, o := range dev.ClockOffsets() {
			if want := -(int64(o.GPU)+1)*skew - 777; o.OffsetNS-want < -o.UncertaintyNS || o.OffsetNS-want > o.UncertaintyNS {
				t.Errorf("GPU %d: offset %d ± %d ns, the stand-in's clock is off by %d ns", o.GPU, o.OffsetNS, o.UncertaintyNS, want)
			}
		}
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	bad, freed := standin.IPCTeardown(standin.Log(t, log))
	for _, b := range bad {
		t.Error(b)
	}
	if freed == 0 {
		t.Error("no exported buffer was opened and freed: the copies across GPUs did not go through IPC")
	}
}

// standinCopyModel is the stand-in driver's copy time: 2000 ns + bytes/50.
type standinCopyModel struct{}

func (standinCopyModel) Name() string { return "stand-in copies" }
func (standinCopyModel) Seconds(_, _ int, b int64) (float64, error) {
	return (2000 + float64(b)/50) * 1e-9, nil
}
func (m standinCopyModel) MinSeconds(src, dst int, b int64) (float64, error) {
	return m.Seconds(src, dst, b)
}
