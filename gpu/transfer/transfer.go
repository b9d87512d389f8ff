// Package transfer defines Engine, the one interface through which the harness moves bytes from
// one GPU to another, and a registry of engine drivers in the style of database/sql: a backend
// registers itself by name in its init function, a program selects one by name (from a flag) and
// links it in with a blank import. Backends: "cuda" (package transfer/cudaengine, real GPUs through
// the CUDA driver) and "fake" (package transfer/fake, an α-β model with noise).
//
// An Engine lives in one worker process and drives that process's GPU. A transfer between two
// GPUs involves two engines: the receiver exports a buffer, the sender imports it and copies into
// it, and the sender's engine times the copies.
package transfer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Kind is how a copy is carried out on the GPU.
type Kind string

const (
	// CE copies with the GPU's copy engines (cuMemcpyDtoDAsync).
	CE Kind = "ce"
	// SM copies with a kernel on the streaming multiprocessors, which loads and stores the bytes.
	SM Kind = "sm"
)

// ParseKind accepts "ce" or "sm".
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case CE, SM:
		return k, nil
	}
	return "", fmt.Errorf("copy kind %q: want ce or sm", s)
}

// Device identifies a GPU for an engine: its NVML index (which names it to people), its CUDA
// ordinal in the worker's environment, and its PCI bus id, which the engine checks against what
// CUDA reports for that ordinal.
type Device struct {
	GPU         int    `json:"gpu"`
	CUDAOrdinal int    `json:"cuda_ordinal"`
	BusID       string `json:"bus_id"`
}

// Copy describes one batch of timed copies.
type Copy struct {
	Bytes  int64 `json:"bytes"`
	Reps   int   `json:"reps"`   // timed copies
	Warmup int   `json:"warmup"` // untimed copies before them
	Kind   Kind  `json:"kind"`
	// Verify has the engine check the copied bytes after the timed copies: it fills the source
	// with a fresh pattern, copies once more and compares the destination with it. A mismatch is
	// an error wrapping ErrCorrupt, never a time.
	Verify bool `json:"verify,omitempty"`
	// StartAt, a Monotonic reading, is when the first timed copy is released: engines in several
	// processes given the same StartAt start together (a permutation of concurrent copies). Zero
	// releases as soon as the copies are queued.
	StartAt time.Duration `json:"start_at_ns,omitempty"`
}

// Timing is what one Copy call measured.
type Timing struct {
	// Times is the GPU's duration (CUDA events) of each timed copy, in order.
	Times []time.Duration
	// HostStart and HostEnd are Monotonic readings: when the first timed copy was released and
	// when the last was seen complete. CLOCK_MONOTONIC is one clock for every process on the
	// machine, so a coordinator can place the copies of many workers on one timeline.
	HostStart, HostEnd time.Duration
}

// ErrCorrupt marks a copy whose destination does not hold the bytes of its source.
var ErrCorrupt = errors.New("copied bytes differ from the source")

// Monotonic reads CLOCK_MONOTONIC: time since boot, the same in every process (Go's own
// monotonic readings are relative to each process's start, so they cannot be compared across
// workers).
func Monotonic() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		// CLOCK_MONOTONIC exists on every Linux; fall back to a wall-clock reading.
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}

// WaitUntil sleeps until the Monotonic clock reads t (at once if it already has, or t is zero),
// or ctx ends.
func WaitUntil(ctx context.Context, t time.Duration) error {
	d := t - Monotonic()
	if t == 0 || d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// MaxReps bounds Copy.Reps and Copy.Warmup: one batch's times must fit one reply of the worker
// protocol (at most 21 bytes each in JSON, 2.1 MB for MaxReps, well inside its 16 MiB line
// limit), and a worker must not grow by a gigabyte of times because a flag had a typo. A
// statistic needs tens of copies; a longer measurement takes several batches.
const MaxReps = 100_000

// Validate checks the numbers of a Copy.
func (c Copy) Validate() error {
	if c.Bytes <= 0 || c.Reps <= 0 || c.Warmup < 0 || c.StartAt < 0 {
		return fmt.Errorf("copy of %d bytes, %d reps, %d warmup: want bytes > 0, reps > 0, warmup >= 0", c.Bytes, c.Reps, c.Warmup)
	}
	if c.Reps > MaxReps || c.Warmup > MaxReps {
		return fmt.Errorf("copy of %d reps, %d warmup: at most %d each (transfer.MaxReps)", c.Reps, c.Warmup, MaxReps)
	}
	if _, err := ParseKind(string(c.Kind)); err != nil {
		return err
	}
	return nil
}

// ErrIPCUnsupported is returned by Export or Import where buffers cannot be shared between
// processes; the caller falls back to a same-process peer copy (Engine.Peer).
var ErrIPCUnsupported = errors.New("CUDA IPC unsupported")

// Engine drives one GPU from one process. Buffers are named by small integers the engine hands
// out. Callers use an Engine from one goroutine at a time.
type Engine interface {
	// Device is the GPU this engine drives.
	Device() Device
	// Export allocates n bytes on this GPU as a copy destination and returns its id and a handle
	// that an engine in another process can Import.
	Export(ctx context.Context, n int64) (id int, handle []byte, err error)
	// Import maps a buffer exported by another process's engine, as a copy destination.
	Import(ctx context.Context, handle []byte) (id int, err error)
	// Peer allocates n bytes on another GPU of this process as a copy destination: the fallback
	// when IPC is unavailable.
	Peer(ctx context.Context, peer Device, n int64) (id int, err error)
	// Copy copies c.Bytes from a source buffer on this GPU into destination dst, c.Warmup times
	// untimed and then c.Reps times timed on the GPU (released at c.StartAt), and returns the
	// duration of each timed copy with the host-clock span of them all; with c.Verify it then
	// checks the copied bytes.
	Copy(ctx context.Context, dst int, c Copy) (Timing, error)
	// Free releases a buffer made by Export, Import or Peer.
	Free(id int) error
	// Close releases everything the engine holds.
	Close() error
}

// Config is what an engine is opened with: its device and a driver-specific option string, like a
// database/sql data source name.
type Config struct {
	Device  Device
	Options string
}

// Driver opens an engine.
type Driver func(ctx context.Context, cfg Config) (Engine, error)

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes a driver available by name. It panics on a duplicate name or a nil driver, which
// are programming errors caught at init time.
func Register(name string, d Driver) {
	mu.Lock()
	defer mu.Unlock()
	if d == nil {
		panic("transfer: Register driver is nil")
	}
	if _, dup := drivers[name]; dup {
		panic("transfer: Register called twice for driver " + name)
	}
	drivers[name] = d
}

// Drivers lists the registered driver names, sorted.
func Drivers() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open opens an engine with the named driver.
func Open(ctx context.Context, name string, cfg Config) (Engine, error) {
	mu.RLock()
	d, ok := drivers[name]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("transfer engine %q: not registered (have %v)", name, Drivers())
	}
	return d(ctx, cfg)
}

// Median returns the median of ds (the mean of the middle two for an even count); 0 for none.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
