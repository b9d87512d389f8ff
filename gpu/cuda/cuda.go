// Package cuda binds the few CUDA driver API calls the harness needs, at run time, from
// libcuda.so.1 through purego: no cgo, no CUDA toolkit or header at build time, and a binary that
// runs (and says clearly what is missing) on machines without a GPU. It also embeds the PTX of
// two kernels: a spin kernel that holds a stream until the host releases it (so a batch of copies
// starts at once, as nvbandwidth does) and an SM copy kernel.
//
// Calls bind to the versioned symbols the driver exports (cuMemAlloc_v2, cuIpcOpenMemHandle_v2,
// ...), which are what cuda.h maps the plain names to. A CUDA context is current per OS thread, so
// every call for one context must run on one locked thread: Thread provides that.
package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ErrUnavailable marks a missing driver library or GPU; the message suggests --fake.
var ErrUnavailable = errors.New("CUDA unavailable")

// Result is a CUresult.
type Result int32

// Results the harness tells apart.
const (
	Success                   Result = 0
	ErrorNoDevice             Result = 100
	ErrorPeerAccessEnabled    Result = 704
	ErrorNotSupported         Result = 801
	ErrorInvalidValue         Result = 1
	ErrorNotInitialized       Result = 3
	ErrorSystemDriverMismatch Result = 803
	ErrorInvalidContext       Result = 201
	ErrorMapFailed            Result = 205
	ErrorPeerAccessUnsupport  Result = 217
	ErrorJitCompilerNotFound  Result = 221
	ErrorOperatingSystem      Result = 304
	ErrorInvalidHandle        Result = 400
	ErrorTooManyPeers         Result = 711
)

// JitOption is a CUjit_option.
type JitOption int32

// JIT options used here (cuda.h): the buffers the JIT writes its log into and their sizes. A
// size option's value is the size in bytes on input and the bytes written on output.
const (
	JitInfoLogBuffer       JitOption = 3
	JitInfoLogBufferBytes  JitOption = 4
	JitErrorLogBuffer      JitOption = 5
	JitErrorLogBufferBytes JitOption = 6
)

// Error is a failed driver call.
type Error struct {
	Func string
	Code Result
	Name string // CUDA_ERROR_...
	Desc string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d: %s)", e.Func, e.Name, e.Code, e.Desc)
}

// Handles as the driver API defines them.
type (
	Device    int32
	Context   uintptr
	Stream    uintptr
	Event     uintptr
	Module    uintptr
	Function  uintptr
	DevicePtr uint64
)

// IpcMemHandle is CUipcMemHandle: 64 opaque bytes, passed by value.
type IpcMemHandle struct{ Reserved [64]byte }

// Flags and attributes used here (values from cuda.h).
const (
	StreamNonBlocking         = 0x1
	EventDefault              = 0x0
	MemHostAllocPortable      = 0x1
	MemHostAllocDeviceMap     = 0x2
	IpcMemLazyEnablePeerAcces = 0x1
	AttrMultiprocessorCount   = 16
)

