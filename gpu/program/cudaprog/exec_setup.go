package cudaprog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/tetris-hil/tetris-hil/gpu/cuda"
	"github.com/tetris-hil/tetris-hil/gpu/program/shared"
)

// setup allocates the worker's block, its buffers and one stream per endpoint, and enqueues
// every endpoint's program behind the go flag (on the CUDA thread).
func (x *sharedRun) setup() error {
	d := x.g.d
	slots := 0
	for _, e := range x.w.Endpoints {
		for _, s := range x.p.Endpoints[e] {
			slots += 1 + len(s.After) + len(s.Signals)
		}
	}
	size := uintptr(blkIdx + 4*max(slots, 1))
	if err := d.Check("cuMemHostAlloc", d.MemHostAlloc(&x.blk, size, cuda.MemHostAllocPortable|cuda.MemHostAllocDeviceMap)); err != nil {
		x.blk = nil
		return err
	}
	clear(unsafe.Slice((*byte)(x.blk), size))
	if err := d.Check("cuMemHostGetDevicePointer", d.MemHostGetDevicePointer(&x.blkD, x.blk, 0)); err != nil {
		return err
	}
	if err := x.buffers(); err != nil {
		return err
	}
	idx := 0
	for _, e := range x.w.Endpoints {
		var s cuda.Stream
		if err := d.Check("cuStreamCreate", d.StreamCreate(&s, cuda.StreamNonBlocking)); err != nil {
			return err
		}
		x.streams = append(x.streams, s)
		var err error
		if idx, err = x.enqueue(s, e, idx); err != nil {
			return fmt.Errorf("endpoint %d: %w", e, err)
		}
	}
	return nil
}

