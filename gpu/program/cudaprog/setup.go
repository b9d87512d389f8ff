package cudaprog

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/tetris-hil/tetris-hil/gpu/cuda"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

// setup allocates the mapped host block, the buffers and one stream per endpoint, and enqueues
// every endpoint's program behind the go flag (on the CUDA thread).
func (r *run) setup() error {
	d := r.g.d
	deps := 0
	for _, steps := range r.p.Endpoints {
		for _, s := range steps {
			deps += len(s.After) + len(s.Signals)
		}
	}
	slots := 2 + r.n + r.ns
	r.offFlag = uintptr(8 * slots)
	r.offAbort = r.offFlag + uintptr(4*slots)
	r.offOut = align(r.offAbort+4, 16)
	r.offIdx = r.offOut + uintptr(16*r.n)
	r.size = r.offIdx + uintptr(4*max(deps, 1))
	if err := d.Check("cuMemHostAlloc", d.MemHostAlloc(&r.host, r.size, cuda.MemHostAllocPortable|cuda.MemHostAllocDeviceMap)); err != nil {
		r.host = nil
		return err
	}
	clear(unsafe.Slice((*byte)(r.host), r.size))
	if err := d.Check("cuMemHostGetDevicePointer", d.MemHostGetDevicePointer(&r.hostD, r.host, 0)); err != nil {
		return err
	}
	if err := r.buffers(); err != nil {
		return err
	}
	r.streams = make([]cuda.Stream, len(r.p.Endpoints))
	idx := 0
	for e := range r.p.Endpoints {
		if err := d.Check("cuStreamCreate", d.StreamCreate(&r.streams[e], cuda.StreamNonBlocking)); err != nil {
			return err
		}
		var err error
		if idx, err = r.enqueue(e, idx); err != nil {
			return err
		}
	}
	return nil
}

func align(x, a uintptr) uintptr { return (x + a - 1) &^ (a - 1) }

// buffers allocates each endpoint's source buffer and each pair's destination buffer, as large
// as its largest copy.
func (r *run) buffers() error {
	d := r.g.d
	srcBytes := make([]int64, len(r.p.Endpoints))
	dstBytes := map[[2]int]int64{}
	for e, steps := range r.p.Endpoints {
		for _, s := range steps {
			srcBytes[e] = max(srcBytes[e], s.Bytes)
			k := [2]int{e, int(s.Dst)}
			dstBytes[k] = max(dstBytes[k], s.Bytes)
		}
	}
	alloc := func(n int64) (cuda.DevicePtr, error) {
		var p cuda.DevicePtr
		if err := d.Check("cuMemAlloc", d.MemAlloc(&p, uintptr(max(n, 16)))); err != nil {
			return 0, err
		}
		r.bufs = append(r.bufs, p)
		return p, nil
	}
	r.src = make([]cuda.DevicePtr, len(r.p.Endpoints))
	for e, n := range srcBytes {
		p, err := alloc(n)
		if err != nil {
			return err
		}
		r.src[e] = p
	}
	for k, n := range dstBytes {
		p, err := alloc(n)
		if err != nil {
			return err
		}
		r.dst[k] = p
	}
	return nil
}

// enqueue puts endpoint e's program on its stream: the go flag, then per step its waits, the
// delay kernel, the copy and the stamp kernel. idx is the next free dependency slot.
func (r *run) enqueue(e, idx int) (int, error) {
	g, s := r.g, r.streams[e]
	flagD := func(i int) cuda.DevicePtr { return r.hostD + cuda.DevicePtr(r.offFlag) + cuda.DevicePtr(4*i) }
	wait := func(i int) error {
		return g.d.Check("cuStreamWaitValue32", g.ops.StreamWaitValue32(s, flagD(i), 1, waitValueGEQ))
	}
	if err := wait(0); err != nil {
		return idx, err
	}
	limit := uint64(g.cfg.Timeout.Nanoseconds())
	for _, st := range r.p.Endpoints[e] {
		lo := idx
		for _, a := range st.After {
			*(*uint32)(unsafe.Add(r.host, r.offIdx+uintptr(4*idx))) = uint32(1 + a)
			idx++
		}
		for _, sg := range st.Signals {
			*(*uint32)(unsafe.Add(r.host, r.offIdx+uintptr(4*idx))) = uint32(1 + r.n + int(sg))
			idx++
		}
		for j := lo; j < idx; j++ {
			if err := wait(int(*(*uint32)(unsafe.Add(r.host, r.offIdx+uintptr(4*j))))); err != nil {
				return idx, err
			}
		}
		c := int(st.Circuit)
		if err := r.launch(s, g.delayK, 1, 1, uint64(r.hostD), uint64(r.hostD)+uint64(r.offIdx)+uint64(4*lo), uint64(idx-lo),
			uint64(r.hostD)+uint64(r.offOut)+uint64(16*c), limit, uint64(r.hostD)+uint64(r.offAbort)); err != nil {
			return idx, err
		}
		if err := r.copy(s, e, st.Dst, st.Bytes); err != nil {
			return idx, err
		}
		if err := r.launch(s, g.stampK, 1, 1, uint64(r.hostD)+uint64(8*(1+c)), uint64(flagD(1+c))); err != nil {
			return idx, err
		}
	}
	return idx, nil
}

