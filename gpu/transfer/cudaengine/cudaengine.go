// Package cudaengine is the "cuda" transfer engine: real copies on real GPUs through the CUDA
// driver API (package cuda, no cgo). The receiving worker exports a device buffer by CUDA IPC
// handle, the sending worker opens it and copies into it, with the copy engines (cuMemcpyDtoDAsync)
// or with an SM kernel, timed by CUDA events in the sending process. A spin kernel holds the stream
// while a batch of copies is queued and the host releases it at once, so launch overhead stays out
// of the times. Where IPC is unavailable the engine copies to a buffer it allocates on the peer GPU
// itself (cuMemcpyPeerAsync).
package cudaengine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tetris-hil/tetris-hil/gpu/cuda"
	"github.com/tetris-hil/tetris-hil/gpu/nvml"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

func init() { transfer.Register("cuda", open) }

const (
	// batch bounds the copies queued behind one spin kernel: the driver blocks the host once a
	// stream holds about a thousand pending operations, and a blocked host cannot release the spin
	// kernel; each copy takes three (two event records and the copy).
	batch = 64
	// spinTimeout bounds how long the spin kernel waits for the host before it gives up.
	spinTimeout = 10 * time.Second
	fillByte    = 0xa5
	handleLen   = 64 + 8
)

type bufKind int

const (
	local bufKind = iota // exported by this engine
	ipc                  // opened from another process
	peer                 // allocated by this engine on another GPU
)

type buffer struct {
	ptr   cuda.DevicePtr
	bytes int64
	kind  bufKind
	dev   cuda.Device // the GPU holding the memory (peer buffers)
	ctx   cuda.Context
}

type engine struct {
	d      *cuda.Driver
	th     *cuda.Thread
	dev    transfer.Device
	cuDev  cuda.Device
	ctx    cuda.Context
	stream cuda.Stream
	mod    cuda.Module
	spin   cuda.Function
	copyK  cuda.Function
	// kernErr is why the kernels are not loaded (the PTX JIT failed, e.g. without the driver's
	// libnvidia-ptxjitcompiler.so.1): SM copies fail with it; CE copies run without the spin
	// kernel, released when queued rather than held.
	kernErr error
	sms     int32
	host    unsafe.Pointer // pinned: flag (word 0) and spin status (word 1)
	hostD   cuda.DevicePtr
	start   []cuda.Event
	end     []cuda.Event
	src     cuda.DevicePtr
	srcN    int64
	bufs    map[int]*buffer
	peers   map[cuda.Device]cuda.Context // retained primary contexts of peer GPUs
	next    int
	// pattern is the byte the source was last filled with for a verifying copy.
	pattern uint8
	closed  atomic.Bool
}

// open needs no options; it checks that the CUDA ordinal is the GPU the coordinator meant, by PCI
// bus id, because CUDA's order need not be NVML's.
func open(_ context.Context, cfg transfer.Config) (transfer.Engine, error) {
	if cfg.Options != "" {
		return nil, fmt.Errorf("cuda engine takes no options, got %q", cfg.Options)
	}
	d, err := cuda.Load()
	if err != nil {
		return nil, err
	}
	e := &engine{d: d, th: cuda.NewThread(), dev: cfg.Device, bufs: map[int]*buffer{}, peers: map[cuda.Device]cuda.Context{}, next: 1}
	if err := e.th.Do(e.init); err != nil {
		e.Close()
		return nil, fmt.Errorf("GPU %d (CUDA ordinal %d): %w", cfg.Device.GPU, cfg.Device.CUDAOrdinal, err)
	}
	return e, nil
}