// buffers allocates a source buffer per endpoint of this worker and a destination per pair: on
// this GPU where the receiving endpoint is this worker's, else the buffer the receiving worker
// exported (Work.Buffers), imported.
func (x *sharedRun) buffers() error {
	d := x.g.d
	x.src = map[int]cuda.DevicePtr{}
	srcBytes := map[int]int64{}
	dstBytes := map[[2]int]int64{}
	for _, e := range x.w.Endpoints {
		for _, s := range x.p.Endpoints[e] {
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
		x.bufs = append(x.bufs, p)
		return p, nil
	}
	for _, e := range x.w.Endpoints {
		p, err := alloc(srcBytes[e])
		if err != nil {
			return err
		}
		x.src[e] = p
	}
	for _, k := range sortedPairs(dstBytes) {
		if dstBytes[k] == 0 {
			continue // no copy moves a byte: nothing to copy into
		}
		if slices.Contains(x.w.Endpoints, k[1]) {
			p, err := alloc(dstBytes[k])
			if err != nil {
				return err
			}
			x.dst[k] = p
			continue
		}
		p, err := x.importBuffer(k, dstBytes[k])
		if err != nil {
			return err
		}
		x.dst[k] = p
	}
	return nil
}

func sortedPairs(m map[[2]int]int64) [][2]int {
	out := make([][2]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return out
}

// importBuffer opens the buffer the receiving worker exported for pair k.
func (x *sharedRun) importBuffer(k [2]int, need int64) (cuda.DevicePtr, error) {
	i := slices.IndexFunc(x.w.Buffers, func(b shared.Buffer) bool { return b.Src == k[0] && b.Dst == k[1] })
	if i < 0 {
		return 0, fmt.Errorf("copies %d→%d go to another worker's GPU, and the job carries no exported buffer for them", k[0], k[1])
	}
	b := x.w.Buffers[i]
	// The handle as the cuda engine exports it: CUDA's 64 bytes, then the buffer's size
	// (little-endian 64 bits), which CUDA's handle does not carry.
	var h cuda.IpcMemHandle
	if len(b.Handle) != len(h.Reserved)+8 {
		return 0, fmt.Errorf("the exported buffer for %d→%d has a handle of %d bytes, want %d (a CUDA IPC handle and a size)", k[0], k[1], len(b.Handle), len(h.Reserved)+8)
	}
	copy(h.Reserved[:], b.Handle)
	if n := binary.LittleEndian.Uint64(b.Handle[len(h.Reserved):]); n < uint64(need) {
		return 0, fmt.Errorf("the exported buffer for %d→%d holds %d bytes, its largest copy is %d", k[0], k[1], n, need)
	}
	var p cuda.DevicePtr
	if err := x.g.d.Check("cuIpcOpenMemHandle", x.g.d.IpcOpenMemHandle(&p, h, cuda.IpcMemLazyEnablePeerAcces)); err != nil {
		return 0, fmt.Errorf("importing the buffer for %d→%d: %w", k[0], k[1], err)
	}
	x.imported = append(x.imported, p)
	return p, nil
}

// enqueue puts endpoint e's program on stream s: the go flag, then per step its waits, the
// delay kernel, the copy and the stamp kernel. idx is the next free dependency slot.
func (x *sharedRun) enqueue(s cuda.Stream, e, idx int) (int, error) {
	g, m := x.g, x.m
	dev := func(off int) uint64 { return uint64(x.base) + uint64(off) }
	wait := func(ptr uint64) error {
		return g.d.Check("cuStreamWaitValue32", g.ops.StreamWaitValue32(s, cuda.DevicePtr(ptr), 1, waitValueGEQ))
	}
	put := func(off int) {
		*(*uint32)(unsafe.Add(x.blk, blkIdx+4*idx)) = uint32(off / 8)
		idx++
	}
	if err := wait(uint64(x.blkD)); err != nil {
		return idx, err
	}
	limit := uint64(x.timeout.Nanoseconds())
	offset := uint64(x.off.OffsetNS)
	steps := x.p.Endpoints[e]
	for pc, st := range steps {
		lo := idx
		put(m.StartOffset())
		for _, a := range st.After {
			rec := m.CircuitRecordOffset(int(a))
			x.waits = append(x.waits, rec)
			if err := wait(dev(rec)); err != nil {
				return idx, err
			}
			put(rec + 24)
		}
		for _, sg := range st.Signals {
			flag := m.SignalFlagOffset(int(sg))
			x.waits = append(x.waits, flag)
			if err := wait(dev(flag)); err != nil {
				return idx, err
			}
			put(m.SignalEndOffset(int(sg)))
		}
		c := int(st.Circuit)
		rec := m.CircuitRecordOffset(c)
		if err := g.launch(s, g.sdelayK, 1, 1, uint64(x.base), uint64(x.blkD)+uint64(blkIdx+4*lo), uint64(idx-lo), dev(rec+8), limit, offset, dev(m.AbortOffset())); err != nil {
			return idx, err
		}
		if st.Bytes > 0 {
			if err := g.copyAsync(s, x.dst[[2]int{e, int(st.Dst)}], x.src[e], st.Bytes); err != nil {
				return idx, err
			}
		}
		next := shared.EndpointWord(pc+1, shared.Waiting)
		if pc+1 == len(steps) {
			next = shared.EndpointWord(pc+1, shared.Done)
		}
		if err := g.launch(s, g.sstampK, 1, 1, dev(rec+24), dev(rec), offset, dev(m.EndpointOffset(e)), uint64(next)); err != nil {
			return idx, err
		}
	}
	return idx, nil
}

// sync waits for every stream.
func (x *sharedRun) sync() error {
	var errs []error
	for _, s := range x.streams {
		errs = append(errs, x.g.d.Check("cuStreamSynchronize", x.g.d.StreamSynchronize(s)))
	}
	return errors.Join(errs...)
}

// free releases the streams, the imported and allocated buffers and the block.
func (x *sharedRun) free() error {
	d := x.g.d
	var errs []error
	for _, s := range x.streams {
		errs = append(errs, d.Check("cuStreamDestroy", d.StreamDestroy(s)))
	}
	for _, p := range x.imported {
		errs = append(errs, d.Check("cuIpcCloseMemHandle", d.IpcCloseMemHandle(p)))
	}
	for _, p := range x.bufs {
		errs = append(errs, d.Check("cuMemFree", d.MemFree(p)))
	}
	if x.blk != nil {
		errs = append(errs, d.Check("cuMemFreeHost", d.MemFreeHost(x.blk)))
	}
	x.streams, x.imported, x.bufs, x.blk = nil, nil, nil, nil
	return errors.Join(errs...)
}