// copy enqueues one copy of bytes from endpoint e's source buffer into the pair's buffer.
func (r *run) copy(s cuda.Stream, e int, dst int32, bytes int64) error {
	return r.g.copyAsync(s, r.dst[[2]int{e, int(dst)}], r.src[e], bytes)
}

// copyAsync enqueues one copy of bytes from one buffer into another on stream s, with the copy
// engines or the SM copy kernel.
func (g *Device) copyAsync(s cuda.Stream, to, from cuda.DevicePtr, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	if g.cfg.Kind == transfer.SM {
		blocks := uint32(max(1, min(int64(g.sms)*4, (bytes/16+511)/512)))
		return g.launch(s, g.copyK, blocks, 512, uint64(to), uint64(from), uint64(bytes))
	}
	return g.d.Check("cuMemcpyDtoDAsync", g.d.MemcpyDtoDAsync(to, from, uintptr(bytes), s))
}

// launch starts kernel f on stream s with 64-bit arguments.
func (r *run) launch(s cuda.Stream, f cuda.Function, blocks, threads uint32, args ...uint64) error {
	return r.g.launch(s, f, blocks, threads, args...)
}

// launch starts kernel f on stream s with 64-bit arguments.
func (g *Device) launch(s cuda.Stream, f cuda.Function, blocks, threads uint32, args ...uint64) error {
	vals := append([]uint64(nil), args...)
	params := make([]unsafe.Pointer, len(vals))
	var pin runtime.Pinner
	defer pin.Unpin()
	for i := range vals {
		pin.Pin(&vals[i])
		params[i] = unsafe.Pointer(&vals[i])
	}
	pin.Pin(&params[0])
	return g.d.Check("cuLaunchKernel", g.d.LaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, s, &params[0], nil))
}

// gpuNow reads %globaltimer: the stamp kernel writes it into the scratch slot.
func (r *run) gpuNow() (uint64, error) {
	var now uint64
	err := r.g.th.Do(func() error {
		d := r.g.d
		var s cuda.Stream
		if err := d.Check("cuStreamCreate", d.StreamCreate(&s, cuda.StreamNonBlocking)); err != nil {
			return err
		}
		scratch := 1 + r.n + r.ns
		slot := uint64(r.hostD) + uint64(8*scratch)
		flag := uint64(r.hostD) + uint64(r.offFlag) + uint64(4*scratch)
		err := errors.Join(r.launch(s, r.g.stampK, 1, 1, slot, flag), d.Check("cuStreamSynchronize", d.StreamSynchronize(s)))
		now = *r.stamp(scratch)
		return errors.Join(err, d.Check("cuStreamDestroy", d.StreamDestroy(s)))
	})
	return now, err
}

// sync waits for every stream.
func (r *run) sync() error {
	var errs []error
	for _, s := range r.streams {
		if s != 0 {
			errs = append(errs, r.g.d.Check("cuStreamSynchronize", r.g.d.StreamSynchronize(s)))
		}
	}
	return errors.Join(errs...)
}

// free releases streams, buffers and the host block.
func (r *run) free() error {
	d := r.g.d
	var errs []error
	for _, s := range r.streams {
		if s != 0 {
			errs = append(errs, d.Check("cuStreamDestroy", d.StreamDestroy(s)))
		}
	}
	for _, p := range r.bufs {
		errs = append(errs, d.Check("cuMemFree", d.MemFree(p)))
	}
	if r.host != nil {
		errs = append(errs, d.Check("cuMemFreeHost", d.MemFreeHost(r.host)))
	}
	r.streams, r.bufs, r.host = nil, nil, nil
	return errors.Join(errs...)
}