func (e *engine) init() error {
	d := e.d
	if r := d.Init(0); r != cuda.Success {
		err := d.Check("cuInit", r)
		if r == cuda.ErrorNoDevice {
			return fmt.Errorf("%w: %v: no GPU visible; run with --fake", cuda.ErrUnavailable, err)
		}
		return err
	}
	var n int32
	if err := d.Check("cuDeviceGetCount", d.DeviceGetCount(&n)); err != nil {
		return err
	}
	if int32(e.dev.CUDAOrdinal) >= n || e.dev.CUDAOrdinal < 0 {
		return fmt.Errorf("CUDA ordinal %d: CUDA sees %d GPUs (CUDA_VISIBLE_DEVICES?)", e.dev.CUDAOrdinal, n)
	}
	if err := d.Check("cuDeviceGet", d.DeviceGet(&e.cuDev, int32(e.dev.CUDAOrdinal))); err != nil {
		return err
	}
	if e.dev.BusID != "" {
		buf := make([]byte, 32)
		if err := d.Check("cuDeviceGetPCIBusId", d.DeviceGetPCIBusId(&buf[0], int32(len(buf)), e.cuDev)); err != nil {
			return err
		}
		got, err1 := nvml.NormalizeBusID(cuda.GoString(buf))
		want, err2 := nvml.NormalizeBusID(e.dev.BusID)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("CUDA ordinal %d is the GPU at %s, not %s (set CUDA_DEVICE_ORDER=PCI_BUS_ID)", e.dev.CUDAOrdinal, got, want)
		}
	}
	if err := d.Check("cuDevicePrimaryCtxRetain", d.DevicePrimaryCtxRetain(&e.ctx, e.cuDev)); err != nil {
		return err
	}
	if err := d.Check("cuCtxSetCurrent", d.CtxSetCurrent(e.ctx)); err != nil {
		return err
	}
	if err := d.Check("cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", d.DeviceGetAttribute(&e.sms, cuda.AttrMultiprocessorCount, e.cuDev)); err != nil {
		return err
	}
	if err := d.Check("cuStreamCreate", d.StreamCreate(&e.stream, cuda.StreamNonBlocking)); err != nil {
		return err
	}
	if e.kernErr = e.loadKernels(); e.kernErr != nil {
		fmt.Fprintf(os.Stderr, "GPU %d: the copy kernels did not load, so SM copies fail and CE copies start as they are queued, not held for a common start: %v\n", e.dev.GPU, e.kernErr)
	}
	if err := d.Check("cuMemHostAlloc", d.MemHostAlloc(&e.host, 8, cuda.MemHostAllocPortable|cuda.MemHostAllocDeviceMap)); err != nil {
		return err
	}
	if err := d.Check("cuMemHostGetDevicePointer", d.MemHostGetDevicePointer(&e.hostD, e.host, 0)); err != nil {
		return err
	}
	e.start = make([]cuda.Event, batch)
	e.end = make([]cuda.Event, batch)
	for i := range batch {
		if err := d.Check("cuEventCreate", d.EventCreate(&e.start[i], cuda.EventDefault)); err != nil {
			return err
		}
		if err := d.Check("cuEventCreate", d.EventCreate(&e.end[i], cuda.EventDefault)); err != nil {
			return err
		}
	}
	return nil
}

// jitLogBytes bounds each of the JIT's info and error logs.
const jitLogBytes = 8 << 10

// loadKernels JIT-compiles kernels.ptx for this GPU with cuModuleLoadDataEx, so that a failure
// carries the JIT's own error log, and looks up the kernels.
func (e *engine) loadKernels() error {
	d := e.d
	ptx := cuda.KernelsPTX()
	info, errLog := make([]byte, jitLogBytes), make([]byte, jitLogBytes)
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&ptx[0])
	pin.Pin(&info[0])
	pin.Pin(&errLog[0])
	opts := []cuda.JitOption{cuda.JitInfoLogBuffer, cuda.JitInfoLogBufferBytes, cuda.JitErrorLogBuffer, cuda.JitErrorLogBufferBytes}
	vals := []uintptr{uintptr(unsafe.Pointer(&info[0])), jitLogBytes, uintptr(unsafe.Pointer(&errLog[0])), jitLogBytes}
	r := d.ModuleLoadDataEx(&e.mod, &ptx[0], uint32(len(opts)), &opts[0], &vals[0])
	if err := d.Check("cuModuleLoadDataEx(kernels.ptx)", r); err != nil {
		if l := strings.TrimSpace(cuda.GoString(errLog)); l != "" {
			err = fmt.Errorf("%w; JIT log: %s", err, l)
		}
		if r == cuda.ErrorJitCompilerNotFound {
			err = fmt.Errorf("%w (the driver's libnvidia-ptxjitcompiler.so.1 is missing: install it, or copy with --copy ce)", err)
		}
		e.mod = 0
		return err
	}
	if err := d.Check("cuModuleGetFunction(spin)", d.ModuleGetFunction(&e.spin, e.mod, cuda.SpinKernel)); err != nil {
		return err
	}
	return d.Check("cuModuleGetFunction(copy_sm)", d.ModuleGetFunction(&e.copyK, e.mod, cuda.CopyKernel))
}

func (e *engine) Device() transfer.Device { return e.dev }

