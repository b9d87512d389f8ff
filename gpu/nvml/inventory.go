package nvml

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/gpu/nvml/internal/nv"
)

// InventoryVersion is the version of the inventory JSON format.
const InventoryVersion = 1

// Inventory is what NVML says about the machine: the format of `tetris-hil devices --json`, and
// the record a calibration keeps of the machine it was taken on.
type Inventory struct {
	Version           int    `json:"version"`
	Fake              bool   `json:"fake"`
	DriverVersion     string `json:"driver_version"`
	NVMLVersion       string `json:"nvml_version"`
	CUDADriverVersion string `json:"cuda_driver_version"` // "12.4": the newest CUDA the driver supports
	// CUDAVisibleDevices is the CUDA_VISIBLE_DEVICES the ordinals were mapped under; null if unset.
	CUDAVisibleDevices *string `json:"cuda_visible_devices"`
	GPUs               []GPU   `json:"gpus"`
	Pairs              []Pair  `json:"pairs"`
}

// GPU is one device. Fields NVML does not support on a device are left at their zero value; an
// unknown NUMA node is -1.
type GPU struct {
	Index           int       `json:"index"`
	CUDAOrdinal     int       `json:"cuda_ordinal"` // -1: hidden from CUDA by CUDA_VISIBLE_DEVICES
	UUID            string    `json:"uuid"`
	Name            string    `json:"name"`
	PCIBusID        string    `json:"pci_bus_id"`
	MemoryBytes     uint64    `json:"memory_bytes"`
	NUMANode        int       `json:"numa_node"`
	CPUAffinity     string    `json:"cpu_affinity"`
	NVLinksUp       int       `json:"nvlinks_up"`
	MaxSMClockMHz   uint32    `json:"max_sm_clock_mhz"`
	MaxMemClockMHz  uint32    `json:"max_mem_clock_mhz"`
	Telemetry       Telemetry `json:"telemetry"`
	ComputeCapMajor int       `json:"compute_capability_major"`
	ComputeCapMinor int       `json:"compute_capability_minor"`
}

// Pair is what connects two GPUs (A < B): the PCIe topology level of their closest common
// ancestor, P2P support in each capability, and the link label `nvidia-smi topo -m` would print.
type Pair struct {
	A        int    `json:"a"`
	B        int    `json:"b"`
	Topology string `json:"topology"` // X, PIX, PXB, PHB, NODE or SYS, as nvidia-smi prints them
	Link     string `json:"link"`     // NV<k> when P2P runs over NVLink, else Topology
	P2PRead  string `json:"p2p_read"` // OK or the reason it is not supported
	P2PWrite string `json:"p2p_write"`
	P2PLink  string `json:"p2p_nvlink"`
	P2PAtom  string `json:"p2p_atomics"`
}

// Inventory reads every device and pair. visible is CUDA_VISIBLE_DEVICES (nil if unset); it fixes
// each GPU's CUDA ordinal.
func (l *Lib) Inventory(visible *string) (*Inventory, error) {
	inv := &Inventory{Version: InventoryVersion, Fake: l.Fake(), CUDAVisibleDevices: visible, GPUs: []GPU{}, Pairs: []Pair{}}
	var ret nv.Return
	if inv.DriverVersion, ret = l.nv.SystemGetDriverVersion(); ret != nv.SUCCESS {
		return nil, fmt.Errorf("nvmlSystemGetDriverVersion: %v", ret)
	}
	if inv.NVMLVersion, ret = l.nv.SystemGetNVMLVersion(); ret != nv.SUCCESS {
		return nil, fmt.Errorf("nvmlSystemGetNVMLVersion: %v", ret)
	}
	cv, ret := l.nv.SystemGetCudaDriverVersion()
	if ret != nv.SUCCESS {
		return nil, fmt.Errorf("nvmlSystemGetCudaDriverVersion: %v", ret)
	}
	inv.CUDADriverVersion = fmt.Sprintf("%d.%d", cv/1000, cv%1000/10)

	ids := make([]Identity, len(l.devices))
	for i := range l.devices {
		g, err := l.gpu(i)
		if err != nil {
			return nil, err
		}
		inv.GPUs = append(inv.GPUs, g)
		ids[i] = Identity{Index: i, UUID: g.UUID, BusID: g.PCIBusID}
	}
	ordinals, err := MapOrdinals(visible, ids)
	if err != nil {
		return nil, err
	}
	for i := range inv.GPUs {
		inv.GPUs[i].CUDAOrdinal = -1
	}
	for ord, idx := range ordinals {
		inv.GPUs[idx].CUDAOrdinal = ord
	}
	for a := range l.devices {
		for b := a + 1; b < len(l.devices); b++ {
			p, err := l.pair(a, b, inv.GPUs)
			if err != nil {
				return nil, err
			}
			inv.Pairs = append(inv.Pairs, p)
		}
	}
	return inv, nil
}

