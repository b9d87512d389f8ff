package nv

import (
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
)

// libName is the NVML library the driver installs; the unversioned libnvidia-ml.so comes only
// with development packages.
const libName = "libnvidia-ml.so.1"

// Device handles (nvmlDevice_t) are pointers into NVML's own memory, so they travel as uintptr.
//
// Every out-parameter goes through a typed pointer of a function bound with purego.RegisterFunc,
// as gpu/cuda binds CUDA: such a pointer escapes to the heap, which the garbage collector never
// moves. A pointer converted to a bare uintptr for purego.SyscallN does not escape; the variable
// stays on the goroutine's stack, and when the stack grows (it is copied) between the conversion
// and the C call, NVML writes into the old copy: wrong counts, empty bus ids and UUIDs.
type funcs struct {
	init                     func() Return
	shutdown                 func() Return
	deviceGetCount           func(n *uint32) Return
	deviceGetHandleByIndex   func(i uint32, h *uintptr) Return
	systemGetDriverVersion   func(buf *byte, n uint32) Return
	systemGetNVMLVersion     func(buf *byte, n uint32) Return
	systemGetCudaDriverVer   func(v *int32) Return
	getUUID                  func(d uintptr, buf *byte, n uint32) Return
	getName                  func(d uintptr, buf *byte, n uint32) Return
	getPciInfo               func(d uintptr, p *PciInfo) Return
	getMemoryInfo            func(d uintptr, m *Memory) Return
	getNumaNodeID            func(d uintptr, n *uint32) Return
	getCPUAffinity           func(d uintptr, words uint32, mask *uint64) Return
	setCPUAffinity           func(d uintptr) Return
	getNvLinkState           func(d uintptr, link uint32, s *int32) Return
	getMaxClockInfo          func(d uintptr, t ClockType, v *uint32) Return
	getClockInfo             func(d uintptr, t ClockType, v *uint32) Return
	getCudaComputeCapability func(d uintptr, major, minor *int32) Return
	getTemperature           func(d uintptr, s TemperatureSensors, v *uint32) Return
	getTemperatureV          func(d uintptr, t *Temperature) Return
	getClocksEventReasons    func(d uintptr, v *uint64) Return
	getClocksThrottleReasons func(d uintptr, v *uint64) Return
	setGpuLockedClocks       func(d uintptr, lo, hi uint32) Return
	resetGpuLockedClocks     func(d uintptr) Return
	getTopologyCommonAnc     func(d, o uintptr, lvl *GpuTopologyLevel) Return
	getP2PStatus             func(d, o uintptr, c GpuP2PCapsIndex, st *GpuP2PStatus) Return
}

// symbols lists each binding with the names it may have, newest first. A symbol the driver lacks
// leaves its binding nil: the call answers ERROR_FUNCTION_NOT_FOUND, as NVML's own loader does.
func (f *funcs) symbols() []struct {
	fn    any
	names []string
} {
	type s = struct {
		fn    any
		names []string
	}
	return []s{
		{&f.init, []string{"nvmlInit_v2"}},
		{&f.shutdown, []string{"nvmlShutdown"}},
		{&f.deviceGetCount, []string{"nvmlDeviceGetCount_v2"}},
		{&f.deviceGetHandleByIndex, []string{"nvmlDeviceGetHandleByIndex_v2"}},
		{&f.systemGetDriverVersion, []string{"nvmlSystemGetDriverVersion"}},
		{&f.systemGetNVMLVersion, []string{"nvmlSystemGetNVMLVersion"}},
		{&f.systemGetCudaDriverVer, []string{"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"}},
		{&f.getUUID, []string{"nvmlDeviceGetUUID"}},
		{&f.getName, []string{"nvmlDeviceGetName"}},
		{&f.getPciInfo, []string{"nvmlDeviceGetPciInfo_v3"}},
		{&f.getMemoryInfo, []string{"nvmlDeviceGetMemoryInfo"}},
		{&f.getNumaNodeID, []string{"nvmlDeviceGetNumaNodeId"}},
		{&f.getCPUAffinity, []string{"nvmlDeviceGetCpuAffinity"}},
		{&f.setCPUAffinity, []string{"nvmlDeviceSetCpuAffinity"}},
		{&f.getNvLinkState, []string{"nvmlDeviceGetNvLinkState"}},
		{&f.getMaxClockInfo, []string{"nvmlDeviceGetMaxClockInfo"}},
		{&f.getClockInfo, []string{"nvmlDeviceGetClockInfo"}},
		{&f.getCudaComputeCapability, []string{"nvmlDeviceGetCudaComputeCapability"}},
		{&f.getTemperature, []string{"nvmlDeviceGetTemperature"}},
		{&f.getTemperatureV, []string{"nvmlDeviceGetTemperatureV"}},
		{&f.getClocksEventReasons, []string{"nvmlDeviceGetCurrentClocksEventReasons"}},
		{&f.getClocksThrottleReasons, []string{"nvmlDeviceGetCurrentClocksThrottleReasons"}},
		{&f.setGpuLockedClocks, []string{"nvmlDeviceSetGpuLockedClocks"}},
		{&f.resetGpuLockedClocks, []string{"nvmlDeviceResetGpuLockedClocks"}},
		{&f.getTopologyCommonAnc, []string{"nvmlDeviceGetTopologyCommonAncestor"}},
		{&f.getP2PStatus, []string{"nvmlDeviceGetP2PStatus"}},
	}
}