func (e *engine) alloc(n int64) (cuda.DevicePtr, error) {
	var p cuda.DevicePtr
	if err := e.d.Check(fmt.Sprintf("cuMemAlloc(%d)", n), e.d.MemAlloc(&p, uintptr(n))); err != nil {
		return 0, err
	}
	// cuMemsetD8 runs on the NULL stream, asynchronously to the host, and the copies' stream is
	// CU_STREAM_NON_BLOCKING, which does not wait for it: wait here, or a later copy may run
	// before the fill and the fill land on top of the copied bytes.
	err := errors.Join(e.d.Check("cuMemsetD8", e.d.MemsetD8(p, fillByte, uintptr(n))),
		e.d.Check("cuStreamSynchronize(NULL)", e.d.StreamSynchronize(0)))
	if err != nil {
		e.d.MemFree(p)
		return 0, err
	}
	return p, nil
}

func (e *engine) add(b *buffer) int {
	id := e.next
	e.next++
	e.bufs[id] = b
	return id
}

// ipcFallback are the results of cuIpcGetMemHandle and cuIpcOpenMemHandle after which the copy
// can still go by the peer path: IPC is not available here (not supported, no mapping, an OS
// that refuses, as in containers without a shared /dev/shm or IPC namespace, cuda.h:9302-9306),
// but the GPUs are.
var ipcFallback = map[cuda.Result]bool{
	cuda.ErrorNotSupported: true, cuda.ErrorMapFailed: true, cuda.ErrorInvalidHandle: true,
	cuda.ErrorTooManyPeers: true, cuda.ErrorOperatingSystem: true, cuda.ErrorPeerAccessUnsupport: true,
}

func ipcError(err error) error {
	var ce *cuda.Error
	if errors.As(err, &ce) && ipcFallback[ce.Code] {
		return fmt.Errorf("%w: %v", transfer.ErrIPCUnsupported, err)
	}
	return err
}

func (e *engine) Export(_ context.Context, n int64) (id int, handle []byte, err error) {
	if n <= 0 {
		return 0, nil, fmt.Errorf("export %d bytes: want > 0", n)
	}
	err = e.th.Do(func() error {
		p, err := e.alloc(n)
		if err != nil {
			return err
		}
		var h cuda.IpcMemHandle
		if err := e.d.Check("cuIpcGetMemHandle", e.d.IpcGetMemHandle(&h, p)); err != nil {
			e.d.MemFree(p)
			return ipcError(err)
		}
		// The handle travels with the buffer's size, which CUDA's handle does not carry.
		id = e.add(&buffer{ptr: p, bytes: n, kind: local})
		handle = binary.LittleEndian.AppendUint64(h.Reserved[:], uint64(n))
		return nil
	})
	return id, handle, err
}

func (e *engine) Import(_ context.Context, handle []byte) (id int, err error) {
	if len(handle) != handleLen {
		return 0, fmt.Errorf("import: handle of %d bytes, want %d (a CUDA IPC handle and a size)", len(handle), handleLen)
	}
	var h cuda.IpcMemHandle
	copy(h.Reserved[:], handle)
	n := int64(binary.LittleEndian.Uint64(handle[64:]))
	err = e.th.Do(func() error {
		var p cuda.DevicePtr
		if err := e.d.Check("cuIpcOpenMemHandle", e.d.IpcOpenMemHandle(&p, h, cuda.IpcMemLazyEnablePeerAcces)); err != nil {
			err = ipcError(err)
			if errors.Is(err, transfer.ErrIPCUnsupported) {
				fmt.Fprintf(os.Stderr, "GPU %d: CUDA IPC unavailable, copies go by the peer path: %v\n", e.dev.GPU, err)
			}
			return err
		}
		// One line per buffer: what tells a check (scripts/gpu_check.sh) that copies between
		// two processes really went through CUDA IPC.
		fmt.Fprintf(os.Stderr, "GPU %d: opened a CUDA IPC buffer of %d bytes exported by another process\n", e.dev.GPU, n)
		id = e.add(&buffer{ptr: p, bytes: n, kind: ipc})
		return nil
	})
	return id, err
}