func (l *Lib) gpu(i int) (GPU, error) {
	d := l.devices[i]
	g := GPU{Index: i, NUMANode: -1}
	var ret nv.Return
	if g.UUID, ret = d.GetUUID(); ret != nv.SUCCESS {
		return g, errRet("nvmlDeviceGetUUID", i, ret)
	}
	if g.Name, ret = d.GetName(); ret != nv.SUCCESS {
		return g, errRet("nvmlDeviceGetName", i, ret)
	}
	pci, ret := d.GetPciInfo()
	if ret != nv.SUCCESS {
		return g, errRet("nvmlDeviceGetPciInfo", i, ret)
	}
	g.PCIBusID = goString(pci.BusId[:])
	if mem, ret := d.GetMemoryInfo(); ret == nv.SUCCESS {
		g.MemoryBytes = mem.Total
	}
	if node, ret := d.GetNumaNodeId(); ret == nv.SUCCESS {
		g.NUMANode = node
	} else if node, ok := sysfsNUMANode(sysfsPCI, g.PCIBusID); ok {
		// R535's libnvidia-ml.so.1 has no nvmlDeviceGetNumaNodeId (newer drivers do); the
		// kernel knows the node of every PCI device.
		g.NUMANode = node
	}
	// Some virtual machines do not report an affinity; the inventory says so with an empty list
	// rather than failing, and pinning that GPU's worker fails with NVML's own error.
	if cpus, err := l.CPUs(i); err == nil {
		g.CPUAffinity = cpus.String()
	}
	g.NVLinksUp = nvlinksUp(d)
	if v, ret := d.GetMaxClockInfo(nv.CLOCK_SM); ret == nv.SUCCESS {
		g.MaxSMClockMHz = v
	}
	if v, ret := d.GetMaxClockInfo(nv.CLOCK_MEM); ret == nv.SUCCESS {
		g.MaxMemClockMHz = v
	}
	if maj, mnr, ret := d.GetCudaComputeCapability(); ret == nv.SUCCESS {
		g.ComputeCapMajor, g.ComputeCapMinor = maj, mnr
	}
	g.Telemetry = sample(d)
	return g, nil
}

// sysfsPCI is where the kernel lists PCI devices, each with its NUMA node.
var sysfsPCI = "/sys/bus/pci/devices"

// sysfsNUMANode reads the NUMA node of the PCI device busID from root/<id>/numa_node; -1 there
// (no node) or no such file answers false.
func sysfsNUMANode(root, busID string) (int, bool) {
	id, err := NormalizeBusID(busID)
	if err != nil {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(root, id, "numa_node"))
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func nvlinksUp(d nv.Device) int {
	up := 0
	for link := 0; link < nv.NVLINK_MAX_LINKS; link++ {
		st, ret := d.GetNvLinkState(link)
		if ret != nv.SUCCESS {
			continue // links past the device's count answer NOT_SUPPORTED or INVALID_ARGUMENT
		}
		if st == nv.FEATURE_ENABLED {
			up++
		}
	}
	return up
}

func (l *Lib) pair(a, b int, g []GPU) (Pair, error) {
	da, db := l.devices[a], l.devices[b]
	p := Pair{A: a, B: b}
	lvl, ret := da.GetTopologyCommonAncestor(db)
	if ret != nv.SUCCESS {
		return p, fmt.Errorf("GPUs %d,%d: nvmlDeviceGetTopologyCommonAncestor: %v", a, b, ret)
	}
	p.Topology = topologyLabel(lvl)
	p.P2PRead = p2p(da, db, nv.P2P_CAPS_INDEX_READ)
	p.P2PWrite = p2p(da, db, nv.P2P_CAPS_INDEX_WRITE)
	p.P2PLink = p2p(da, db, nv.P2P_CAPS_INDEX_NVLINK)
	p.P2PAtom = p2p(da, db, nv.P2P_CAPS_INDEX_ATOMICS)
	p.Link = p.Topology
	// On an NVSwitch system every GPU's links go to the switches, so a pair reaches each other over
	// as many links as the poorer of the two has up; nvidia-smi prints that as NV<k>.
	if p.P2PLink == "OK" {
		if k := min(g[a].NVLinksUp, g[b].NVLinksUp); k > 0 {
			p.Link = fmt.Sprintf("NV%d", k)
		}
	}
	return p, nil
}

func p2p(a, b nv.Device, c nv.GpuP2PCapsIndex) string {
	st, ret := a.GetP2PStatus(b, c)
	if ret != nv.SUCCESS {
		return "unknown"
	}
	switch st {
	case nv.P2P_STATUS_OK:
		return "OK"
	case nv.P2P_STATUS_CHIPSET_NOT_SUPPORTED:
		return "chipset not supported"
	case nv.P2P_STATUS_GPU_NOT_SUPPORTED:
		return "GPU not supported"
	case nv.P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED:
		return "topology not supported"
	case nv.P2P_STATUS_DISABLED_BY_REGKEY:
		return "disabled by regkey"
	case nv.P2P_STATUS_NOT_SUPPORTED:
		return "not supported"
	default:
		return "unknown"
	}
}

// topologyLabel names a common-ancestor level the way `nvidia-smi topo -m` does.
func topologyLabel(l nv.GpuTopologyLevel) string {
	switch l {
	case nv.TOPOLOGY_INTERNAL:
		return "X"
	case nv.TOPOLOGY_SINGLE:
		return "PIX"
	case nv.TOPOLOGY_MULTIPLE:
		return "PXB"
	case nv.TOPOLOGY_HOSTBRIDGE:
		return "PHB"
	case nv.TOPOLOGY_NODE:
		return "NODE"
	case nv.TOPOLOGY_SYSTEM:
		return "SYS"
	default:
		return fmt.Sprintf("level%d", l)
	}
}

func goString(c []int8) string {
	var b strings.Builder
	for _, ch := range c {
		if ch == 0 {
			break
		}
		b.WriteByte(byte(ch))
	}
	return b.String()
}
