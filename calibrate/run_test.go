package calibrate

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/calibrate/model"
	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"
)

func TestMain(m *testing.M) { workertest.Main(m, nil) }

// fakeConfig is a calibration of GPUs gpus of the fake 8-GPU server, through real worker
// processes (this test binary), with a fixed clock so that files compare byte for byte.
func fakeConfig(t *testing.T, gpus []int, m fake.Model) Config {
	t.Helper()
	lib, err := nvml.Open(nvml.Options{Fake: true})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := lib.Inventory(nil)
	if err != nil {
		t.Fatal(err)
	}
	sizes, _ := GeometricSizes(4<<10, 256<<20, 2)
	command, env := workertest.Command(workertest.WorkerRole)
	clock := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	return Config{
		Plan: model.Plan{Pairs: DefaultPairs(gpus), Sizes: sizes, Warmup: 1, Reps: 15, Copy: "ce",
			Patterns: []string{model.Isolated, model.Permutation}, Permutations: CyclicShifts(gpus),
			VerifyEvery: 4, Engine: "fake", EngineOptions: m.String()},
		Workers:     bench.Config{Lib: lib, Command: command, Env: env, Timeout: 10 * time.Second},
		Inventory:   InventoryFrom(inv, "test"),
		StartMargin: time.Millisecond,
		Now:         func() time.Time { return clock },
	}
}

func TestRunFakeBothPatterns(t *testing.T) {
	m := fake.Defaults
	m.Alpha, m.Bandwidth = 7e-6, 250e9
	cfg := fakeConfig(t, []int{1, 3, 6}, m)
	var calls []int
	cfg.Progress = func(done, total int) { calls = append(calls, done) }
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := Steps(&cfg.Plan)
	if len(calls) != n || calls[n-1] != n || n != 6*len(cfg.Plan.Sizes)+2*len(cfg.Plan.Sizes) {
		t.Errorf("progress %v for %d steps", calls, n)
	}
	c := res.Calibration
	if len(c.Pairs) != 12 || c.Patterns()[0] != model.Isolated || c.Patterns()[1] != model.Permutation {
		t.Fatalf("%d pairs under %v", len(c.Pairs), c.Patterns())
	}
	for _, p := range c.Pairs {
		alpha, bw := m.Pair(p.Src, p.Dst)
		if math.Abs(p.Alpha/alpha-1) > 0.02 || math.Abs(p.Beta*bw-1) > 0.01 || len(p.Medians) != len(cfg.Plan.Sizes) {
			t.Errorf("%d→%d %s: α %.4g (true %.4g), β %.4g (true %.4g), %d medians", p.Src, p.Dst, p.Pattern, p.Alpha, alpha, p.Beta, 1/bw, len(p.Medians))
		}
		verified := 0
		for _, md := range p.Medians {
			if md.Verified {
				verified++
			}
			if md.Telemetry == nil || md.P25 > md.Seconds || md.P75 < md.Seconds || md.Repetitions != 15 {
				t.Errorf("%d→%d: median %+v", p.Src, p.Dst, md)
			}
		}
		if verified != len(cfg.Plan.Sizes)/4 {
			t.Errorf("%d→%d: %d sizes verified, want every 4th", p.Src, p.Dst, verified)
		}
	}
	if c.Created != "2026-12-01T08:00:00Z" || c.Inventory.GPUs[6].PCIBusID == "" || c.Inventory.Links["1-3"] == "" {
		t.Errorf("provenance: created %q, inventory %+v", c.Created, c.Inventory)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings on an unthrottled fake: %v", c.Warnings)
	}
}

// TestResumeGivesTheSameFile interrupts a run after a few steps, resumes it from its partial
// state, and compares the file with an uninterrupted run's (same seed): byte for byte.
func TestResumeGivesTheSameFile(t *testing.T) {
	cfg := fakeConfig(t, []int{0, 5}, fake.Defaults)
	whole, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := whole.Calibration.Marshal()
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var saved *Partial
	cut := cfg
	cut.Checkpoint = func(p *Partial) error {
		cp := *p
		cp.Steps = append([]StepResult(nil), p.Steps...)
		saved = &cp
		return nil
	}
	cut.Progress = func(done, _ int) {
		if done == 5 {
			cancel()
		}
	}
	_, err = Run(ctx, cut)
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) || saved == nil || len(saved.Steps) != 5 {
		t.Fatalf("interrupted run: %v, %d steps saved", err, len(saved.Steps))
	}
	resumed := cfg
	resumed.Resume = saved
	var measured int
	resumed.Progress = func(int, int) { measured++ }
	res, err := Run(context.Background(), resumed)
	if err != nil {
		t.Fatal(err)
	}
	if measured != Steps(&cfg.Plan)-5 {
		t.Errorf("resumed run measured %d steps, want the %d left", measured, Steps(&cfg.Plan)-5)
	}
	got, _ := res.Calibration.Marshal()
	if !bytes.Equal(got, want) {
		t.Errorf("resumed file differs from the uninterrupted one:\n%s\nwant\n%s", got, want)
	}

	other := cfg
	other.Plan.Reps = 5
	other.Resume = saved
	if _, err := Run(context.Background(), other); err == nil || !strings.Contains(err.Error(), "plan.reps: 5 here, 15 in the file") {
		t.Errorf("resume with another plan: %v", err)
	}
}