func (e *engine) Peer(_ context.Context, p transfer.Device, n int64) (id int, err error) {
	if n <= 0 {
		return 0, fmt.Errorf("peer buffer of %d bytes: want > 0", n)
	}
	err = e.th.Do(func() error {
		d := e.d
		var pd cuda.Device
		if err := d.Check("cuDeviceGet", d.DeviceGet(&pd, int32(p.CUDAOrdinal))); err != nil {
			return err
		}
		if pd == e.cuDev {
			ptr, err := e.alloc(n)
			if err != nil {
				return err
			}
			id = e.add(&buffer{ptr: ptr, bytes: n, kind: peer, dev: pd, ctx: e.ctx})
			return nil
		}
		pctx, ok := e.peers[pd]
		if !ok {
			var can int32
			if err := d.Check("cuDeviceCanAccessPeer", d.DeviceCanAccessPeer(&can, e.cuDev, pd)); err != nil {
				return err
			}
			if can == 0 {
				return fmt.Errorf("GPU %d cannot access GPU %d as a peer", e.dev.GPU, p.GPU)
			}
			if err := d.Check("cuDevicePrimaryCtxRetain", d.DevicePrimaryCtxRetain(&pctx, pd)); err != nil {
				return err
			}
			// Cached only once access is enabled: a failed enable is tried again by the next
			// Peer, and no SM copy goes to a GPU this context cannot reach.
			if r := d.CtxEnablePeerAccess(pctx, 0); r != cuda.Success && r != cuda.ErrorPeerAccessEnabled {
				d.DevicePrimaryCtxRelease(pd)
				return d.Check("cuCtxEnablePeerAccess", r)
			}
			e.peers[pd] = pctx
		}
		if err := d.Check("cuCtxSetCurrent", d.CtxSetCurrent(pctx)); err != nil {
			return err
		}
		ptr, err := e.alloc(n)
		if err2 := d.Check("cuCtxSetCurrent", d.CtxSetCurrent(e.ctx)); err == nil {
			err = err2
		}
		if err != nil {
			return err
		}
		id = e.add(&buffer{ptr: ptr, bytes: n, kind: peer, dev: pd, ctx: pctx})
		return nil
	})
	return id, err
}

func (e *engine) Copy(ctx context.Context, dst int, c transfer.Copy) (transfer.Timing, error) {
	if err := c.Validate(); err != nil {
		return transfer.Timing{}, err
	}
	var out transfer.Timing
	err := e.th.Do(func() error {
		b, ok := e.bufs[dst]
		if !ok {
			return fmt.Errorf("copy to buffer %d: no such buffer", dst)
		}
		if c.Bytes > b.bytes {
			return fmt.Errorf("copy of %d bytes into buffer %d of %d bytes", c.Bytes, dst, b.bytes)
		}
		if err := e.ensureSource(c.Bytes); err != nil {
			return err
		}
		for range c.Warmup {
			if err := e.issue(b, c); err != nil {
				return err
			}
		}
		if err := e.d.Check("cuStreamSynchronize", e.d.StreamSynchronize(e.stream)); err != nil {
			return err
		}
		for done := 0; done < c.Reps; {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := min(batch, c.Reps-done)
			// Only the first batch waits for StartAt: that is the moment concurrent workers agreed on.
			startAt := c.StartAt
			if done > 0 {
				startAt = 0
			}
			times, released, err := e.timedBatch(ctx, b, c, k, startAt)
			if err != nil {
				return err
			}
			if done == 0 {
				out.HostStart = released
			}
			out.Times = append(out.Times, times...)
			done += k
		}
		out.HostEnd = transfer.Monotonic()
		if c.Verify {
			return e.verify(b, c)
		}
		return nil
	})
	return out, err
}

// verifyChunk bounds the host buffer a verification reads the destination back through.
const verifyChunk = 16 << 20

// verify fills the source with a pattern unlike the last one and unlike the destination's initial
// fill, copies once more the way the timed copies went, and reads the destination back.
func (e *engine) verify(b *buffer, c transfer.Copy) error {
	d := e.d
	e.pattern = e.pattern%250 + 1 // 1..250: never fillByte (0xa5 = 165 is skipped below)
	if e.pattern == fillByte {
		e.pattern++
	}
	// On the copies' own stream: cuMemsetD8 would run on the NULL stream, which this
	// non-blocking stream does not wait for, and the copy could read the old pattern.
	if err := d.Check("cuMemsetD8Async", d.MemsetD8Async(e.src, e.pattern, uintptr(c.Bytes), e.stream)); err != nil {
		return err
	}
	if err := errors.Join(e.issue(b, c), d.Check("cuStreamSynchronize", d.StreamSynchronize(e.stream))); err != nil {
		return err
	}
	host := make([]byte, min(c.Bytes, verifyChunk))
	var pin runtime.Pinner
	pin.Pin(&host[0])
	defer pin.Unpin()
	for off := int64(0); off < c.Bytes; off += int64(len(host)) {
		n := min(int64(len(host)), c.Bytes-off)
		if err := d.Check("cuMemcpyDtoH", d.MemcpyDtoH(unsafe.Pointer(&host[0]), b.ptr+cuda.DevicePtr(off), uintptr(n))); err != nil {
			return err
		}
		for i, v := range host[:n] {
			if v != e.pattern {
				return fmt.Errorf("verifying %d bytes copied (%s) from GPU %d: byte %d is %#02x, the source holds %#02x: %w",
					c.Bytes, c.Kind, e.dev.GPU, off+int64(i), v, e.pattern, transfer.ErrCorrupt)
			}
		}
	}
	return nil
}

