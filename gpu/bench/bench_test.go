package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/transfer/fake"
	"github.com/tetris-hil/tetris-hil/gpu/worker"
	"github.com/tetris-hil/tetris-hil/gpu/worker/workertest"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

func TestMain(m *testing.M) { workertest.Main(m, nil) }

func config(t *testing.T, src, dst int, model fake.Model) Config {
	t.Helper()
	lib, err := nvml.Open(nvml.Options{Fake: true})
	if err != nil {
		t.Fatal(err)
	}
	sizes, _ := Sizes(4<<10, 1<<20)
	command, env := workertest.Command(workertest.WorkerRole)
	return Config{
		Lib: lib, Src: src, Dst: dst, Sizes: sizes, Reps: 21, Warmup: 1, Kind: transfer.CE,
		Engine: "fake", EngineOptions: model.String(),
		Command: command, Env: env,
		Timeout: 10 * time.Second,
	}
}

func checkModel(t *testing.T, res *Result, m fake.Model, src, dst int) {
	t.Helper()
	alpha, bw := m.Pair(src, dst)
	if len(res.Rows) != 9 {
		t.Fatalf("%d rows, want 9 (4 KiB..1 MiB)", len(res.Rows))
	}
	for _, r := range res.Rows {
		want := alpha + float64(r.Bytes)/bw
		if got := r.Median.Seconds(); math.Abs(got/want-1) > 0.03 {
			t.Errorf("%s: median %.4g s, α+m/B = %.4g s", units.FormatBinary(r.Bytes), got, want)
		}
		if gb := float64(r.Bytes) / r.Median.Seconds() / 1e9; math.Abs(gb-r.GBps) > 1e-9*gb {
			t.Errorf("%s: GB/s %g, bytes/median = %g", units.FormatBinary(r.Bytes), r.GBps, gb)
		}
		if len(r.Times) != 21 || r.Min > r.Median || r.Max < r.Median {
			t.Errorf("%s: %d times, min %v median %v max %v", units.FormatBinary(r.Bytes), len(r.Times), r.Min, r.Median, r.Max)
		}
	}
}

func TestSweepOverIPC(t *testing.T) {
	m := fake.Defaults
	m.Alpha, m.Bandwidth = 6e-6, 200e9
	res, err := Run(context.Background(), config(t, 1, 5, m))
	if err != nil {
		t.Fatal(err)
	}
	if res.Via != "ipc" || res.Src.GPU != 1 || res.Dst.GPU != 5 || res.Dst.BusID != "00000000:ab:00.0" {
		t.Errorf("result %+v", res)
	}
	checkModel(t, res, m, 1, 5)
	avail, _ := affinity.Available()
	for gpu, got := range map[int]string{1: res.SrcCPUs, 5: res.DstCPUs} {
		want := nvml.FakeCPUs(gpu, 8).Intersect(avail)
		if len(want) == 0 {
			want = avail
		}
		if got != want.String() {
			t.Errorf("GPU %d's worker on %s, want %s", gpu, got, want)
		}
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, res); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"GPU 1 -> GPU 5: CE copies via ipc", "4 KiB", "1 MiB", "GB/S", "gpu_idle"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestSweepFallsBackToPeer(t *testing.T) {
	m := fake.Defaults
	m.NoIPC = true
	res, err := Run(context.Background(), config(t, 3, 6, m))
	if err != nil {
		t.Fatal(err)
	}
	if res.Via != "peer" {
		t.Errorf("via %q, want peer", res.Via)
	}
	checkModel(t, res, m, 3, 6)
}

func TestLoopbackOnOneGPU(t *testing.T) {
	res, err := Run(context.Background(), config(t, 0, 0, fake.Defaults))
	if err != nil {
		t.Fatal(err)
	}
	checkModel(t, res, fake.Defaults, 0, 0)
}

func TestErrorsNameTheGPU(t *testing.T) {
	m := fake.Defaults
	m.CrashOn = "copy"
	_, err := Run(context.Background(), config(t, 2, 4, m))
	if err == nil || !strings.Contains(err.Error(), "worker for GPU 2") || !strings.Contains(err.Error(), "exited during copy") {
		t.Errorf("crash: %v", err)
	}
	cfg := config(t, 0, 1, fake.Defaults)
	visible := "1"
	cfg.Visible = &visible
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "GPU 0") || !strings.Contains(err.Error(), "hidden") {
		t.Errorf("hidden GPU: %v", err)
	}
	if _, err := Run(context.Background(), Config{}); err == nil {
		t.Error("Run without Lib and Command succeeded")
	}
	cfg = config(t, 0, 9, fake.Defaults)
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "GPU 9") {
		t.Errorf("missing GPU: %v", err)
	}
}