// Driver is the loaded libcuda.so.1.
type Driver struct {
	Init                      func(flags uint32) Result
	DriverGetVersion          func(v *int32) Result
	DeviceGetCount            func(n *int32) Result
	DeviceGet                 func(d *Device, ordinal int32) Result
	DeviceGetName             func(name *byte, n int32, d Device) Result
	DeviceGetPCIBusId         func(id *byte, n int32, d Device) Result
	DeviceGetAttribute        func(v *int32, attr int32, d Device) Result
	DeviceCanAccessPeer       func(can *int32, d, peer Device) Result
	DevicePrimaryCtxRetain    func(c *Context, d Device) Result
	DevicePrimaryCtxRelease   func(d Device) Result
	CtxSetCurrent             func(c Context) Result
	CtxEnablePeerAccess       func(peer Context, flags uint32) Result
	MemAlloc                  func(p *DevicePtr, n uintptr) Result
	MemFree                   func(p DevicePtr) Result
	MemsetD8                  func(p DevicePtr, v uint8, n uintptr) Result
	MemsetD8Async             func(p DevicePtr, v uint8, n uintptr, s Stream) Result
	MemHostAlloc              func(p *unsafe.Pointer, n uintptr, flags uint32) Result
	MemFreeHost               func(p unsafe.Pointer) Result
	MemHostGetDevicePointer   func(d *DevicePtr, p unsafe.Pointer, flags uint32) Result
	StreamCreate              func(s *Stream, flags uint32) Result
	StreamDestroy             func(s Stream) Result
	StreamSynchronize         func(s Stream) Result
	EventCreate               func(e *Event, flags uint32) Result
	EventDestroy              func(e Event) Result
	EventRecord               func(e Event, s Stream) Result
	EventElapsedTime          func(ms *float32, start, end Event) Result
	MemcpyDtoDAsync           func(dst, src DevicePtr, n uintptr, s Stream) Result
	MemcpyPeerAsync           func(dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, n uintptr, s Stream) Result
	MemcpyDtoH                func(dst unsafe.Pointer, src DevicePtr, n uintptr) Result
	IpcGetMemHandle           func(h *IpcMemHandle, p DevicePtr) Result
	IpcOpenMemHandle          func(p *DevicePtr, h IpcMemHandle, flags uint32) Result
	IpcCloseMemHandle         func(p DevicePtr) Result
	ModuleLoadData            func(m *Module, image *byte) Result
	ModuleLoadDataEx          func(m *Module, image *byte, n uint32, options *JitOption, values *uintptr) Result
	ModuleUnload              func(m Module) Result
	ModuleGetFunction         func(f *Function, m Module, name string) Result
	LaunchKernel              func(f Function, gx, gy, gz, bx, by, bz, shmem uint32, s Stream, params *unsafe.Pointer, extra *unsafe.Pointer) Result
	getErrorName, getErrorStr func(r Result, s **byte) Result
}