func (e *engine) ensureSource(n int64) error {
	if n <= e.srcN {
		return nil
	}
	if e.src != 0 {
		e.d.MemFree(e.src)
		e.src, e.srcN = 0, 0
	}
	p, err := e.alloc(n)
	if err != nil {
		return err
	}
	e.src, e.srcN = p, n
	return nil
}

// issue enqueues one copy of c.Bytes from the source buffer into b.
func (e *engine) issue(b *buffer, c transfer.Copy) error {
	d := e.d
	n := uintptr(c.Bytes)
	if c.Kind == transfer.SM {
		if e.kernErr != nil {
			return fmt.Errorf("SM copy: the copy kernel did not load: %w", e.kernErr)
		}
		blocks := uint32(max(1, min(int64(e.sms)*4, (c.Bytes/16+511)/512)))
		return e.launch(e.copyK, blocks, 512, uint64(b.ptr), uint64(e.src), uint64(c.Bytes))
	}
	if b.kind == peer && b.dev != e.cuDev {
		return d.Check("cuMemcpyPeerAsync", d.MemcpyPeerAsync(b.ptr, b.ctx, e.src, e.ctx, n, e.stream))
	}
	return d.Check("cuMemcpyDtoDAsync", d.MemcpyDtoDAsync(b.ptr, e.src, n, e.stream))
}

// launch starts kernel f with 64-bit arguments.
func (e *engine) launch(f cuda.Function, blocks, threads uint32, args ...uint64) error {
	vals := make([]uint64, len(args))
	copy(vals, args)
	params := make([]unsafe.Pointer, len(vals))
	var pin runtime.Pinner
	defer pin.Unpin()
	for i := range vals {
		pin.Pin(&vals[i])
		params[i] = unsafe.Pointer(&vals[i])
	}
	pin.Pin(&params[0])
	return e.d.Check("cuLaunchKernel", e.d.LaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, e.stream, &params[0], nil))
}

// timedBatch holds the stream with the spin kernel, queues k copies between event pairs, releases
// the stream (at startAt, a transfer.Monotonic reading, if not zero) and returns each copy's time
// and the host-clock moment of the release.
func (e *engine) timedBatch(ctx context.Context, b *buffer, c transfer.Copy, k int, startAt time.Duration) ([]time.Duration, time.Duration, error) {
	d := e.d
	flag := (*uint32)(e.host)
	status := (*uint32)(unsafe.Add(e.host, 4))
	if e.spin == 0 {
		return e.unheldBatch(ctx, b, c, k, startAt)
	}
	atomic.StoreUint32(flag, 0)
	atomic.StoreUint32(status, 0)
	if err := e.launch(e.spin, 1, 1, uint64(e.hostD), uint64(e.hostD)+4, uint64(spinTimeout.Nanoseconds())); err != nil {
		return nil, 0, err
	}
	release := func() { atomic.StoreUint32(flag, 1) }
	for i := range k {
		err := errors.Join(
			d.Check("cuEventRecord", d.EventRecord(e.start[i], e.stream)),
			e.issue(b, c),
			d.Check("cuEventRecord", d.EventRecord(e.end[i], e.stream)))
		if err != nil {
			release()
			d.StreamSynchronize(e.stream)
			return nil, 0, err
		}
	}
	// A cancelled wait still releases: the spin kernel must never be left holding the stream.
	waitErr := transfer.WaitUntil(ctx, startAt)
	released := transfer.Monotonic()
	release()
	if err := d.Check("cuStreamSynchronize", d.StreamSynchronize(e.stream)); err != nil {
		return nil, 0, err
	}
	if waitErr != nil {
		return nil, 0, waitErr
	}
	if s := atomic.LoadUint32(status); s != 1 {
		return nil, 0, fmt.Errorf("spin kernel ended with status %d (2: not released within %v): times would include queueing", s, spinTimeout)
	}
	out := make([]time.Duration, k)
	for i := range k {
		var ms float32
		if err := d.Check("cuEventElapsedTime", d.EventElapsedTime(&ms, e.start[i], e.end[i])); err != nil {
			return nil, 0, err
		}
		out[i] = time.Duration(float64(ms) * 1e6)
	}
	return out, released, nil
}

