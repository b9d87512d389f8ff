package nvml

import (
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
	"github.com/tetris-hil/tetris-hil/gpu/nvml/internal/nv"
)

// The fake server is a DGX H200: 8 H200 GPUs behind NVSwitches (18 NVLink4 links each, every pair
// P2P over NVLink), two sockets of 56 cores with two hardware threads each (224 CPUs), GPUs 0-3 on
// NUMA node 0 and 4-7 on node 1. CPUs are numbered round-robin across the sockets (node = cpu mod
// 2), as many dual-socket BIOSes do; with the usual blocked numbering a 2-CPU CI machine would
// hold no CPU of node 1, and the pinning check on a real child process would have nothing to pin
// to. With round-robin numbering each node keeps one CPU there, so workers of GPUs 0 and 4 really
// land on different CPUs.
const (
	fakeSockets     = 2
	fakeCPUs        = 224
	fakeNVLinks     = 18
	fakeMaxSMMHz    = 1980
	fakeIdleSMMHz   = 345
	fakeMemMHz      = 3201
	fakeBaseTempC   = 31
	fakeDriver      = "550.54.15"
	fakeCUDADriver  = 12040
	fakeNVMLVersion = "12.550.54.15"
)

// fakeBusIDs are the PCI buses of the eight GPUs of a DGX H100/H200.
var fakeBusIDs = []int{0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb}

// fakeServer is the fake NVML: the library calls (nv.Interface) and its devices. Before the
// purego binding it was go-nvml's dgxh200 mock filled in by hand; it keeps that mock's H200
// identity (name, memory, compute capability, PCI device id) so inventories stay the same.
type fakeServer struct {
	Devices []nv.Device
	mu      sync.Mutex
	locked  map[int][2]uint32 // GPU -> locked SM clock range
}

// The H200 SXM5 141GB as go-nvml's mock (and a real one) reports it.
const (
	fakeName        = "NVIDIA H200 141GB HBM3e"
	fakeMemoryBytes = 144384 << 20
	fakeCCMajor     = 9
	fakeCCMinor     = 0
	fakePciDeviceID = 0x233310DE
)

func fakeNUMANode(gpu, n int) int { return gpu * fakeSockets / n }

// FakeCPUs is the CPU set the fake server reports for GPU gpu of n: every CPU of its NUMA node.
func FakeCPUs(gpu, n int) affinity.Set {
	node := fakeNUMANode(gpu, n)
	s := affinity.Set{}
	for c := node; c < fakeCPUs; c += fakeSockets {
		s = append(s, c)
	}
	return s
}

func fakeBusID(gpu int) (bus int, id string) {
	bus = 0x100 + gpu // beyond the eight real slots: made-up buses, still unique and sorted
	if gpu < len(fakeBusIDs) {
		bus = fakeBusIDs[gpu]
	}
	return bus, fmt.Sprintf("00000000:%02x:00.0", bus)
}

// fakeUUID is a stable UUID per GPU index, so that inventories and their golden files are
// deterministic.
func fakeUUID(gpu int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "tetris-hil fake H200 %d", gpu))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40 // version 4, variant 10, as a real UUID
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func newFakeServer(n int) *fakeServer {
	s := &fakeServer{locked: map[int][2]uint32{}}
	for i := range n {
		s.Devices = append(s.Devices, &fakeDevice{s: s, i: i, n: n})
	}
	return s
}

func (s *fakeServer) Init() nv.Return                  { return nv.SUCCESS }
func (s *fakeServer) Shutdown() nv.Return              { return nv.SUCCESS }
func (s *fakeServer) DeviceGetCount() (int, nv.Return) { return len(s.Devices), nv.SUCCESS }
func (s *fakeServer) DeviceGetHandleByIndex(i int) (nv.Device, nv.Return) {
	if i < 0 || i >= len(s.Devices) {
		return nil, nv.ERROR_INVALID_ARGUMENT
	}
	return s.Devices[i], nv.SUCCESS
}
func (s *fakeServer) SystemGetDriverVersion() (string, nv.Return) { return fakeDriver, nv.SUCCESS }
func (s *fakeServer) SystemGetNVMLVersion() (string, nv.Return)   { return fakeNVMLVersion, nv.SUCCESS }
func (s *fakeServer) SystemGetCudaDriverVersion() (int, nv.Return) {
	return fakeCUDADriver, nv.SUCCESS
}

// fakeDevice is GPU i of the fake server's n.
type fakeDevice struct {
	s    *fakeServer
	i, n int
}

func (d *fakeDevice) GetUUID() (string, nv.Return) { return fakeUUID(d.i), nv.SUCCESS }
func (d *fakeDevice) GetName() (string, nv.Return) { return fakeName, nv.SUCCESS }

func (d *fakeDevice) GetPciInfo() (nv.PciInfo, nv.Return) {
	bus, busID := fakeBusID(d.i)
	p := nv.PciInfo{Bus: uint32(bus), PciDeviceId: fakePciDeviceID}
	copy(p.BusId[:], cChars(busID))
	copy(p.BusIdLegacy[:], cChars(busID[4:]))
	return p, nv.SUCCESS
}

