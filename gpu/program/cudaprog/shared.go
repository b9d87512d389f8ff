package cudaprog

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/tetris-hil/tetris-hil/gpu/cuda"
	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// The pieces a worker process needs to run its endpoints' programs on its GPU against the
// shared memory of package gpu/program/shared (RunShared, exec.go): the shared file registered
// as pinned, device-mapped host memory (its flags are what cuStreamWaitValue32 waits on, across
// processes), and the GPU clock's offset from CLOCK_MONOTONIC.

// hostRegister are the driver calls gpu/cuda does not bind for registering memory.
type hostRegister struct {
	// MemHostRegister is cuMemHostRegister(p, bytes, flags).
	MemHostRegister func(p unsafe.Pointer, n uintptr, flags uint32) cuda.Result
	// MemHostUnregister is cuMemHostUnregister(p).
	MemHostUnregister func(p unsafe.Pointer) cuda.Result
}

// Flags of cuMemHostRegister: visible to every context (PORTABLE) and mapped into the device's
// address space (DEVICEMAP).
const (
	hostRegisterPortable  = 0x01
	hostRegisterDeviceMap = 0x02
)

var (
	regOnce sync.Once
	reg     *hostRegister
	regErr  error
)

// loadHostRegister binds cuMemHostRegister and cuMemHostUnregister, once per process.
func loadHostRegister() (*hostRegister, error) {
	regOnce.Do(func() {
		lib, err := purego.Dlopen(cuda.Library, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			regErr = fmt.Errorf("%w: %s not found (%v): run with --fake to replay on the fake device", cuda.ErrUnavailable, cuda.Library, err)
			return
		}
		h := &hostRegister{}
		for _, f := range []struct {
			fn    any
			names []string
		}{
			{&h.MemHostRegister, []string{"cuMemHostRegister_v2", "cuMemHostRegister"}},
			{&h.MemHostUnregister, []string{"cuMemHostUnregister"}},
		} {
			var sym uintptr
			for _, name := range f.names {
				if sym, err = purego.Dlsym(lib, name); err == nil && sym != 0 {
					break
				}
			}
			if sym == 0 {
				regErr = fmt.Errorf("%s has no %s; run with --fake", cuda.Library, f.names[0])
				return
			}
			purego.RegisterFunc(f.fn, sym)
		}
		reg = h
	})
	return reg, regErr
}

// MapShared registers m's mapping with the driver as pinned host memory that every context
// sees and the GPU addresses directly, and returns its device address; release unregisters it
// (before m is unmapped).
func (g *Device) MapShared(m *shared.Mem) (dev cuda.DevicePtr, release func() error, err error) {
	h, err := loadHostRegister()
	if err != nil {
		return 0, nil, err
	}
	b := m.Bytes()
	if len(b) == 0 {
		return 0, nil, errors.New("cudaprog: the shared memory is not mapped")
	}
	p := unsafe.Pointer(&b[0])
	err = g.th.Do(func() error {
		if err := g.d.Check("cuMemHostRegister", h.MemHostRegister(p, uintptr(len(b)), hostRegisterPortable|hostRegisterDeviceMap)); err != nil {
			return err
		}
		if err := g.d.Check("cuMemHostGetDevicePointer", g.d.MemHostGetDevicePointer(&dev, p, 0)); err != nil {
			return errors.Join(err, g.d.Check("cuMemHostUnregister", h.MemHostUnregister(p)))
		}
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("registering %s with GPU %d: %w", m.Path, g.cfg.Device.GPU, err)
	}
	return dev, func() error {
		return g.th.Do(func() error { return g.d.Check("cuMemHostUnregister", h.MemHostUnregister(p)) })
	}, nil
}

// MeasureClock measures the GPU's %globaltimer against CLOCK_MONOTONIC with n round trips of
// the stamp kernel (launch, synchronise, read the stamp), taking the least round trip's sample.
// Each round trip includes a launch and a synchronisation, so the uncertainty is half of that
// (microseconds); a kernel that stays resident and answers a flag would tighten it.
func (g *Device) MeasureClock(n int) (shared.Offset, error) {
	r := &run{g: g, n: 0, ns: 0}
	r.offFlag = 16
	r.size = 32
	var o shared.Offset
	err := g.th.Do(func() error {
		d := g.d
		if err := d.Check("cuMemHostAlloc", d.MemHostAlloc(&r.host, r.size, cuda.MemHostAllocPortable|cuda.MemHostAllocDeviceMap)); err != nil {
			r.host = nil
			return err
		}
		return d.Check("cuMemHostGetDevicePointer", d.MemHostGetDevicePointer(&r.hostD, r.host, 0))
	})
	defer func() { _ = g.th.Do(r.free) }()
	if err != nil {
		return o, fmt.Errorf("GPU %d clock: %w", g.cfg.Device.GPU, err)
	}
	o, err = shared.MeasureOffset(n, func() int64 { return int64(transfer.Monotonic()) }, func() (int64, error) {
		now, err := r.gpuNow() // scratch slot 1 of the block: stamp 8 bytes in, flag at offFlag+4
		return int64(now), err
	})
	if err != nil {
		return o, fmt.Errorf("GPU %d clock: %w", g.cfg.Device.GPU, err)
	}
	o.GPU = g.cfg.Device.GPU
	return o, nil
}