func TestSizes(t *testing.T) {
	got, err := Sizes(4<<10, 1<<30)
	if err != nil || len(got) != 19 || got[0] != 4096 || got[18] != 1<<30 {
		t.Errorf("Sizes(4 KiB, 1 GiB) = %v, %v; want 19 powers of two", got, err)
	}
	if got, _ := Sizes(1000, 3000); !slices.Equal(got, []int64{1000, 2000, 3000}) {
		t.Errorf("Sizes(1000, 3000) = %v", got)
	}
	if _, err := Sizes(0, 10); err == nil {
		t.Error("Sizes(0, 10) succeeded")
	}
}

func TestCheckPinning(t *testing.T) {
	cfg := config(t, 0, 0, fake.Defaults)
	ps, err := CheckPinning(context.Background(), cfg, []int{0, 4})
	if err != nil {
		t.Fatal(err)
	}
	avail, _ := affinity.Available()
	for i, gpu := range []int{0, 4} {
		p := ps[i]
		want := nvml.FakeCPUs(gpu, 8).Intersect(avail)
		if len(want) == 0 {
			want = avail
		}
		if !p.OK || p.GPU != gpu || p.Got != want.String() || p.Threads < 2 || p.NVMLCPUs != nvml.FakeCPUs(gpu, 8).String() {
			t.Errorf("GPU %d: %+v; want ok on %s", gpu, p, want)
		}
	}
	var buf bytes.Buffer
	if err := WritePinning(&buf, ps); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), " ok\n") != 2 || !strings.Contains(buf.String(), "(112 CPUs)") {
		t.Errorf("table:\n%s", buf.String())
	}

	cfg.EngineOptions = "crash-on=nothing,bogus=1" // the worker cannot open its engine
	ps, err = CheckPinning(context.Background(), cfg, []int{3})
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].OK || !strings.Contains(ps[0].Error, "GPU 3") {
		t.Errorf("failed worker reported as %+v", ps[0])
	}
}