// Library is the real NVML, loaded from libnvidia-ml.so.1 by Init.
type Library struct {
	path string
	mu   sync.Mutex
	f    *funcs // nil until Init has loaded the library
}

// New returns the real library, not yet loaded; Init loads and initialises it.
func New() *Library { return &Library{path: libName} }

// NewAt is New for a library at another path (a stand-in for tests, or a driver's own copy).
func NewAt(path string) *Library { return &Library{path: path} }

func (l *Library) funcs() *funcs {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f
}

// Init loads the library and calls nvmlInit_v2. Without the library it answers
// ERROR_LIBRARY_NOT_FOUND, as go-nvml does.
func (l *Library) Init() Return {
	l.mu.Lock()
	if l.f == nil {
		h, err := purego.Dlopen(l.path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			l.mu.Unlock()
			return ERROR_LIBRARY_NOT_FOUND
		}
		f := &funcs{}
		for _, s := range f.symbols() {
			for _, name := range s.names {
				if p, err := purego.Dlsym(h, name); err == nil && p != 0 {
					purego.RegisterFunc(s.fn, p)
					break
				}
			}
		}
		l.f = f
	}
	f := l.f
	l.mu.Unlock()
	if f.init == nil {
		return ERROR_FUNCTION_NOT_FOUND
	}
	return f.init()
}

// Shutdown calls nvmlShutdown (the library stays mapped: NVML may be initialised again).
func (l *Library) Shutdown() Return {
	f := l.funcs()
	if f == nil || f.shutdown == nil {
		return ERROR_FUNCTION_NOT_FOUND
	}
	return f.shutdown()
}

// DeviceGetCount calls nvmlDeviceGetCount_v2.
func (l *Library) DeviceGetCount() (int, Return) {
	f := l.funcs()
	if f == nil || f.deviceGetCount == nil {
		return 0, ERROR_FUNCTION_NOT_FOUND
	}
	n := new(uint32)
	ret := f.deviceGetCount(n)
	return int(*n), ret
}

// DeviceGetHandleByIndex calls nvmlDeviceGetHandleByIndex_v2.
func (l *Library) DeviceGetHandleByIndex(i int) (Device, Return) {
	f := l.funcs()
	if f == nil || f.deviceGetHandleByIndex == nil {
		return nil, ERROR_FUNCTION_NOT_FOUND
	}
	h := new(uintptr)
	ret := f.deviceGetHandleByIndex(uint32(i), h)
	return &device{f: f, h: *h}, ret
}

// stringLen is the buffer for strings NVML returns: more than any of its *_BUFFER_SIZE constants
// (the largest, NVML_DEVICE_UUID_V2_BUFFER_SIZE, is 96).
const stringLen = 256

// stringCall calls fn(buf, len) with a heap buffer and reads the NUL-terminated result.
func stringCall(fn func(buf *byte, n uint32) Return) (string, Return) {
	if fn == nil {
		return "", ERROR_FUNCTION_NOT_FOUND
	}
	buf := make([]byte, stringLen)
	ret := fn(&buf[0], uint32(len(buf)))
	return cString(buf), ret
}

