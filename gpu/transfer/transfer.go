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
}

// Validate checks the numbers of a Copy.
func (c Copy) Validate() error {
	if c.Bytes <= 0 || c.Reps <= 0 || c.Warmup < 0 {
		return fmt.Errorf("copy of %d bytes, %d reps, %d warmup: want bytes > 0, reps > 0, warmup >= 0", c.Bytes, c.Reps, c.Warmup)
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
	// untimed and then c.Reps times timed on the GPU, and returns the duration of each timed copy.
	Copy(ctx context.Context, dst int, c Copy) ([]time.Duration, error)
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
