package nv

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libName is the NVML library the driver installs; the unversioned libnvidia-ml.so comes only
// with development packages.
const libName = "libnvidia-ml.so.1"

// Library is the real NVML, loaded from libnvidia-ml.so.1 by Init.
type Library struct {
	mu     sync.Mutex
	handle uintptr
	syms   map[string]uintptr
}

// New returns the real library, not yet loaded; Init loads and initialises it.
func New() *Library { return &Library{} }

// sym finds a symbol, or 0 where this driver does not have it (older drivers lack the newer
// names, e.g. nvmlDeviceGetCurrentClocksEventReasons before 535).
func (l *Library) sym(name string) uintptr {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.handle == 0 {
		return 0 // not loaded: Init failed or was not called
	}
	if p, ok := l.syms[name]; ok {
		return p
	}
	p, _ := purego.Dlsym(l.handle, name)
	l.syms[name] = p
	return p
}

// call calls an NVML function that returns nvmlReturn_t; a missing symbol answers
// ERROR_FUNCTION_NOT_FOUND, as NVML itself does for a call the driver lacks.
func (l *Library) call(name string, args ...uintptr) Return {
	p := l.sym(name)
	if p == 0 {
		return ERROR_FUNCTION_NOT_FOUND
	}
	r1, _, _ := purego.SyscallN(p, args...)
	return Return(int32(r1))
}

// Init loads libnvidia-ml.so.1 and calls nvmlInit_v2. Without the library it answers
// ERROR_LIBRARY_NOT_FOUND, as go-nvml does.
func (l *Library) Init() Return {
	l.mu.Lock()
	if l.handle == 0 {
		h, err := purego.Dlopen(libName, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			l.mu.Unlock()
			return ERROR_LIBRARY_NOT_FOUND
		}
		l.handle = h
		l.syms = map[string]uintptr{}
	}
	l.mu.Unlock()
	return l.call("nvmlInit_v2")
}

// Shutdown calls nvmlShutdown (the library stays mapped: NVML may be initialised again).
func (l *Library) Shutdown() Return { return l.call("nvmlShutdown") }

// DeviceGetCount calls nvmlDeviceGetCount_v2.
func (l *Library) DeviceGetCount() (int, Return) {
	var n uint32
	ret := l.call("nvmlDeviceGetCount_v2", uintptr(unsafe.Pointer(&n)))
	return int(n), ret
}

// DeviceGetHandleByIndex calls nvmlDeviceGetHandleByIndex_v2.
func (l *Library) DeviceGetHandleByIndex(i int) (Device, Return) {
	var h uintptr
	ret := l.call("nvmlDeviceGetHandleByIndex_v2", uintptr(uint32(i)), uintptr(unsafe.Pointer(&h)))
	return &device{lib: l, h: h}, ret
}