func TestCorruptCopyIsAnError(t *testing.T) {
	m := fake.Defaults
	m.Corrupt = true
	cfg := fakeConfig(t, []int{2, 4}, m)
	_, err := Run(context.Background(), cfg)
	if !errors.Is(err, transfer.ErrCorrupt) || !strings.Contains(err.Error(), "GPU 2 → GPU 4") {
		t.Errorf("run on a corrupting engine: %v", err)
	}
}

// TestLoopbackThroughTwoWorkers calibrates a single GPU: its loopback pair runs between two
// worker processes on it.
func TestLoopbackThroughTwoWorkers(t *testing.T) {
	cfg := fakeConfig(t, []int{0}, fake.Defaults)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Calibration.Pairs) != 1 || res.Calibration.Pairs[0].Src != 0 || res.Calibration.Pairs[0].Dst != 0 {
		t.Fatalf("pairs %+v", res.Calibration.Pairs)
	}
}

func TestDemandTransfers(t *testing.T) {
	cfg := fakeConfig(t, []int{0, 1}, fake.Defaults)
	cfg.Plan.Demand = []model.Transfer{{Src: 0, Dst: 1, Bytes: 3 << 20}, {Src: 1, Dst: 0, Bytes: 12345}}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Measured) != 2 {
		t.Fatalf("measured %+v", res.Measured)
	}
	for _, x := range res.Measured {
		want := fake.Defaults.ExpectedSeconds(x.Src, x.Dst, x.Bytes)
		if math.Abs(x.Seconds/want-1) > 0.03 {
			t.Errorf("%+v: model %g s", x, want)
		}
	}
}

func TestThrottleWarning(t *testing.T) {
	part := &Partial{Version: 1, Partial: true, Plan: model.Plan{Sizes: []int64{1, 2, 3}}, Inventory: model.Inventory{GPUs: []model.GPU{{Index: 0}, {Index: 1}}}}
	for i, n := range []int64{4096, 1 << 20, 1 << 30} {
		md := model.Median{Bytes: n, Seconds: 5e-6 + float64(n)/1e11, Telemetry: &model.Telemetry{ThrottleReasons: []string{"gpu_idle"}}}
		if i == 2 {
			md.Telemetry.ThrottleReasons = []string{"sw_thermal_slowdown"}
		}
		part.Steps = append(part.Steps, StepResult{Step: i, Samples: []Sample{{Src: 0, Dst: 1, Pattern: model.Isolated, Median: md}}})
	}
	cal, _ := Assemble(part, FitOptions{})
	if len(cal.Pairs) != 1 || len(cal.Pairs[0].Throttled) != 1 || len(cal.Warnings) != 1 || !strings.Contains(cal.Warnings[0], "sw_thermal_slowdown") {
		t.Errorf("pairs %+v, warnings %v", cal.Pairs, cal.Warnings)
	}
}

func TestSizesAndShifts(t *testing.T) {
	s, err := GeometricSizes(4<<10, 1<<30, 4)
	if err != nil || len(s) != 73 || s[0] != 4096 || s[72] != 1<<30 || s[4] != 8192 {
		t.Errorf("GeometricSizes(4 KiB, 1 GiB, 4) = %d sizes %v..., %v", len(s), s[:5], err)
	}
	for i := 1; i < len(s); i++ {
		if s[i]%256 != 0 || s[i] <= s[i-1] {
			t.Fatalf("size %d: %d after %d", i, s[i], s[i-1])
		}
	}
	shifts := CyclicShifts([]int{0, 1, 2, 3})
	seen := map[[2]int]int{}
	for _, perm := range shifts {
		for _, pr := range perm {
			seen[pr]++
		}
	}
	if len(shifts) != 3 || len(seen) != 12 {
		t.Errorf("cyclic shifts of 4 GPUs: %v", shifts)
	}
}
