package hil

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/program"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// fourGPUs puts the 8 endpoints two to a GPU, so that every worker process runs two endpoints
// and most dependencies cross processes.
var fourGPUs = []int{0, 0, 1, 1, 2, 2, 3, 3}

// startProcessDevice starts fake-engine workers (this test binary), one per GPU of gpuOf.
func startProcessDevice(t testing.TB, gpuOf []int) *ProcessDevice {
	t.Helper()
	return startProcessDeviceWith(t, gpuOf, FakeTransferModel(nvlink, gpuOf).Seconds)
}

func startProcessDeviceWith(t testing.TB, gpuOf []int, dur func(int, int, int64) (float64, error)) *ProcessDevice {
	t.Helper()
	lib, err := nvml.Open(nvml.Options{Fake: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	command, env := workertest.Command(workertest.WorkerRole)
	cfg := bench.Config{Lib: lib, Engine: "fake", EngineOptions: nvlink.String(), Command: command, Env: env,
		Timeout: 20 * time.Second, Unpinned: true}
	dev, err := StartProcessDevice(context.Background(), cfg, gpuOf, dur, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dev
}

// Compiled across worker processes (two endpoints per process), every algorithm (on Beneš and
// crossbar, Tetris also in barrier rounds) keeps the walker's semantics in real time: no circuit starts or ends before the emulator's prediction,
// copies last their modelled time, live / predicted ≥ 1, and the live timeline verifies.
func TestProcessDeviceAgreesWithEmulator(t *testing.T) {
	dev := startProcessDevice(t, fourGPUs)
	tm := FakeTransferModel(nvlink, fourGPUs)
	for _, rc := range []emulator.ReconfigModel{emulator.ParallelReconfig(10e-6), emulator.ControllerReconfig(8e-6, 2e-6)} {
		for _, s := range processSchedules(t) {
			live, err := ReplayCompiled(context.Background(), s, dev, rc)
			if err != nil {
				t.Fatalf("%s, %s: %v", s.Algorithm, rc.Name(), err)
			}
			_, pred, err := emulator.Run(context.Background(), s, nil, emulator.Config{Transfer: tm, Reconfig: rc})
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range live.Timeline.Circuits {
				p := pred.Circuits[i]
				want, _ := tm.Seconds(s.Circuits[i].Src, s.Circuits[i].Dst, s.Circuits[i].Bytes)
				if c.TransmitStart < p.TransmitStart-1e-9 || c.End < p.End-1e-9 {
					t.Errorf("%s, %s: circuit %d ran %g..%g s, before the prediction %g..%g s", s.Algorithm, rc.Name(), i, c.TransmitStart, c.End, p.TransmitStart, p.End)
				}
				if d := c.End - c.TransmitStart; d < want-1e-9 || d > want+1e-9 {
					t.Errorf("%s: circuit %d copied for %g s, the model says %g s", s.Algorithm, i, d, want)
				}
			}
			if vs := schedules.VerifyTimeline(s, live.Timeline); len(vs) > 0 {
				t.Errorf("%s, %s: the live timeline violates %v", s.Algorithm, rc.Name(), vs[0])
			}
			if live.Execution != ExecCompiled || live.Timeline.Completion() < pred.Completion()-1e-9 {
				t.Errorf("%s: execution %q, live %g s, predicted %g s", s.Algorithm, live.Execution, live.Timeline.Completion(), pred.Completion())
			}
		}
	}
}

// The session API writes the records of a compiled replay across processes like any other.
func TestRunProcessDevice(t *testing.T) {
	dev := startProcessDevice(t, fourGPUs)
	jobs := plan(t, 0, "tetris", "bvn")
	cfg := Config{Dir: filepath.Join(t.TempDir(), "run"), Jobs: jobs, Env: Env{Device: dev},
		Predict:      emulator.Config{Transfer: FakeTransferModel(nvlink, fourGPUs), Reconfig: emulator.ParallelReconfig(10e-6)},
		LiveTransfer: "fake devices in worker processes", LiveReconfig: "injected α_r"}
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Runs {
		if c := r.ClockOffsets; len(c) != 4 || c[3].GPU != 3 || c[0].UncertaintyNS <= 0 || c[0].OffsetNS < -c[0].UncertaintyNS || c[0].OffsetNS > c[0].UncertaintyNS {
			t.Errorf("%s: clock offsets %+v (want 4 GPUs, offset 0 within the uncertainty)", r.Algorithm, c)
		}
	}
	var onDisk Summary
	readJSON(t, filepath.Join(cfg.Dir, "summary.json"), &onDisk)
	if len(onDisk.Runs) != 2 || len(onDisk.Runs[0].ClockOffsets) != 4 {
		t.Errorf("summary.json lacks the clock offsets: %+v", onDisk.Runs)
	}
	for _, r := range sum.Runs {
		if r.Execution != ExecCompiled || r.LiveOverPredicted < 1 || r.HarnessCost.Worst < 0 {
			t.Errorf("%s: execution %q, live/predicted %v, harness %+v", r.Algorithm, r.Execution, r.LiveOverPredicted, r.HarnessCost)
		}
	}
}

// A worker process that dies mid-run stops the replay at once with an error naming its GPU,
// and the other workers are aborted and keep serving.
func TestProcessDeviceWorkerDies(t *testing.T) {
	slow := func(int, int, int64) (float64, error) { return 30, nil } // every copy 30 s
	dev := startProcessDeviceWith(t, []int{0, 1}, slow)
	p := &program.Program{Circuits: 2, Endpoints: [][]program.Step{{{Circuit: 0, Dst: 1, Bytes: 1}}, {{Circuit: 1, Dst: 0, Bytes: 1}}}}
	go func() {
		time.Sleep(300 * time.Millisecond)
		if pr, err := os.FindProcess(dev.ws.Worker(1).Hello().PID); err == nil {
			_ = pr.Kill()
		}
	}()
	t0 := time.Now()
	_, err := dev.Execute(context.Background(), p, nil)
	if err == nil || !strings.Contains(err.Error(), "GPU 1") {
		t.Fatalf("Execute with a killed worker: %v", err)
	}
	if time.Since(t0) > 10*time.Second {
		t.Errorf("the death took %v to notice", time.Since(t0))
	}
	if _, err := dev.ws.Worker(0).Check(context.Background()); err != nil {
		t.Errorf("the surviving worker: %v", err)
	}
}

// processSchedules are the built-in matrix 0 planned by four schedulers on Beneš, Tetris on a
// crossbar and Tetris in barrier rounds (--no-partial).
func processSchedules(t *testing.T) []*schedules.Schedule {
	t.Helper()
	var out []*schedules.Schedule
	for _, j := range plan(t, 0, "tetris", "bvn", "sunflow", "maxweight") {
		out = append(out, j.Schedule)
	}
	sc, err := schedules.Lookup("tetris")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []schedules.Options{{Fabric: schedules.Crossbar}, {Fabric: schedules.Benes, NoPartial: true}} {
		base := planOpts()
		o.Bandwidth, o.Reconfig = base.Bandwidth, base.Reconfig
		s, err := sc.Schedule(context.Background(), builtin(t, 0), o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
