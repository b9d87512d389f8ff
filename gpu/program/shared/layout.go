// Package shared runs a compiled replay (package gpu/program) across processes: one worker
// process per GPU executes the programs of its endpoints, and the dependency flags, the end
// stamps, a start barrier and an abort word live in one memory-mapped file that every process
// maps (and that a GPU worker registers with the driver as pinned, device-mapped host memory).
// The host (Host) creates the file, waits until every worker has armed, releases them all at one
// start instant, plays the reconfiguration station from a thread that watches the end flags, and
// reads every stamp back at the end. A worker (Execute) runs its endpoints on a fake device
// spinning on CLOCK_MONOTONIC, the clock every process on the machine shares; a GPU worker runs
// them as stream programs on its GPU with the executor its engine registered (RegisterExecutor:
// package gpu/program/cudaprog's RunShared for the cuda engine), which reads and writes the file
// from the GPU at the offsets Mem gives (StartOffset, CircuitRecordOffset, ...).
//
// Every word that one process writes and another reads is accessed with sync/atomic; a record
// is written field by field and then published by its flag, so a reader that sees the flag sees
// the record (release/acquire through the flag). Times in the file are CLOCK_MONOTONIC
// nanoseconds: a GPU worker converts its own clock with its measured offset (Offset) before it
// writes, so that stamps from different GPUs compare.
//
// Layout, little-endian, every field at a fixed offset (Layout):
//
//	header, 64 bytes: magic, version, endpoints, circuits, signals, workers, armed (count),
//	    go (start instant, 0 until released), abort, deadline (workers give up after it),
//	    generation (bumped after every flag, a futex), sleepers on it
//	per endpoint, 8 bytes: pc<<2 | state (the step it is at; Waiting, Timing, Copying, Done)
//	per worker, 24 bytes: status (Armed, Finished, Failed), clock samples, its clock's offset
//	    and the least round trip it was measured with (Offset)
//	per circuit, 32 bytes: flag, target, start, end (target: when its waits ended)
//	per signal, 16 bytes: flag, end (its command's end)
package shared

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Magic and Version identify the layout; a worker refuses a file with other values.
const (
	Magic   uint64 = 0x314d48534c494854 // "THILSHM1"
	Version uint32 = 1
)

// States of an endpoint, in the order it passes through them for each step.
const (
	Waiting uint32 = iota // for the flags of its next step
	Timing                // its waits are over; it waits for the clock to reach the target
	Copying               // its copy runs
	Done                  // every step ended
)

// Statuses of a worker.
const (
	Armed    uint32 = 1 // mapped, validated, waiting for the start
	Finished uint32 = 2
	Failed   uint32 = 3
)

// Sizes of the records.
const (
	headerBytes   = 64
	endpointBytes = 8
	workerBytes   = 24
	circuitBytes  = 32
	signalBytes   = 16
)

// Header fields.
const (
	offMagic     = 0
	offVersion   = 8
	offEndpoints = 12
	offCircuits  = 16
	offSignals   = 20
	offWorkers   = 24
	offArmed     = 28
	offGo        = 32
	offAbort     = 40
	offDeadline  = 48
	offGen       = 56 // bumped on every flag written; waiters sleep on it (futex)
	offWaiters   = 60 // processes asleep on offGen
)

// Dims are the sizes a file holds records for.
type Dims struct {
	Endpoints, Circuits, Signals, Workers int
}

// Layout gives the offsets of the record arrays for d and the file's size.
func Layout(d Dims) (endpoints, workers, circuits, signals, size int) {
	endpoints = headerBytes
	workers = endpoints + d.Endpoints*endpointBytes
	circuits = workers + d.Workers*workerBytes
	circuits = (circuits + 31) &^ 31
	signals = circuits + d.Circuits*circuitBytes
	size = signals + d.Signals*signalBytes
	return
}

// Mem is one process's mapping of the file.
type Mem struct {
	Path                   string
	Dims                   Dims
	b                      []byte
	offE, offW, offC, offS int
}

// Create makes the file at path (which must not exist) for d, maps it and writes the header.
func Create(path string, d Dims) (*Mem, error) {
	if d.Endpoints < 1 || d.Circuits < 0 || d.Signals < 0 || d.Workers < 1 || d.Circuits > 1<<30 || d.Signals > 1<<30 || d.Endpoints > 1<<20 || d.Workers > 1<<20 {
		return nil, fmt.Errorf("shared memory %s: bad sizes %+v", path, d)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	defer f.Close()
	_, _, _, _, size := Layout(d)
	if err := f.Truncate(int64(size)); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("shared memory %s: %w", path, err)
	}
	m, err := mapFile(f, path, size)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	m.setDims(d)
	m.store32(offVersion, Version)
	m.store32(offEndpoints, uint32(d.Endpoints))
	m.store32(offCircuits, uint32(d.Circuits))
	m.store32(offSignals, uint32(d.Signals))
	m.store32(offWorkers, uint32(d.Workers))
	atomic.StoreUint64(m.u64(offMagic), Magic) // last: a reader that sees the magic sees the rest
	return m, nil
}

