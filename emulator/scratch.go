package emulator

import "sync"

// scratch is the temporary memory of one NewOrder or one walk. Sweeps and benchmarks run the
// emulator thousands of times on similar schedules; drawing these buffers from a pool instead of
// the heap keeps the garbage collector out of the event loop. Nothing from a scratch outlives
// the call that took it.
type scratch struct {
	i32    []int32
	off    int
	used   int // int32s handed out since the last release
	circs  []walkCirc
	runs   []runRec
	links  []linkRec
	h      eventHeap
	starts []float64 // per command, when it began (the emulator's loop)
	dur    []float64
	end    []float64
	cmds   []walkCmd
	cmdEps []int32
	ready  []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// keepMax is the most elements a pooled buffer keeps: a run on a schedule of millions of
// circuits releases its scratch to the garbage collector instead of parking hundreds of
// megabytes in the pool.
const keepMax = 1 << 22

func (s *scratch) release() {
	if s.used > cap(s.i32) && s.used <= keepMax {
		// This use outgrew the buffer: the next, likely a schedule of the same size, gets one
		// buffer for all its lists at once rather than a chain of ever larger ones.
		s.i32 = make([]int32, s.used)
	}
	s.off, s.used = 0, 0
	s.h, s.starts, s.cmds, s.cmdEps, s.ready = s.h[:0], s.starts[:0], s.cmds[:0], s.cmdEps[:0], s.ready[:0]
	if cap(s.i32) > keepMax || cap(s.circs) > keepMax || cap(s.dur) > keepMax || cap(s.end) > keepMax ||
		cap(s.runs) > keepMax || cap(s.links) > keepMax || cap(s.cmds) > keepMax || cap(s.cmdEps) > keepMax || cap(s.h) > keepMax {
		*s = scratch{}
	}
	scratchPool.Put(s)
}

// ints returns n int32s (contents undefined) that stay valid until release. When the buffer is
// too small a larger one replaces it; slices handed out earlier keep the old one alive.
func (s *scratch) ints(n int) []int32 {
	s.used += n
	if s.off+n > cap(s.i32) {
		s.i32 = make([]int32, max(2*cap(s.i32), s.off+n, 1024))
		s.off = 0
	}
	b := s.i32[s.off : s.off+n : s.off+n]
	s.off += n
	return b
}

// reserve makes room for n int32s in all, requested before any other of this use, so that a
// first use on a large schedule does not grow the buffer step by step.
func (s *scratch) reserve(n int) {
	if s.off == 0 && n > cap(s.i32) {
		s.i32 = make([]int32, n)
	}
}

// circuits returns n circuit records (contents undefined); one such request per scratch is in
// use at a time.
func (s *scratch) circuits(n int) []walkCirc {
	if n > cap(s.circs) {
		s.circs = make([]walkCirc, max(n, 256))
	}
	return s.circs[:n]
}

// durations returns n float64s (contents undefined); one such request per scratch is in use at a
// time.
func (s *scratch) durations(n int) []float64 {
	if n > cap(s.dur) {
		s.dur = make([]float64, max(n, 256))
	}
	return s.dur[:n]
}

// ends returns n float64s (contents undefined) for a barrier walk's circuit ends; one such
// request per scratch is in use at a time.
func (s *scratch) ends(n int) []float64 {
	if n > cap(s.end) {
		s.end = make([]float64, n)
	}
	return s.end[:n]
}

// runRecs returns n run records (contents undefined); one such request per scratch is in use at
// a time.
func (s *scratch) runRecs(n int) []runRec {
	if n > cap(s.runs) {
		s.runs = make([]runRec, n)
	}
	return s.runs[:n]
}

// linkRecs returns n link records (contents undefined); one such request per scratch is in use
// at a time.
func (s *scratch) linkRecs(n int) []linkRec {
	if n > cap(s.links) {
		s.links = make([]linkRec, n)
	}
	return s.links[:n]
}