// TestConnectAndSweepReuseWorkers drives already-started workers the way a calibration over all
// pairs would: one worker per GPU, a loopback pair inside one worker, then a pair across two.
func TestConnectAndSweepReuseWorkers(t *testing.T) {
	ctx := context.Background()
	cfg := config(t, 0, 0, fake.Defaults)
	inv, err := cfg.Lib.Inventory(nil)
	if err != nil {
		t.Fatal(err)
	}
	started, err := StartWorkers(ctx, cfg, []int{1, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer started.Close()
	if !slices.Equal(started.GPUs(), []int{1, 2}) || started.Device(2).BusID != inv.GPUs[2].PCIBusID {
		t.Fatalf("workers for GPUs %v, GPU 2 as %+v", started.GPUs(), started.Device(2))
	}
	ws := map[int]*worker.Worker{1: started.Worker(1), 2: started.Worker(2)}
	for _, pair := range [][2]int{{1, 1}, {1, 2}, {2, 1}} {
		dst, _ := device(inv, pair[1])
		buf, via, err := Connect(ctx, ws[pair[0]], ws[pair[1]], dst, 1<<20)
		if err != nil || via != "ipc" {
			t.Fatalf("pair %v: %v, via %q", pair, err, via)
		}
		rows, err := Sweep(ctx, cfg.Lib, ws[pair[0]], buf, []int64{1 << 20}, transfer.Copy{Reps: 15, Kind: transfer.CE}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		a, b := fake.Defaults.Pair(pair[0], pair[1])
		want := a + float64(1<<20)/b
		if got := rows[0].Median.Seconds(); math.Abs(got/want-1) > 0.03 {
			t.Errorf("pair %v: median %.4g s, model %.4g s", pair, got, want)
		}
	}
}

// TestStartWorkersStopsAllOnFailure: a GPU that cannot get a worker fails the start, naming it,
// and the workers already started are stopped (their processes gone).
func TestStartWorkersStopsAllOnFailure(t *testing.T) {
	cfg := config(t, 0, 0, fake.Defaults)
	_, err := StartWorkers(context.Background(), cfg, []int{0, 3, 9})
	if err == nil || !strings.Contains(err.Error(), "GPU 9") {
		t.Fatalf("StartWorkers with GPU 9 of 8: %v", err)
	}
	ws, err := StartWorkers(context.Background(), cfg, []int{0, 3})
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{ws.Worker(0).Hello().PID, ws.Worker(3).Hello().PID}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if !strings.Contains(string(b), ") Z") {
				t.Errorf("worker %d still running after Close", pid)
			}
		}
	}
}

// fakeNVML is a bench.NVML that is not *nvml.Lib: the sweep asks it for telemetry around every
// size and records what it says.
type fakeNVML struct {
	NVML
	samples int
}

func (f *fakeNVML) Sample(gpu int) (nvml.Telemetry, error) {
	f.samples++
	return nvml.Telemetry{TemperatureC: 40 + uint32(f.samples), SMClockMHz: 1980}, nil
}

func TestSweepThroughConsumerInterface(t *testing.T) {
	cfg := config(t, 4, 4, fake.Defaults)
	f := &fakeNVML{NVML: cfg.Lib}
	cfg.Lib = f
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if f.samples != 2*len(cfg.Sizes) || res.Rows[0].Before.TemperatureC != 41 || res.Rows[0].After.TemperatureC != 42 {
		t.Errorf("%d samples; first row %+v → %+v", f.samples, res.Rows[0].Before, res.Rows[0].After)
	}
	for _, r := range res.Rows {
		if r.HostStartNS <= 0 || r.HostEndNS < r.HostStartNS {
			t.Errorf("%d bytes: host span [%d, %d]", r.Bytes, r.HostStartNS, r.HostEndNS)
		}
	}
}

// A destination worker killed while the sender copies into its buffer stops the sweep at once
// with an error naming its GPU, pid and signal (the receiver makes no call of its own during the
// sweep, so only a watch on its process notices), and the error is not reported twice.
func TestRunNoticesKilledReceiver(t *testing.T) {
	// The kill must land in the sweep; on a loaded machine the receiver may still be starting or
	// exporting its buffer after the first wait, so a kill that landed there is tried again later.
	for wait := 100 * time.Millisecond; ; wait *= 4 {
		pid, took, err := runKillingReceiver(t, wait)
		t.Logf("killed after %v; Run returned %v after start: %v", wait, took.Round(time.Millisecond), err)
		if err != nil && wait < 6*time.Second &&
			(strings.Contains(err.Error(), "during start") || strings.Contains(err.Error(), "during export")) {
			continue
		}
		for _, want := range []string{"GPU 1", fmt.Sprintf("pid %d", pid), "exited unasked", "signal: killed"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Run = %v, want it to contain %q", err, want)
			}
		}
		if err != nil && strings.Count(err.Error(), "GPU 1") != 1 {
			t.Errorf("the receiver's death is reported more than once: %v", err)
		}
		return
	}
}

// runKillingReceiver runs a long sweep from GPU 0 to GPU 1 and kills GPU 1's worker wait after
// it appears.
func runKillingReceiver(t *testing.T, wait time.Duration) (int, time.Duration, error) {
	cfg := config(t, 0, 1, fake.Defaults)
	cfg.Sizes, _ = Sizes(1, 1<<30)
	cfg.Reps, cfg.Warmup = transfer.MaxReps, transfer.MaxReps
	killed := make(chan int, 1)
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if pid := childWorker(t, 1); pid > 0 {
				time.Sleep(wait) // into the sweep
				syscall.Kill(pid, syscall.SIGKILL)
				killed <- pid
				return
			}
		}
		killed <- 0
	}()
	t0 := time.Now()
	_, err := Run(context.Background(), cfg)
	took := time.Since(t0)
	pid := <-killed
	if pid == 0 {
		t.Fatal("no worker for GPU 1 was found to kill")
	}
	return pid, took, err
}

// childWorker is the pid of this process's worker child for gpu, or 0.
func childWorker(t *testing.T, gpu int) int {
	es, _ := os.ReadDir("/proc")
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		_, rest, _ := strings.Cut(string(stat), ") ")
		fields := strings.Fields(rest)
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(cmdline, []byte(fmt.Sprintf("--gpu=%d\x00", gpu))) {
			return pid
		}
	}
	return 0
}
