package nv

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tetris-hil/tetris-hil/gpu/standin"
)

// openStandIn loads the stand-in libnvidia-ml.so.1 into this process and initialises it.
func openStandIn(t *testing.T) (*Library, uintptr) {
	t.Helper()
	h := standin.Preload(t, standin.NVML)
	l := New()
	if ret := l.Init(); ret != SUCCESS {
		t.Fatalf("Init on the stand-in: %v", ret)
	}
	t.Cleanup(func() { l.Shutdown() })
	return l, h
}

// want is what the stand-in reports for GPU i (see testdata/fakenvml.c of package standin).
func wantUUID(i int) string  { return fmt.Sprintf("GPU-57a4d10e-0000-4000-8000-%012x", i) }
func wantBusID(i int) string { return fmt.Sprintf("00000000:%02X:00.0", 0x10+i) }

// grow recurses depth frames of about 1 KiB each, then calls f: goroutines at many depths put
// NVML's out-parameters at every place of a stack that grows, and is copied, as the calls run.
func grow(depth int, f func()) byte {
	var pad [1024]byte
	pad[depth%len(pad)] = byte(depth)
	if depth == 0 {
		f()
		return pad[0]
	}
	return grow(depth-1, f) + pad[depth%len(pad)]
}

// TestStackDepthSweep calls NVML from thousands of goroutines at different stack depths and
// checks every value NVML wrote through an out-parameter. Out-parameters passed as bare uintptr
// (the binding before purego.RegisterFunc) sat on the goroutine stack, which moves when it grows:
// NVML then wrote into the old copy and the caller read zeros.
func TestStackDepthSweep(t *testing.T) {
	l, _ := openStandIn(t)
	devs := make([]Device, 8)
	for i := range devs {
		d, ret := l.DeviceGetHandleByIndex(i)
		if ret != SUCCESS {
			t.Fatalf("DeviceGetHandleByIndex(%d): %v", i, ret)
		}
		devs[i] = d
	}
	const goroutines = 3000
	var (
		mu    sync.Mutex
		wrong = map[string]int{}
		first = map[string]string{}
		wg    sync.WaitGroup
	)
	bad := func(what, detail string) {
		mu.Lock()
		defer mu.Unlock()
		if wrong[what]++; wrong[what] == 1 {
			first[what] = detail
		}
	}
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := g % len(devs)
			d := devs[i]
			grow(g%61, func() {
				if n, ret := l.DeviceGetCount(); ret != SUCCESS || n != 8 {
					bad("DeviceGetCount", fmt.Sprintf("%d, %v", n, ret))
				}
				if p, ret := d.GetPciInfo(); ret != SUCCESS || cs(p.BusId[:]) != wantBusID(i) || p.Bus != uint32(0x10+i) {
					bad("GetPciInfo", fmt.Sprintf("bus id %q bus %#x, %v", cs(p.BusId[:]), p.Bus, ret))
				}
				if u, ret := d.GetUUID(); ret != SUCCESS || u != wantUUID(i) {
					bad("GetUUID", fmt.Sprintf("%q, %v", u, ret))
				}
				if m, ret := d.GetMemoryInfo(); ret != SUCCESS || m.Total != 80e9+uint64(i) {
					bad("GetMemoryInfo", fmt.Sprintf("%+v, %v", m, ret))
				}
				if v, ret := d.GetClockInfo(CLOCK_SM); ret != SUCCESS || v != uint32(1400+i) {
					bad("GetClockInfo", fmt.Sprintf("%d, %v", v, ret))
				}
				if maj, mnr, ret := d.GetCudaComputeCapability(); ret != SUCCESS || maj != 9 || mnr != i%2 {
					bad("GetCudaComputeCapability", fmt.Sprintf("%d.%d, %v", maj, mnr, ret))
				}
				if v, ret := d.GetCurrentClocksEventReasons(); ret != SUCCESS || v != []uint64{1, 4}[i%2] {
					bad("GetCurrentClocksEventReasons", fmt.Sprintf("%#x, %v", v, ret))
				}
				o := devs[(i+1)%len(devs)]
				if lvl, ret := d.GetTopologyCommonAncestor(o); ret != SUCCESS || lvl == 0 {
					bad("GetTopologyCommonAncestor", fmt.Sprintf("%d, %v", lvl, ret))
				}
			})
		}()
	}
	wg.Wait()
	for what, n := range wrong {
		t.Errorf("%s: %d of %d goroutines read a wrong value (first: %s)", what, n, goroutines, first[what])
	}
}

func cs(b []int8) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}