// SystemGetDriverVersion calls nvmlSystemGetDriverVersion.
func (l *Library) SystemGetDriverVersion() (string, Return) {
	f := l.funcs()
	if f == nil {
		return "", ERROR_FUNCTION_NOT_FOUND
	}
	return stringCall(f.systemGetDriverVersion)
}

// SystemGetNVMLVersion calls nvmlSystemGetNVMLVersion.
func (l *Library) SystemGetNVMLVersion() (string, Return) {
	f := l.funcs()
	if f == nil {
		return "", ERROR_FUNCTION_NOT_FOUND
	}
	return stringCall(f.systemGetNVMLVersion)
}

// SystemGetCudaDriverVersion calls nvmlSystemGetCudaDriverVersion_v2 (1000·major + 10·minor).
func (l *Library) SystemGetCudaDriverVersion() (int, Return) {
	f := l.funcs()
	if f == nil || f.systemGetCudaDriverVer == nil {
		return 0, ERROR_FUNCTION_NOT_FOUND
	}
	v := new(int32)
	ret := f.systemGetCudaDriverVer(v)
	return int(*v), ret
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
	f *funcs
	h uintptr
}

func (d *device) String() string { return fmt.Sprintf("nvmlDevice(%#x)", d.h) }

// bindStr fixes a device handle into a string call.
func (d *device) bindStr(fn func(uintptr, *byte, uint32) Return) func(*byte, uint32) Return {
	if fn == nil {
		return nil
	}
	return func(b *byte, n uint32) Return { return fn(d.h, b, n) }
}

func (d *device) GetUUID() (string, Return) { return stringCall(d.bindStr(d.f.getUUID)) }
func (d *device) GetName() (string, Return) { return stringCall(d.bindStr(d.f.getName)) }

func (d *device) GetPciInfo() (PciInfo, Return) {
	if d.f.getPciInfo == nil {
		return PciInfo{}, ERROR_FUNCTION_NOT_FOUND
	}
	p := new(PciInfo)
	ret := d.f.getPciInfo(d.h, p)
	return *p, ret
}

func (d *device) GetMemoryInfo() (Memory, Return) {
	if d.f.getMemoryInfo == nil {
		return Memory{}, ERROR_FUNCTION_NOT_FOUND
	}
	m := new(Memory)
	ret := d.f.getMemoryInfo(d.h, m)
	return *m, ret
}

// u32 calls a device function with one unsigned int out-parameter.
func (d *device) u32(fn func(uintptr, *uint32) Return) (uint32, Return) {
	if fn == nil {
		return 0, ERROR_FUNCTION_NOT_FOUND
	}
	v := new(uint32)
	ret := fn(d.h, v)
	return *v, ret
}

func (d *device) GetNumaNodeId() (int, Return) {
	v, ret := d.u32(d.f.getNumaNodeID)
	return int(v), ret
}

// GetCpuAffinity reads the mask in words of C unsigned long (64 bits on the 64-bit Linux this
// runs on), enough words for numCPUs CPUs.
func (d *device) GetCpuAffinity(numCPUs int) ([]uint, Return) {
	words := (numCPUs + 63) / 64
	if d.f.getCPUAffinity == nil || words == 0 {
		return nil, ERROR_FUNCTION_NOT_FOUND
	}
	buf := make([]uint64, words)
	ret := d.f.getCPUAffinity(d.h, uint32(words), &buf[0])
	out := make([]uint, words)
	for i, w := range buf {
		out[i] = uint(w)
	}
	return out, ret
}

func (d *device) SetCpuAffinity() Return {
	if d.f.setCPUAffinity == nil {
		return ERROR_FUNCTION_NOT_FOUND
	}
	return d.f.setCPUAffinity(d.h)
}

func (d *device) GetNvLinkState(link int) (EnableState, Return) {
	if d.f.getNvLinkState == nil {
		return 0, ERROR_FUNCTION_NOT_FOUND
	}
	s := new(int32)
	ret := d.f.getNvLinkState(d.h, uint32(link), s)
	return EnableState(*s), ret
}

func (d *device) clock(fn func(uintptr, ClockType, *uint32) Return, t ClockType) (uint32, Return) {
	if fn == nil {
		return 0, ERROR_FUNCTION_NOT_FOUND
	}
	v := new(uint32)
	ret := fn(d.h, t, v)
	return *v, ret
}