// Open maps an existing file and checks its header against want.
func Open(path string, want Dims) (*Mem, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	_, _, _, _, size := Layout(want)
	if fi.Size() != int64(size) {
		return nil, fmt.Errorf("shared memory %s: %d bytes, the program needs %d (%+v)", path, fi.Size(), size, want)
	}
	m, err := mapFile(f, path, size)
	if err != nil {
		return nil, err
	}
	got := Dims{Endpoints: int(m.load32(offEndpoints)), Circuits: int(m.load32(offCircuits)),
		Signals: int(m.load32(offSignals)), Workers: int(m.load32(offWorkers))}
	if mg, v := atomic.LoadUint64(m.u64(offMagic)), m.load32(offVersion); mg != Magic || v != Version || got != want {
		m.Close()
		return nil, fmt.Errorf("shared memory %s: magic %#x version %d sizes %+v; want %#x, %d, %+v", path, mg, v, got, Magic, Version, want)
	}
	m.setDims(want)
	return m, nil
}

func mapFile(f *os.File, path string, size int) (*Mem, error) {
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shared memory %s: mmap: %w", path, err)
	}
	return &Mem{Path: path, b: b}, nil
}

func (m *Mem) setDims(d Dims) {
	m.Dims = d
	m.offE, m.offW, m.offC, m.offS, _ = Layout(d)
}

// Close unmaps the file (it stays on disk; the host removes it).
func (m *Mem) Close() error {
	if m.b == nil {
		return nil
	}
	err := unix.Munmap(m.b)
	m.b = nil
	return err
}

// Bytes is the mapping, for registering it with a driver; its first byte is page-aligned.
func (m *Mem) Bytes() []byte { return m.b }

func (m *Mem) u32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&m.b[off])) }
func (m *Mem) u64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&m.b[off])) }
func (m *Mem) i64(off int) *int64  { return (*int64)(unsafe.Pointer(&m.b[off])) }

func (m *Mem) load32(off int) uint32     { return atomic.LoadUint32(m.u32(off)) }
func (m *Mem) store32(off int, v uint32) { atomic.StoreUint32(m.u32(off), v) }

// Arm counts the caller's worker in and marks it armed.
func (m *Mem) Arm(worker int) {
	m.SetStatus(worker, Armed)
	atomic.AddUint32(m.u32(offArmed), 1)
}

// ArmedCount is how many workers have armed.
func (m *Mem) ArmedCount() int { return int(m.load32(offArmed)) }

// Release sets the start instant (CLOCK_MONOTONIC ns) and the instant workers give up.
func (m *Mem) Release(start, deadline int64) {
	atomic.StoreInt64(m.i64(offDeadline), deadline)
	atomic.StoreInt64(m.i64(offGo), start)
}

// Start is the start instant, 0 before Release.
func (m *Mem) Start() int64 { return atomic.LoadInt64(m.i64(offGo)) }

// Deadline is the instant workers give up, valid once Start is not 0.
func (m *Mem) Deadline() int64 { return atomic.LoadInt64(m.i64(offDeadline)) }

// Abort tells every worker to stop where it is.
func (m *Mem) Abort() {
	m.store32(offAbort, 1)
	m.bump()
}

// Aborted says whether Abort was called.
func (m *Mem) Aborted() bool { return m.load32(offAbort) != 0 }

// SetStatus and Status are a worker's status word.
func (m *Mem) SetStatus(worker int, s uint32) { m.store32(m.offW+worker*workerBytes, s) }

// Status is worker w's status word.
func (m *Mem) Status(worker int) uint32 { return m.load32(m.offW + worker*workerBytes) }

// SetClock records worker w's clock offset (host = device + offset, ns) and the round trip it
// was measured with.
func (m *Mem) SetClock(worker, samples int, offset, rtt int64) {
	o := m.offW + worker*workerBytes
	m.store32(o+4, uint32(samples))
	atomic.StoreInt64(m.i64(o+8), offset)
	atomic.StoreInt64(m.i64(o+16), rtt)
}