// unheldBatch is timedBatch without the spin kernel (it did not load): the copies are queued at
// startAt and start as they are queued, each still timed by its own events.
func (e *engine) unheldBatch(ctx context.Context, b *buffer, c transfer.Copy, k int, startAt time.Duration) ([]time.Duration, time.Duration, error) {
	d := e.d
	if err := transfer.WaitUntil(ctx, startAt); err != nil {
		return nil, 0, err
	}
	released := transfer.Monotonic()
	for i := range k {
		err := errors.Join(
			d.Check("cuEventRecord", d.EventRecord(e.start[i], e.stream)),
			e.issue(b, c),
			d.Check("cuEventRecord", d.EventRecord(e.end[i], e.stream)))
		if err != nil {
			d.StreamSynchronize(e.stream)
			return nil, 0, err
		}
	}
	if err := d.Check("cuStreamSynchronize", d.StreamSynchronize(e.stream)); err != nil {
		return nil, 0, err
	}
	out := make([]time.Duration, k)
	for i := range k {
		var ms float32
		if err := d.Check("cuEventElapsedTime", d.EventElapsedTime(&ms, e.start[i], e.end[i])); err != nil {
			return nil, 0, err
		}
		out[i] = time.Duration(float64(ms) * 1e6)
	}
	return out, released, nil
}

// freeBuf releases b: an opened IPC handle is closed; memory is freed with the context it was
// allocated in current (a peer buffer's is the peer GPU's).
func (e *engine) freeBuf(b *buffer) error {
	d := e.d
	if b.kind == ipc {
		return d.Check("cuIpcCloseMemHandle", d.IpcCloseMemHandle(b.ptr))
	}
	if b.kind != peer || b.ctx == e.ctx {
		return d.Check("cuMemFree", d.MemFree(b.ptr))
	}
	return errors.Join(d.Check("cuCtxSetCurrent", d.CtxSetCurrent(b.ctx)),
		d.Check("cuMemFree(peer buffer)", d.MemFree(b.ptr)),
		d.Check("cuCtxSetCurrent", d.CtxSetCurrent(e.ctx)))
}

func (e *engine) Free(id int) error {
	return e.th.Do(func() error {
		b, ok := e.bufs[id]
		if !ok {
			return fmt.Errorf("free buffer %d: no such buffer", id)
		}
		delete(e.bufs, id)
		return e.freeBuf(b)
	})
}

// Close frees everything; it keeps going past errors so that as much as possible is released.
// Closing again does nothing.
func (e *engine) Close() error {
	if !e.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	_ = e.th.Do(func() error {
		d := e.d
		if d == nil || e.ctx == 0 {
			return nil
		}
		// Opened IPC handles first: another process's buffer is closed here before anything of
		// this one is freed, which may be what a third process has open.
		for _, kind := range []bufKind{ipc, peer, local} {
			for id, b := range e.bufs {
				if b.kind == kind {
					errs = append(errs, e.freeBuf(b))
					delete(e.bufs, id)
				}
			}
		}
		if e.src != 0 {
			errs = append(errs, d.Check("cuMemFree", d.MemFree(e.src)))
		}
		for i := range e.start {
			if e.start[i] != 0 {
				d.EventDestroy(e.start[i])
			}
			if e.end[i] != 0 {
				d.EventDestroy(e.end[i])
			}
		}
		if e.host != nil {
			errs = append(errs, d.Check("cuMemFreeHost", d.MemFreeHost(e.host)))
		}
		if e.mod != 0 {
			d.ModuleUnload(e.mod)
		}
		if e.stream != 0 {
			d.StreamDestroy(e.stream)
		}
		for pd := range e.peers {
			d.DevicePrimaryCtxRelease(pd)
		}
		errs = append(errs, d.Check("cuDevicePrimaryCtxRelease", d.DevicePrimaryCtxRelease(e.cuDev)))
		e.ctx = 0
		return nil
	})
	e.th.Close()
	return errors.Join(errs...)
}