func (d *fakeDevice) GetMemoryInfo() (nv.Memory, nv.Return) {
	return nv.Memory{Total: fakeMemoryBytes, Free: fakeMemoryBytes}, nv.SUCCESS
}

func (d *fakeDevice) GetNumaNodeId() (int, nv.Return) { return fakeNUMANode(d.i, d.n), nv.SUCCESS }

func (d *fakeDevice) GetCpuAffinity(int) ([]uint, nv.Return) {
	return FakeCPUs(d.i, d.n).Mask(wordBits), nv.SUCCESS
}

func (d *fakeDevice) SetCpuAffinity() nv.Return {
	// Like the real call, bind only the calling thread, cut to what this process may use. If
	// that leaves nothing (a 1-CPU machine and a GPU on the other node) the thread stays as it
	// is, which the caller sees in the applied set.
	avail, err := affinity.Thread()
	if err != nil {
		return nv.ERROR_UNKNOWN
	}
	if want := FakeCPUs(d.i, d.n).Intersect(avail); len(want) > 0 {
		if affinity.SetThread(want) != nil {
			return nv.ERROR_UNKNOWN
		}
	}
	return nv.SUCCESS
}

func (d *fakeDevice) GetTopologyCommonAncestor(o nv.Device) (nv.GpuTopologyLevel, nv.Return) {
	od, ok := o.(*fakeDevice)
	if !ok || od.s != d.s {
		return 0, nv.ERROR_INVALID_ARGUMENT
	}
	switch j := od.i; {
	case j == d.i:
		return nv.TOPOLOGY_INTERNAL, nv.SUCCESS
	case fakeNUMANode(j, d.n) == fakeNUMANode(d.i, d.n):
		return nv.TOPOLOGY_NODE, nv.SUCCESS // each GPU has its own PCIe switch under one socket
	default:
		return nv.TOPOLOGY_SYSTEM, nv.SUCCESS
	}
}

func (d *fakeDevice) GetP2PStatus(nv.Device, nv.GpuP2PCapsIndex) (nv.GpuP2PStatus, nv.Return) {
	return nv.P2P_STATUS_OK, nv.SUCCESS // NVSwitch: every pair, every capability
}

func (d *fakeDevice) GetNvLinkState(link int) (nv.EnableState, nv.Return) {
	if link < 0 || link >= nv.NVLINK_MAX_LINKS {
		return 0, nv.ERROR_INVALID_ARGUMENT
	}
	if link >= fakeNVLinks {
		return 0, nv.ERROR_NOT_SUPPORTED
	}
	return nv.FEATURE_ENABLED, nv.SUCCESS
}

func (d *fakeDevice) GetTemperature(nv.TemperatureSensors) (uint32, nv.Return) {
	return uint32(fakeBaseTempC + d.i%3), nv.SUCCESS
}

func (d *fakeDevice) GetCudaComputeCapability() (int, int, nv.Return) {
	return fakeCCMajor, fakeCCMinor, nv.SUCCESS
}

func (d *fakeDevice) GetMaxClockInfo(t nv.ClockType) (uint32, nv.Return) {
	if t == nv.CLOCK_MEM {
		return fakeMemMHz, nv.SUCCESS
	}
	return fakeMaxSMMHz, nv.SUCCESS
}

func (d *fakeDevice) GetClockInfo(t nv.ClockType) (uint32, nv.Return) {
	if t == nv.CLOCK_MEM {
		return fakeMemMHz, nv.SUCCESS
	}
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	if r, ok := d.s.locked[d.i]; ok {
		return r[1], nv.SUCCESS
	}
	return fakeIdleSMMHz, nv.SUCCESS
}

func (d *fakeDevice) GetCurrentClocksEventReasons() (uint64, nv.Return) {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	if _, ok := d.s.locked[d.i]; ok {
		return nv.ClocksThrottleReasonApplicationsClocksSetting, nv.SUCCESS
	}
	return nv.ClocksThrottleReasonGpuIdle, nv.SUCCESS
}

func (d *fakeDevice) GetCurrentClocksThrottleReasons() (uint64, nv.Return) {
	return d.GetCurrentClocksEventReasons()
}

func (d *fakeDevice) SetGpuLockedClocks(lo, hi uint32) nv.Return {
	if lo > hi || hi > fakeMaxSMMHz {
		return nv.ERROR_INVALID_ARGUMENT
	}
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	d.s.locked[d.i] = [2]uint32{lo, hi}
	return nv.SUCCESS
}

func (d *fakeDevice) ResetGpuLockedClocks() nv.Return {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	delete(d.s.locked, d.i)
	return nv.SUCCESS
}

// lockedGPUs lists the fake GPUs whose clocks are locked now.
func (s *fakeServer) lockedGPUs() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for i := range s.Devices {
		if _, ok := s.locked[i]; ok {
			out = append(out, i)
		}
	}
	return out
}

func cChars(s string) []int8 {
	out := make([]int8, len(s))
	for i := range len(s) {
		out[i] = int8(s[i])
	}
	return out
}