// Clock is worker w's clock measurement, as SetClock left it.
func (m *Mem) Clock(worker int) (samples int, offset, rtt int64) {
	o := m.offW + worker*workerBytes
	return int(m.load32(o + 4)), atomic.LoadInt64(m.i64(o + 8)), atomic.LoadInt64(m.i64(o + 16))
}

// SetEndpoint publishes where endpoint e is: at step pc, in state, in one word (pc<<2 | state),
// so that a reader never sees a step with another step's state.
func (m *Mem) SetEndpoint(e, pc int, state uint32) {
	m.store32(m.offE+e*endpointBytes, uint32(pc)<<2|state)
}

// Endpoint is where endpoint e is.
func (m *Mem) Endpoint(e int) (pc int, state uint32) {
	w := m.load32(m.offE + e*endpointBytes)
	return int(w >> 2), w & 3
}

// Record is one circuit's stamps, CLOCK_MONOTONIC ns.
type Record struct{ Target, Start, End int64 }

// EndCircuit writes circuit c's stamps and then its flag.
func (m *Mem) EndCircuit(c int, r Record) {
	o := m.offC + c*circuitBytes
	atomic.StoreInt64(m.i64(o+8), r.Target)
	atomic.StoreInt64(m.i64(o+16), r.Start)
	atomic.StoreInt64(m.i64(o+24), r.End)
	m.store32(o, 1)
	m.bump()
}

// Circuit reads circuit c's flag and, when it is set, its stamps.
func (m *Mem) Circuit(c int) (Record, bool) {
	o := m.offC + c*circuitBytes
	if m.load32(o) == 0 {
		return Record{}, false
	}
	return Record{Target: atomic.LoadInt64(m.i64(o + 8)), Start: atomic.LoadInt64(m.i64(o + 16)), End: atomic.LoadInt64(m.i64(o + 24))}, true
}

// CircuitEnd is circuit c's end stamp once its flag is set.
func (m *Mem) CircuitEnd(c int) (int64, bool) {
	o := m.offC + c*circuitBytes
	if m.load32(o) == 0 {
		return 0, false
	}
	return atomic.LoadInt64(m.i64(o + 24)), true
}

// IssueSignal writes signal g's command end and then its flag.
func (m *Mem) IssueSignal(g int, end int64) {
	o := m.offS + g*signalBytes
	atomic.StoreInt64(m.i64(o+8), end)
	m.store32(o, 1)
	m.bump()
}

// SignalEnd is signal g's command end once its flag is set.
func (m *Mem) SignalEnd(g int) (int64, bool) {
	o := m.offS + g*signalBytes
	if m.load32(o) == 0 {
		return 0, false
	}
	return atomic.LoadInt64(m.i64(o + 8)), true
}

// Offsets of the flags, for a device that waits on them (cuStreamWaitValue32): a circuit's and
// a signal's flag are 32-bit words, its stamp the 64-bit word 8 (circuit end: 24) bytes on.
func (m *Mem) CircuitFlagOffset(c int) int { return m.offC + c*circuitBytes }

// SignalFlagOffset is the offset of signal g's flag in the mapping.
func (m *Mem) SignalFlagOffset(g int) int { return m.offS + g*signalBytes }

// ErrAborted is returned by a worker whose run the host aborted.
var ErrAborted = errors.New("the host aborted the run")

// Offsets in the mapping for an executor that reads and writes the file from a device (a GPU's
// stream program, package gpu/program/cudaprog), all multiples of 8 but the flags' (multiples of
// 4): the start instant (int64, 0 until Release), circuit c's record (its flag, a 32-bit word;
// then target, start and end, int64, at +8, +16, +24), signal g's end (int64, 8 bytes after its
// flag) and endpoint e's word (pc<<2 | state, EndpointWord).
func (m *Mem) StartOffset() int { return offGo }

// AbortOffset is the offset of the abort word (32 bits, not 0 once aborted).
func (m *Mem) AbortOffset() int { return offAbort }

// CircuitRecordOffset is the offset of circuit c's record (its flag).
func (m *Mem) CircuitRecordOffset(c int) int { return m.offC + c*circuitBytes }

// SignalEndOffset is the offset of signal g's command end.
func (m *Mem) SignalEndOffset(g int) int { return m.offS + g*signalBytes + 8 }

// EndpointOffset is the offset of endpoint e's word.
func (m *Mem) EndpointOffset(e int) int { return m.offE + e*endpointBytes }

// EndpointWord is the word SetEndpoint writes for step pc in state.
func EndpointWord(pc int, state uint32) uint32 { return uint32(pc)<<2 | state }
