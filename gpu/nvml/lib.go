// Package nvml is the harness's view of the GPUs through NVML: an inventory (devices, NUMA and
// CPU affinity, clocks, topology, P2P and NVLink), the mapping from CUDA ordinals to NVML devices,
// pinning a thread to a GPU's CPUs, locked clocks and telemetry. With Options.Fake it runs on
// a fake 8-GPU NVLink server (a DGX H200, as go-nvml's mock of it reports one), so that everything
// above it runs without a GPU. Real NVML is loaded at run time from libnvidia-ml.so.1 (no cgo), so
// every build, CGO_ENABLED=0 included, has both.
package nvml

import (
	"errors"
	"fmt"

	"github.com/tetris-hil/tetris-hil/gpu/nvml/internal/nv"

	"github.com/tetris-hil/tetris-hil/gpu/affinity"
)

// ErrUnavailable marks errors that mean "no NVIDIA software or GPU here"; their message says what
// is missing and suggests --fake.
var ErrUnavailable = errors.New("NVIDIA GPU unavailable")

// Options selects real NVML or the fake server.
type Options struct {
	Fake     bool
	FakeGPUs int // GPUs in the fake server; 0 means 8
}

// Lib is an initialised NVML (real or fake) and its devices in NVML index order.
type Lib struct {
	nv      nv.Interface
	fake    *fakeServer
	devices []nv.Device
}

// Open initialises NVML, or builds the fake server.
func Open(o Options) (*Lib, error) {
	if o.Fake {
		n := o.FakeGPUs
		if n == 0 {
			n = 8
		}
		if n < 1 || n > 64 {
			return nil, fmt.Errorf("fake GPUs %d: want 1..64", n)
		}
		fs := newFakeServer(n)
		return &Lib{nv: fs, fake: fs, devices: fs.Devices}, nil
	}
	lib := nv.New()
	switch ret := lib.Init(); ret {
	case nv.SUCCESS:
	case nv.ERROR_LIBRARY_NOT_FOUND:
		return nil, fmt.Errorf("%w: libnvidia-ml.so.1 not found (no NVIDIA driver on this machine?); run with --fake for a fake 8-GPU server", ErrUnavailable)
	case nv.ERROR_DRIVER_NOT_LOADED:
		return nil, fmt.Errorf("%w: NVML loaded but the NVIDIA kernel driver is not running; run with --fake for a fake 8-GPU server", ErrUnavailable)
	default:
		return nil, fmt.Errorf("%w: nvmlInit: %v; run with --fake for a fake 8-GPU server", ErrUnavailable, ret)
	}
	count, ret := lib.DeviceGetCount()
	if ret != nv.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("nvmlDeviceGetCount: %v", ret)
	}
	if count == 0 {
		lib.Shutdown()
		return nil, fmt.Errorf("%w: NVML sees no GPU; run with --fake for a fake 8-GPU server", ErrUnavailable)
	}
	devs := make([]nv.Device, count)
	for i := range devs {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nv.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("nvmlDeviceGetHandleByIndex(%d): %v", i, ret)
		}
		devs[i] = d
	}
	return &Lib{nv: lib, devices: devs}, nil
}

// Close shuts NVML down. Locked clocks are not touched: their owner (ClockLock) restores them.
func (l *Lib) Close() error {
	if l.fake != nil {
		return nil
	}
	if ret := l.nv.Shutdown(); ret != nv.SUCCESS {
		return fmt.Errorf("nvmlShutdown: %v", ret)
	}
	return nil
}

// Fake reports whether this is the fake server.
func (l *Lib) Fake() bool { return l.fake != nil }

// Count is the number of GPUs NVML sees.
func (l *Lib) Count() int { return len(l.devices) }

func (l *Lib) device(i int) (nv.Device, error) {
	if i < 0 || i >= len(l.devices) {
		return nil, fmt.Errorf("GPU %d: NVML has GPUs 0..%d", i, len(l.devices)-1)
	}
	return l.devices[i], nil
}

// CPUs returns the CPUs local to GPU i as NVML reports them (before any cut to this process's
// allowed set).
func (l *Lib) CPUs(i int) (affinity.Set, error) {
	d, err := l.device(i)
	if err != nil {
		return nil, err
	}
	words, ret := d.GetCpuAffinity(maxCPUs)
	if ret != nv.SUCCESS {
		return nil, fmt.Errorf("GPU %d: nvmlDeviceGetCpuAffinity: %v", i, ret)
	}
	return affinity.FromMask(words, wordBits), nil
}

// Pin binds the calling OS thread to GPU i's CPUs through nvmlDeviceSetCpuAffinity; it is the pin
// function for affinity.StartPinned. The kernel cuts the set down to the CPUs this process may use.
func (l *Lib) Pin(i int) error {
	d, err := l.device(i)
	if err != nil {
		return err
	}
	if ret := d.SetCpuAffinity(); ret != nv.SUCCESS {
		return fmt.Errorf("GPU %d: nvmlDeviceSetCpuAffinity: %v", i, ret)
	}
	return nil
}

// maxCPUs bounds the affinity mask read from NVML; wordBits is the width of its words (C unsigned
// long on 64-bit Linux).
const (
	maxCPUs  = 1024
	wordBits = 64
)

func errRet(what string, gpu int, ret nv.Return) error {
	return fmt.Errorf("GPU %d: %s: %v", gpu, what, ret)
}
