package emulator

import "sync"

// scratch is the temporary memory of one NewOrder or one walk. Sweeps and benchmarks run the
// emulator thousands of times on similar schedules; drawing these buffers from a pool instead of
// the heap keeps the garbage collector out of the event loop. Nothing from a scratch outlives
// the call that took it.
type scratch struct {
	i32      []int32
	off      int
	f64      []float64
	h        eventHeap
	batches  []batch
	batchEps []int32
	reqs     []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func (s *scratch) release() {
	s.off = 0
	s.h, s.batches, s.batchEps, s.reqs = s.h[:0], s.batches[:0], s.batchEps[:0], s.reqs[:0]
	scratchPool.Put(s)
}

// ints returns n int32s (contents undefined) that stay valid until release. When the buffer is
// too small a larger one replaces it; slices handed out earlier keep the old one alive.
func (s *scratch) ints(n int) []int32 {
	if s.off+n > cap(s.i32) {
		s.i32 = make([]int32, max(2*cap(s.i32), s.off+n, 1024))
		s.off = 0
	}
	b := s.i32[s.off : s.off+n : s.off+n]
	s.off += n
	return b
}

// floats returns n float64s (contents undefined); one such request per scratch is in use at a time.
func (s *scratch) floats(n int) []float64 {
	if n > cap(s.f64) {
		s.f64 = make([]float64, max(n, 1024))
	}
	return s.f64[:n]
}