// Every binding against the stand-in: the values it writes, each argument it logs.
func TestBindingsOnStandIn(t *testing.T) {
	l, h := openStandIn(t)
	log := filepath.Join(t.TempDir(), "nvml.log")
	standin.SetLog(t, standin.NVML, h, log)
	defer standin.SetLog(t, standin.NVML, h, "")
	if v, ret := l.SystemGetDriverVersion(); ret != SUCCESS || v != "535.261.03-standin" {
		t.Errorf("SystemGetDriverVersion = %q, %v", v, ret)
	}
	if v, ret := l.SystemGetNVMLVersion(); ret != SUCCESS || v != "12.535.261.03-standin" {
		t.Errorf("SystemGetNVMLVersion = %q, %v", v, ret)
	}
	if v, ret := l.SystemGetCudaDriverVersion(); ret != SUCCESS || v != 12020 {
		t.Errorf("SystemGetCudaDriverVersion = %d, %v", v, ret)
	}
	d3, _ := l.DeviceGetHandleByIndex(3)
	d5, _ := l.DeviceGetHandleByIndex(5)
	if v, ret := d3.GetName(); ret != SUCCESS || v != "Stand-in GPU 3" {
		t.Errorf("GetName = %q, %v", v, ret)
	}
	p, _ := d3.GetPciInfo()
	if cs(p.BusIdLegacy[:]) != "0000:13:00.0" || p.PciDeviceId != 0x233010de || p.PciSubSystemId != 0x17ee10de+3 {
		t.Errorf("GetPciInfo = %+v", p)
	}
	if n, ret := d5.GetNumaNodeId(); ret != SUCCESS || n != 1 {
		t.Errorf("GetNumaNodeId(5) = %d, %v", n, ret)
	}
	if st, ret := d3.GetNvLinkState(17); ret != SUCCESS || st != FEATURE_ENABLED {
		t.Errorf("GetNvLinkState(17) = %d, %v", st, ret)
	}
	if _, ret := d3.GetNvLinkState(18); ret != ERROR_INVALID_ARGUMENT {
		t.Errorf("GetNvLinkState(18) = %v, want INVALID_ARGUMENT", ret)
	}
	if v, ret := d3.GetMaxClockInfo(CLOCK_MEM); ret != SUCCESS || v != 2619 {
		t.Errorf("GetMaxClockInfo(MEM) = %d, %v", v, ret)
	}
	if v, ret := d3.GetTemperature(TEMPERATURE_GPU); ret != SUCCESS || v != 43 {
		t.Errorf("GetTemperature = %d, %v", v, ret)
	}
	if lvl, _ := d3.GetTopologyCommonAncestor(d5); lvl != TOPOLOGY_SYSTEM {
		t.Errorf("GetTopologyCommonAncestor(3, 5) = %d, want SYSTEM", lvl)
	}
	if st, _ := d3.GetP2PStatus(d5, P2P_CAPS_INDEX_ATOMICS); st != P2P_STATUS_NOT_SUPPORTED {
		t.Errorf("GetP2PStatus(3, 5, ATOMICS) = %d", st)
	}
	if ret := d3.SetGpuLockedClocks(1500, 1500); ret != SUCCESS {
		t.Errorf("SetGpuLockedClocks: %v", ret)
	}
	if v, _ := d3.GetCurrentClocksThrottleReasons(); v != 0x4|0x2 {
		t.Errorf("reasons while locked = %#x, want 0x6", v)
	}
	if ret := d3.ResetGpuLockedClocks(); ret != SUCCESS {
		t.Errorf("ResetGpuLockedClocks: %v", ret)
	}
	words, ret := d3.GetCpuAffinity(1024)
	if ret != SUCCESS || len(words) != 16 {
		t.Errorf("GetCpuAffinity = %v, %v", words, ret)
	}
	lines := strings.Join(standin.Log(t, log), "\n")
	for _, want := range []string{
		"nvmlDeviceGetCpuAffinity(3, 16, ", // 16 words of unsigned long for 1024 CPUs
		"nvmlDeviceSetGpuLockedClocks(3, 1500, 1500) -> SUCCESS",
		"nvmlDeviceGetTemperatureV(3, ", "{version 0x100000c, sensor 0}) -> 43",
		"nvmlDeviceGetP2PStatus(3, 5, 3, ",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("stand-in log has no %q:\n%s", want, lines)
		}
	}
}

// Without nvmlDeviceGetTemperatureV (drivers before it), the temperature comes from the older
// call; where the older call answers DEPRECATED (as NVML 13 may), from the newer one.
func TestTemperatureFallback(t *testing.T) {
	old := NewAt(standin.Build(t, standin.NVML, "-DSTANDIN_NO_TEMPERATURE_V"))
	if ret := old.Init(); ret != SUCCESS {
		t.Fatal(ret)
	}
	defer old.Shutdown()
	if old.funcs().getTemperatureV != nil {
		t.Fatal("the stand-in built without nvmlDeviceGetTemperatureV has it: another library answered")
	}
	d, _ := old.DeviceGetHandleByIndex(6)
	if v, ret := d.GetTemperature(TEMPERATURE_GPU); ret != SUCCESS || v != 46 {
		t.Errorf("without GetTemperatureV: %d, %v; want 46 from nvmlDeviceGetTemperature", v, ret)
	}
	l, h := openStandIn(t)
	standin.Set(t, standin.NVML, h, "deprecated_fail", 1)
	defer standin.Set(t, standin.NVML, h, "deprecated_fail", 0)
	d, _ = l.DeviceGetHandleByIndex(6)
	if v, ret := d.GetTemperature(TEMPERATURE_GPU); ret != SUCCESS || v != 46 {
		t.Errorf("with the old call deprecated: %d, %v; want 46 from nvmlDeviceGetTemperatureV", v, ret)
	}
}
