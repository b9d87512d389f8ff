package hil

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// nvlink is the fake engine at NVLink scale: a 4 MiB copy about 16 µs.
var nvlink = fake.Model{Alpha: 5e-6, Bandwidth: 370e9, Spread: 0.05, OutlierFactor: 1, Seed: 1}

// A session without a switch controller runs compiled on the device: on the virtual clock the
// live record is the prediction exactly (every algorithm, both modes) and the harness costs
// nothing; in real time the copies keep their modelled durations, never start before their waits
// end, and the summary reports that cost; the live record passes the verifier either way.
func TestRunCompiled(t *testing.T) {
	gpuOf := identity(8)
	for _, virtual := range []bool{true, false} {
		jobs := plan(t, 0, "tetris", "bvn", "sunflow", "maxweight")
		cfg := Config{Dir: filepath.Join(t.TempDir(), "run"), Jobs: jobs,
			Env:          Env{Device: FakeDevice(nvlink, gpuOf, virtual, time.Millisecond)},
			Predict:      emulator.Config{Transfer: FakeTransferModel(nvlink, gpuOf), Reconfig: emulator.ParallelReconfig(10e-6)},
			LiveTransfer: "fake device", LiveReconfig: "injected α_r"}
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range sum.Runs {
			if r.Execution != ExecCompiled || r.Commands == 0 {
				t.Errorf("%s: execution %q, %d commands", r.Algorithm, r.Execution, r.Commands)
			}
			if virtual && (r.LiveOverPredicted != 1 || r.HarnessCost != (Diff{}) || r.StartDifference.Worst != 0 || r.EndDifference.Worst != 0) {
				t.Errorf("virtual %s: %+v", r.Algorithm, r)
			}
			if !virtual && (r.LiveOverPredicted < 1 || r.HarnessCost.Worst < 0) {
				t.Errorf("real time %s: live/predicted %v, harness %+v", r.Algorithm, r.LiveOverPredicted, r.HarnessCost)
			}
			// The fake device's spin-loop stalls beside the harness cost, in real time only.
			if st := r.SpinStalls; (st == nil) != virtual || (st != nil && (st.ThresholdSeconds != 5e-6 || st.Count < 0 || st.WorstSeconds > st.TotalSeconds)) {
				t.Errorf("%s (virtual %v): spin stalls %+v", r.Algorithm, virtual, st)
			}
			var rec emulator.RunRecord
			readJSON(t, filepath.Join(cfg.Dir, "m0-"+r.Algorithm+".live.json"), &rec)
			if vs := schedules.VerifyTimeline(jobs[i].Schedule, rec.Timeline); len(vs) > 0 {
				t.Errorf("%s (virtual %v): the live timeline violates %v", r.Algorithm, virtual, vs[0])
			}
		}
	}
}

// The controller model times the compiled replay's commands too: with a queue at one station
// the virtual device still equals the prediction, and it differs from the parallel model's.
func TestReplayCompiledStation(t *testing.T) {
	gpuOf := identity(8)
	s := plan(t, 0, "tetris")[0].Schedule
	dev := FakeDevice(nvlink, gpuOf, true, 0)
	tm := FakeTransferModel(nvlink, gpuOf)
	var ends []float64
	for _, rc := range []emulator.ReconfigModel{emulator.ParallelReconfig(10e-6), emulator.ControllerReconfig(8e-6, 2e-6)} {
		live, err := ReplayCompiled(context.Background(), s, dev, rc)
		if err != nil {
			t.Fatal(err)
		}
		_, pred, err := emulator.Run(context.Background(), s, nil, emulator.Config{Transfer: tm, Reconfig: rc})
		if err != nil {
			t.Fatal(err)
		}
		if live.Timeline.Completion() != pred.Completion() || live.Execution != ExecCompiled {
			t.Errorf("%s: live %v, predicted %v", rc.Name(), live.Timeline.Completion(), pred.Completion())
		}
		ends = append(ends, pred.Completion())
	}
	if ends[0] == ends[1] {
		t.Errorf("the two reconfiguration models gave the same completion %v: the test does not tell them apart", ends[0])
	}
}