func (d *device) GetMaxClockInfo(t ClockType) (uint32, Return) {
	return d.clock(d.f.getMaxClockInfo, t)
}
func (d *device) GetClockInfo(t ClockType) (uint32, Return) {
	return d.clock(d.f.getClockInfo, t)
}

func (d *device) GetCudaComputeCapability() (int, int, Return) {
	if d.f.getCudaComputeCapability == nil {
		return 0, 0, ERROR_FUNCTION_NOT_FOUND
	}
	major, minor := new(int32), new(int32)
	ret := d.f.getCudaComputeCapability(d.h, major, minor)
	return int(*major), int(*minor), ret
}

// GetTemperature reads the sensor through nvmlDeviceGetTemperatureV where the driver has it (NVML
// 13 deprecates nvmlDeviceGetTemperature), else through the older call. A result of the newer
// call other than FUNCTION_NOT_FOUND or NOT_SUPPORTED is final: the older call is no second
// opinion on a GPU that is lost or a caller without permission.
func (d *device) GetTemperature(s TemperatureSensors) (uint32, Return) {
	if d.f.getTemperatureV != nil {
		t := &Temperature{Version: Temperature_v1, SensorType: s}
		ret := d.f.getTemperatureV(d.h, t)
		switch {
		case ret == SUCCESS && t.Temperature < 0:
			return 0, ERROR_UNKNOWN // below 0 °C: not a reading of a running GPU
		case ret == SUCCESS:
			return uint32(t.Temperature), SUCCESS
		case ret != ERROR_NOT_SUPPORTED && ret != ERROR_FUNCTION_NOT_FOUND && ret != ERROR_ARGUMENT_VERSION_MISMATCH:
			return 0, ret
		}
	}
	if d.f.getTemperature == nil {
		return 0, ERROR_FUNCTION_NOT_FOUND
	}
	v := new(uint32)
	ret := d.f.getTemperature(d.h, s, v)
	return *v, ret
}

func (d *device) reasons(fn func(uintptr, *uint64) Return) (uint64, Return) {
	if fn == nil {
		return 0, ERROR_FUNCTION_NOT_FOUND
	}
	v := new(uint64)
	ret := fn(d.h, v)
	return *v, ret
}

func (d *device) GetCurrentClocksEventReasons() (uint64, Return) {
	return d.reasons(d.f.getClocksEventReasons)
}
func (d *device) GetCurrentClocksThrottleReasons() (uint64, Return) {
	return d.reasons(d.f.getClocksThrottleReasons)
}

func (d *device) SetGpuLockedClocks(lo, hi uint32) Return {
	if d.f.setGpuLockedClocks == nil {
		return ERROR_FUNCTION_NOT_FOUND
	}
	return d.f.setGpuLockedClocks(d.h, lo, hi)
}
func (d *device) ResetGpuLockedClocks() Return {
	if d.f.resetGpuLockedClocks == nil {
		return ERROR_FUNCTION_NOT_FOUND
	}
	return d.f.resetGpuLockedClocks(d.h)
}

// other unwraps a Device of this library; a device of another implementation has no handle here.
func (d *device) other(o Device) (uintptr, bool) {
	od, ok := o.(*device)
	if !ok || od.f != d.f {
		return 0, false
	}
	return od.h, true
}

func (d *device) GetTopologyCommonAncestor(o Device) (GpuTopologyLevel, Return) {
	h, ok := d.other(o)
	if !ok {
		return 0, ERROR_INVALID_ARGUMENT
	}
	if d.f.getTopologyCommonAnc == nil {
		return 0, ERROR_FUNCTION_NOT_FOUND
	}
	lvl := new(GpuTopologyLevel)
	ret := d.f.getTopologyCommonAnc(d.h, h, lvl)
	return *lvl, ret
}

func (d *device) GetP2PStatus(o Device, c GpuP2PCapsIndex) (GpuP2PStatus, Return) {
	h, ok := d.other(o)
	if !ok {
		return 0, ERROR_INVALID_ARGUMENT
	}
	if d.f.getP2PStatus == nil {
		return 0, ERROR_FUNCTION_NOT_FOUND
	}
	st := new(GpuP2PStatus)
	ret := d.f.getP2PStatus(d.h, h, c, st)
	return *st, ret
}