// stringCall calls a function of the form f(args..., char *buf, unsigned int len).
func (l *Library) stringCall(name string, args ...uintptr) (string, Return) {
	buf := make([]byte, 256)
	args = append(args, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	ret := l.call(name, args...)
	return cString(buf), ret
}

// SystemGetDriverVersion calls nvmlSystemGetDriverVersion.
func (l *Library) SystemGetDriverVersion() (string, Return) {
	return l.stringCall("nvmlSystemGetDriverVersion")
}

// SystemGetNVMLVersion calls nvmlSystemGetNVMLVersion.
func (l *Library) SystemGetNVMLVersion() (string, Return) {
	return l.stringCall("nvmlSystemGetNVMLVersion")
}

// SystemGetCudaDriverVersion calls nvmlSystemGetCudaDriverVersion_v2 (1000·major + 10·minor).
func (l *Library) SystemGetCudaDriverVersion() (int, Return) {
	var v int32
	ret := l.call("nvmlSystemGetCudaDriverVersion_v2", uintptr(unsafe.Pointer(&v)))
	if ret == ERROR_FUNCTION_NOT_FOUND {
		ret = l.call("nvmlSystemGetCudaDriverVersion", uintptr(unsafe.Pointer(&v)))
	}
	return int(v), ret
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// device is an nvmlDevice_t of the real library.
type device struct {
	lib *Library
	h   uintptr
}

func (d *device) String() string { return fmt.Sprintf("nvmlDevice(%#x)", d.h) }

func (d *device) GetUUID() (string, Return) { return d.lib.stringCall("nvmlDeviceGetUUID", d.h) }
func (d *device) GetName() (string, Return) { return d.lib.stringCall("nvmlDeviceGetName", d.h) }

func (d *device) GetPciInfo() (PciInfo, Return) {
	var p PciInfo
	ret := d.lib.call("nvmlDeviceGetPciInfo_v3", d.h, uintptr(unsafe.Pointer(&p)))
	return p, ret
}

func (d *device) GetMemoryInfo() (Memory, Return) {
	var m Memory
	ret := d.lib.call("nvmlDeviceGetMemoryInfo", d.h, uintptr(unsafe.Pointer(&m)))
	return m, ret
}

func (d *device) GetNumaNodeId() (int, Return) {
	var n uint32
	ret := d.lib.call("nvmlDeviceGetNumaNodeId", d.h, uintptr(unsafe.Pointer(&n)))
	return int(n), ret
}

// GetCpuAffinity reads the mask in words of C unsigned long (64 bits on the 64-bit Linux this
// runs on), enough words for numCPUs CPUs.
func (d *device) GetCpuAffinity(numCPUs int) ([]uint, Return) {
	words := (numCPUs + 63) / 64
	buf := make([]uint64, words)
	ret := d.lib.call("nvmlDeviceGetCpuAffinity", d.h, uintptr(uint32(words)), uintptr(unsafe.Pointer(&buf[0])))
	out := make([]uint, words)
	for i, w := range buf {
		out[i] = uint(w)
	}
	return out, ret
}

func (d *device) SetCpuAffinity() Return { return d.lib.call("nvmlDeviceSetCpuAffinity", d.h) }

func (d *device) GetNvLinkState(link int) (EnableState, Return) {
	var s int32
	ret := d.lib.call("nvmlDeviceGetNvLinkState", d.h, uintptr(uint32(link)), uintptr(unsafe.Pointer(&s)))
	return EnableState(s), ret
}

func (d *device) clock(name string, t ClockType) (uint32, Return) {
	var v uint32
	ret := d.lib.call(name, d.h, uintptr(t), uintptr(unsafe.Pointer(&v)))
	return v, ret
}

func (d *device) GetMaxClockInfo(t ClockType) (uint32, Return) {
	return d.clock("nvmlDeviceGetMaxClockInfo", t)
}
func (d *device) GetClockInfo(t ClockType) (uint32, Return) {
	return d.clock("nvmlDeviceGetClockInfo", t)
}

func (d *device) GetCudaComputeCapability() (int, int, Return) {
	var major, minor int32
	ret := d.lib.call("nvmlDeviceGetCudaComputeCapability", d.h, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor)))
	return int(major), int(minor), ret
}

func (d *device) GetTemperature(s TemperatureSensors) (uint32, Return) {
	var v uint32
	ret := d.lib.call("nvmlDeviceGetTemperature", d.h, uintptr(s), uintptr(unsafe.Pointer(&v)))
	return v, ret
}

func (d *device) reasons(name string) (uint64, Return) {
	var v uint64
	ret := d.lib.call(name, d.h, uintptr(unsafe.Pointer(&v)))
	return v, ret
}

func (d *device) GetCurrentClocksEventReasons() (uint64, Return) {
	return d.reasons("nvmlDeviceGetCurrentClocksEventReasons")
}
func (d *device) GetCurrentClocksThrottleReasons() (uint64, Return) {
	return d.reasons("nvmlDeviceGetCurrentClocksThrottleReasons")
}

func (d *device) SetGpuLockedClocks(lo, hi uint32) Return {
	return d.lib.call("nvmlDeviceSetGpuLockedClocks", d.h, uintptr(lo), uintptr(hi))
}
func (d *device) ResetGpuLockedClocks() Return {
	return d.lib.call("nvmlDeviceResetGpuLockedClocks", d.h)
}

// other unwraps a Device of this library; a device of another implementation has no handle here.
func (d *device) other(o Device) (uintptr, bool) {
	od, ok := o.(*device)
	if !ok || od.lib != d.lib {
		return 0, false
	}
	return od.h, true
}

func (d *device) GetTopologyCommonAncestor(o Device) (GpuTopologyLevel, Return) {
	h, ok := d.other(o)
	if !ok {
		return 0, ERROR_INVALID_ARGUMENT
	}
	var lvl int32
	ret := d.lib.call("nvmlDeviceGetTopologyCommonAncestor", d.h, h, uintptr(unsafe.Pointer(&lvl)))
	return GpuTopologyLevel(lvl), ret
}

func (d *device) GetP2PStatus(o Device, c GpuP2PCapsIndex) (GpuP2PStatus, Return) {
	h, ok := d.other(o)
	if !ok {
		return 0, ERROR_INVALID_ARGUMENT
	}
	var st int32
	ret := d.lib.call("nvmlDeviceGetP2PStatus", d.h, h, uintptr(c), uintptr(unsafe.Pointer(&st)))
	return GpuP2PStatus(st), ret
}