// symbols lists each binding with the names it may have in the library, newest first.
func (d *Driver) symbols() []struct {
	fn    any
	names []string
} {
	type s = struct {
		fn    any
		names []string
	}
	return []s{
		{&d.Init, []string{"cuInit"}},
		{&d.DriverGetVersion, []string{"cuDriverGetVersion"}},
		{&d.DeviceGetCount, []string{"cuDeviceGetCount"}},
		{&d.DeviceGet, []string{"cuDeviceGet"}},
		{&d.DeviceGetName, []string{"cuDeviceGetName"}},
		{&d.DeviceGetPCIBusId, []string{"cuDeviceGetPCIBusId"}},
		{&d.DeviceGetAttribute, []string{"cuDeviceGetAttribute"}},
		{&d.DeviceCanAccessPeer, []string{"cuDeviceCanAccessPeer"}},
		{&d.DevicePrimaryCtxRetain, []string{"cuDevicePrimaryCtxRetain"}},
		{&d.DevicePrimaryCtxRelease, []string{"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}},
		{&d.CtxSetCurrent, []string{"cuCtxSetCurrent"}},
		{&d.CtxEnablePeerAccess, []string{"cuCtxEnablePeerAccess"}},
		{&d.MemAlloc, []string{"cuMemAlloc_v2"}},
		{&d.MemFree, []string{"cuMemFree_v2"}},
		{&d.MemsetD8, []string{"cuMemsetD8_v2"}},
		{&d.MemsetD8Async, []string{"cuMemsetD8Async"}},
		{&d.MemHostAlloc, []string{"cuMemHostAlloc"}},
		{&d.MemFreeHost, []string{"cuMemFreeHost"}},
		{&d.MemHostGetDevicePointer, []string{"cuMemHostGetDevicePointer_v2"}},
		{&d.StreamCreate, []string{"cuStreamCreate"}},
		{&d.StreamDestroy, []string{"cuStreamDestroy_v2"}},
		{&d.StreamSynchronize, []string{"cuStreamSynchronize"}},
		{&d.EventCreate, []string{"cuEventCreate"}},
		{&d.EventDestroy, []string{"cuEventDestroy_v2"}},
		{&d.EventRecord, []string{"cuEventRecord"}},
		{&d.EventElapsedTime, []string{"cuEventElapsedTime_v2", "cuEventElapsedTime"}},
		{&d.MemcpyDtoDAsync, []string{"cuMemcpyDtoDAsync_v2"}},
		{&d.MemcpyPeerAsync, []string{"cuMemcpyPeerAsync"}},
		{&d.MemcpyDtoH, []string{"cuMemcpyDtoH_v2"}},
		{&d.IpcGetMemHandle, []string{"cuIpcGetMemHandle"}},
		{&d.IpcOpenMemHandle, []string{"cuIpcOpenMemHandle_v2", "cuIpcOpenMemHandle"}},
		{&d.IpcCloseMemHandle, []string{"cuIpcCloseMemHandle"}},
		{&d.ModuleLoadData, []string{"cuModuleLoadData"}},
		{&d.ModuleLoadDataEx, []string{"cuModuleLoadDataEx"}},
		{&d.ModuleUnload, []string{"cuModuleUnload"}},
		{&d.ModuleGetFunction, []string{"cuModuleGetFunction"}},
		{&d.LaunchKernel, []string{"cuLaunchKernel"}},
		{&d.getErrorName, []string{"cuGetErrorName"}},
		{&d.getErrorStr, []string{"cuGetErrorString"}},
	}
}

// Library is the file name the driver is loaded from.
const Library = "libcuda.so.1"

var (
	loadMu sync.Mutex
	loaded *Driver
)

// Load opens libcuda.so.1 and binds every call, once per process once it has succeeded (a failure
// is tried again by the next Load); it fails with ErrUnavailable when the library is missing and
// names any symbol the driver lacks.
func Load() (*Driver, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loaded != nil {
		return loaded, nil
	}
	d, err := load(Library)
	if err != nil {
		return nil, err
	}
	loaded = d
	return d, nil
}

func load(path string) (*Driver, error) {
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not found (%v): is the NVIDIA driver installed? run with --fake to use the fake transfer engine", ErrUnavailable, path, err)
	}
	d := &Driver{}
	for _, s := range d.symbols() {
		var sym uintptr
		for _, name := range s.names {
			if sym, err = purego.Dlsym(lib, name); err == nil {
				break
			}
		}
		if sym == 0 {
			return nil, fmt.Errorf("%s has no %s: the NVIDIA driver is too old", path, s.names[0])
		}
		purego.RegisterFunc(s.fn, sym)
	}
	return d, nil
}

// Check turns a Result into an *Error naming the call, or nil.
func (d *Driver) Check(fn string, r Result) error {
	if r == Success {
		return nil
	}
	e := &Error{Func: fn, Code: r, Name: fmt.Sprintf("CUDA_ERROR_%d", r), Desc: "unknown error"}
	var p *byte
	if d.getErrorName(r, &p) == Success && p != nil {
		e.Name = cString(p)
	}
	if d.getErrorStr(r, &p) == Success && p != nil {
		e.Desc = cString(p)
	}
	return e
}

func cString(p *byte) string {
	var b []byte
	for i := 0; i < 512; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// GoString reads a NUL-terminated string from a buffer the driver filled.
func GoString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// Thread runs functions on one locked OS thread, on which a CUDA context stays current.
type Thread struct {
	work chan func()
	done chan struct{}
}

// NewThread starts the thread.
func NewThread() *Thread {
	t := &Thread{work: make(chan func()), done: make(chan struct{})}
	go func() {
		// Never unlocked: when the goroutine ends, the thread ends with it, and with it whatever
		// CUDA state was current on it.
		runtime.LockOSThread()
		defer close(t.done)
		for f := range t.work {
			f()
		}
	}()
	return t
}

// Do runs f on the thread and returns its error.
func (t *Thread) Do(f func() error) error {
	errc := make(chan error, 1)
	t.work <- func() { errc <- f() }
	return <-errc
}

// Close ends the thread.
func (t *Thread) Close() {
	close(t.work)
	<-t.done
}
