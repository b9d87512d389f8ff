package nvml

import (
	"crypto/sha256"
	"fmt"
	"sync"

	nv "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
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

type fakeServer struct {
	*server.Server
	mu     sync.Mutex
	locked map[int][2]uint32 // GPU -> locked SM clock range
}

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

// fakeUUID is a stable UUID per GPU index (go-nvml's mock draws random ones), so that inventories
// and their golden files are deterministic.
func fakeUUID(gpu int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "tetris-hil fake H200 %d", gpu))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40 // version 4, variant 10, as a real UUID
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func newFakeServer(n int) *fakeServer {
	s := &fakeServer{
		Server: dgxh200.NewWithGPUs(gpus.Multiple(n, gpus.H200_SXM5_141GB)...),
		locked: map[int][2]uint32{},
	}
	s.Server.DriverVersion = fakeDriver
	s.Server.NvmlVersion = fakeNVMLVersion
	s.Server.CudaDriverVersion = fakeCUDADriver
	for i, d := range s.Devices {
		s.fill(i, n, d.(*server.Device))
	}
	return s
}

func (s *fakeServer) fill(i, n int, d *server.Device) {
	bus, busID := fakeBusID(i)
	d.UUID = fakeUUID(i)
	d.PciBusID = busID
	d.MemoryInfo.Free = d.MemoryInfo.Total
	d.GetPciInfoFunc = func() (nv.PciInfo, nv.Return) {
		p := nv.PciInfo{Bus: uint32(bus), PciDeviceId: d.Config.PciDeviceId}
		copy(p.BusId[:], cChars(busID))
		copy(p.BusIdLegacy[:], cChars(busID[4:]))
		return p, nv.SUCCESS
	}
	d.GetNumaNodeIdFunc = func() (int, nv.Return) { return fakeNUMANode(i, n), nv.SUCCESS }
	d.GetCpuAffinityFunc = func(int) ([]uint, nv.Return) { return FakeCPUs(i, n).Mask(wordBits), nv.SUCCESS }
	d.SetCpuAffinityFunc = func() nv.Return {
		// Like the real call, bind only the calling thread, cut to what this process may use. If
		// that leaves nothing (a 1-CPU machine and a GPU on the other node) the thread stays as it
		// is, which the caller sees in the applied set.
		avail, err := affinity.Thread()
		if err != nil {
			return nv.ERROR_UNKNOWN
		}
		if want := FakeCPUs(i, n).Intersect(avail); len(want) > 0 {
			if affinity.SetThread(want) != nil {
				return nv.ERROR_UNKNOWN
			}
		}
		return nv.SUCCESS
	}
	d.ClearCpuAffinityFunc = func() nv.Return { return nv.SUCCESS }
	d.GetTopologyCommonAncestorFunc = func(o nv.Device) (nv.GpuTopologyLevel, nv.Return) {
		j := o.(*server.Device).Index
		switch {
		case j == i:
			return nv.TOPOLOGY_INTERNAL, nv.SUCCESS
		case fakeNUMANode(j, n) == fakeNUMANode(i, n):
			return nv.TOPOLOGY_NODE, nv.SUCCESS // each GPU has its own PCIe switch under one socket
		default:
			return nv.TOPOLOGY_SYSTEM, nv.SUCCESS
		}
	}
	d.GetP2PStatusFunc = func(nv.Device, nv.GpuP2PCapsIndex) (nv.GpuP2PStatus, nv.Return) {
		return nv.P2P_STATUS_OK, nv.SUCCESS // NVSwitch: every pair, every capability
	}
	d.GetNvLinkStateFunc = func(link int) (nv.EnableState, nv.Return) {
		if link < 0 || link >= nv.NVLINK_MAX_LINKS {
			return 0, nv.ERROR_INVALID_ARGUMENT
		}
		if link >= fakeNVLinks {
			return 0, nv.ERROR_NOT_SUPPORTED
		}
		return nv.FEATURE_ENABLED, nv.SUCCESS
	}
	d.GetTemperatureFunc = func(nv.TemperatureSensors) (uint32, nv.Return) {
		return uint32(fakeBaseTempC + i%3), nv.SUCCESS
	}
	d.GetMaxClockInfoFunc = func(t nv.ClockType) (uint32, nv.Return) {
		if t == nv.CLOCK_MEM {
			return fakeMemMHz, nv.SUCCESS
		}
		return fakeMaxSMMHz, nv.SUCCESS
	}
	d.GetClockInfoFunc = func(t nv.ClockType) (uint32, nv.Return) {
		if t == nv.CLOCK_MEM {
			return fakeMemMHz, nv.SUCCESS
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if r, ok := s.locked[i]; ok {
			return r[1], nv.SUCCESS
		}
		return fakeIdleSMMHz, nv.SUCCESS
	}
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nv.Return) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.locked[i]; ok {
			return nv.ClocksThrottleReasonApplicationsClocksSetting, nv.SUCCESS
		}
		return nv.ClocksThrottleReasonGpuIdle, nv.SUCCESS
	}
	d.SetGpuLockedClocksFunc = func(lo, hi uint32) nv.Return {
		if lo > hi || hi > fakeMaxSMMHz {
			return nv.ERROR_INVALID_ARGUMENT
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.locked[i] = [2]uint32{lo, hi}
		return nv.SUCCESS
	}
	d.ResetGpuLockedClocksFunc = func() nv.Return {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.locked, i)
		return nv.SUCCESS
	}
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
