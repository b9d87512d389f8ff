package nvml

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
	"github.com/tetris-hil/tetris-hil/gpu/standin"
)

// openStandIn opens real NVML, which is the stand-in libnvidia-ml.so.1 loaded into this process,
// with its log at log.
func openStandIn(t *testing.T) (*Lib, uintptr, string) {
	t.Helper()
	h := standin.Preload(t, standin.NVML)
	log := filepath.Join(t.TempDir(), "nvml.log")
	standin.SetLog(t, standin.NVML, h, log)
	t.Cleanup(func() { standin.SetLog(t, standin.NVML, h, "") })
	lib, err := Open(Options{})
	if err != nil {
		t.Fatalf("Open on the stand-in NVML: %v", err)
	}
	t.Cleanup(func() { lib.Close() })
	if lib.Fake() {
		t.Fatal("Open(Options{}) gave the fake server")
	}
	return lib, h, log
}

// The whole inventory through the real binding: every field is the stand-in's value for that
// GPU (see fakenvml.c), none a zero a failed or misdirected write would leave.
func TestInventoryOnStandIn(t *testing.T) {
	lib, _, _ := openStandIn(t)
	inv, err := lib.Inventory(nil)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Fake || inv.DriverVersion != "535.261.03-standin" || inv.NVMLVersion != "12.535.261.03-standin" || inv.CUDADriverVersion != "12.2" {
		t.Errorf("inventory header %+v", inv)
	}
	avail, _ := affinity.Available()
	if len(inv.GPUs) != 8 || len(inv.Pairs) != 28 {
		t.Fatalf("%d GPUs, %d pairs", len(inv.GPUs), len(inv.Pairs))
	}
	for i, g := range inv.GPUs {
		want := GPU{Index: i, CUDAOrdinal: i, UUID: fmt.Sprintf("GPU-57a4d10e-0000-4000-8000-%012x", i),
			Name: fmt.Sprintf("Stand-in GPU %d", i), PCIBusID: fmt.Sprintf("00000000:%02X:00.0", 0x10+i),
			MemoryBytes: 80e9 + uint64(i), NUMANode: i / 4, CPUAffinity: fmt.Sprint(avail[i%len(avail)]),
			NVLinksUp: 18, MaxSMClockMHz: 1980, MaxMemClockMHz: 2619, ComputeCapMajor: 9, ComputeCapMinor: i % 2,
			Telemetry: Telemetry{TemperatureC: uint32(40 + i), SMClockMHz: uint32(1400 + i), MemClockMHz: uint32(2600 + i),
				ThrottleReasons: []string{[]string{"gpu_idle", "sw_power_cap"}[i%2]}}}
		if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", want) {
			t.Errorf("GPU %d:\n got %+v\nwant %+v", i, g, want)
		}
	}
	for _, p := range inv.Pairs {
		same := p.A/4 == p.B/4
		topo, atom := "SYS", "not supported"
		if same {
			topo, atom = "NODE", "OK"
		}
		if p.Topology != topo || p.Link != "NV18" || p.P2PRead != "OK" || p.P2PLink != "OK" || p.P2PAtom != atom {
			t.Errorf("pair %d-%d: %+v", p.A, p.B, p)
		}
	}
}

// Locking goes through nvmlDeviceSetGpuLockedClocks with the GPU's max SM clock (0) and is undone
// with nvmlDeviceResetGpuLockedClocks; a GPU that refuses undoes the ones locked before it.
func TestLockClocksOnStandIn(t *testing.T) {
	lib, h, log := openStandIn(t)
	lock, err := lib.LockClocks(context.Background(), []int{1, 6}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := lib.Sample(6); s.SMClockMHz != 1980 || !slices.Contains(s.ThrottleReasons, "clocks_setting") {
		t.Errorf("locked GPU 6 samples %+v, want 1980 MHz held by clocks_setting", s)
	}
	if err := lock.Restore(); err != nil {
		t.Fatal(err)
	}
	standin.Set(t, standin.NVML, h, "lock_fail", 4)
	defer standin.Set(t, standin.NVML, h, "lock_fail", -1)
	if _, err := lib.LockClocks(context.Background(), []int{2, 4}, 1500); err == nil ||
		!strings.Contains(err.Error(), "GPU 4") || !strings.Contains(err.Error(), "needs root") {
		t.Errorf("locking a GPU that refuses: %v, want an error naming GPU 4 and root", err)
	}
	got := strings.Join(grep(standin.Log(t, log), "LockedClocks"), "\n")
	want := strings.Join([]string{
		"nvmlDeviceSetGpuLockedClocks(1, 1980, 1980) -> SUCCESS",
		"nvmlDeviceSetGpuLockedClocks(6, 1980, 1980) -> SUCCESS",
		"nvmlDeviceResetGpuLockedClocks(1) -> SUCCESS",
		"nvmlDeviceResetGpuLockedClocks(6) -> SUCCESS",
		"nvmlDeviceSetGpuLockedClocks(2, 1500, 1500) -> SUCCESS",
		"nvmlDeviceSetGpuLockedClocks(4, 1500, 1500) -> NO_PERMISSION",
		"nvmlDeviceResetGpuLockedClocks(2) -> SUCCESS",
	}, "\n")
	if got != want {
		t.Errorf("clock calls:\n%s\nwant\n%s", got, want)
	}
}

// grep keeps the log lines containing s, without their pid and tid.
func grep(lines []string, s string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, s) {
			f := strings.SplitN(l, " ", 3)
			out = append(out, f[len(f)-1])
		}
	}
	return out
}

// Telemetry reads through the calls NVML 13 keeps where the deprecated ones fail, and says which
// readings it could not take instead of reporting a 0 °C GPU at full clocks.
func TestTelemetryOnStandIn(t *testing.T) {
	lib, h, _ := openStandIn(t)
	standin.Set(t, standin.NVML, h, "deprecated_fail", 1)
	defer standin.Set(t, standin.NVML, h, "deprecated_fail", 0)
	s, err := lib.Sample(5)
	if err != nil {
		t.Fatal(err)
	}
	if s.TemperatureC != 45 || !slices.Equal(s.ThrottleReasons, []string{"sw_power_cap"}) || len(s.Unavailable) != 0 {
		t.Errorf("with the deprecated calls failing: %+v, want 45 C, sw_power_cap, nothing unavailable", s)
	}
	standin.Set(t, standin.NVML, h, "temperature_fail", 1)
	standin.Set(t, standin.NVML, h, "reasons_fail", 1)
	defer standin.Set(t, standin.NVML, h, "temperature_fail", 0)
	defer standin.Set(t, standin.NVML, h, "reasons_fail", 0)
	s, _ = lib.Sample(5)
	want := []string{"temperature: ERROR_NOT_SUPPORTED", "throttle_reasons: ERROR_NOT_SUPPORTED"}
	if !slices.Equal(s.Unavailable, want) || s.SMClockMHz != 1405 {
		t.Errorf("with no temperature and no reasons: %+v, want unavailable %q", s, want)
	}
}
