// Package fake is the "fake" transfer engine: no GPU, copy times drawn from a per-pair α-β
// (Hockney) model T(m) = α + m/B with multiplicative noise and occasional outliers, seeded per
// (seed, pair, size) so that repeated and resumed measurements draw the same times, so that
// calibration, fitting and replay run end to end on any machine. It runs inside worker processes
// like the real engine, and its buffer handles cross process boundaries the way CUDA IPC handles
// do, so the coordinator code it exercises is the real one.
//
// It can also be told to crash or hang in a given operation, to test that the coordinator notices.
package fake

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/transfer"
)

func init() { transfer.Register("fake", open) }

// Model is the fake's timing model and behaviour; its String form is the engine's option string.
type Model struct {
	Alpha     float64 // latency α in seconds
	Bandwidth float64 // bandwidth B in bytes per second
	// Spread is how far each ordered pair's α and B lie from Alpha and Bandwidth (a fixed,
	// seed-independent ±fraction), so that pairs differ as on a real machine.
	Spread float64
	// Noise is the standard deviation of the log of each copy's time: σ = 0.02 is about ±2 %.
	Noise float64
	// Outliers is the probability that a copy is an outlier, OutlierFactor times slower (a
	// preempted stream, an ECC scrub, a clock change).
	Outliers      float64
	OutlierFactor float64
	Seed          uint64
	// CrashOn and HangOn name an operation (export, import, peer, copy) in which the worker process
	// exits with status 3, or stops answering.
	CrashOn, HangOn string
	// NoIPC makes Export fail with transfer.ErrIPCUnsupported, as on a machine without CUDA IPC,
	// so that the coordinator's fallback to same-process peer copies runs.
	NoIPC bool
	// Corrupt makes copies deliver wrong bytes, so that a verifying copy fails (transfer.ErrCorrupt).
	Corrupt bool
	// KneeBytes and KneeFactor plant a protocol change: copies of at least KneeBytes bytes run
	// at KneeFactor times the pair's bandwidth (a copy path that switches at some size). Zero
	// KneeBytes plants none.
	KneeBytes  int64
	KneeFactor float64
	// Contention is how much slower copies released at a shared start time (Copy.StartAt: a
	// permutation, every GPU sending at once) run than a pair alone, as on a PCIe server whose
	// GPUs share switches and host bridges: their bandwidth is divided by it. 0 or 1: none.
	Contention float64
}

// Defaults are plausible for a copy-engine copy over NVLink4 on an H100/H200 (18 links, 450 GB/s
// per direction on paper, about 370 GB/s measured by CUDA events; a few microseconds per copy).
var Defaults = Model{
	Alpha:         3e-6,
	Bandwidth:     370e9,
	Spread:        0.05,
	Noise:         0.02,
	Outliers:      0.01,
	OutlierFactor: 3,
	Seed:          1,
}

// Pair returns the α and B of copies from GPU src to GPU dst.
func (m Model) Pair(src, dst int) (alpha, bandwidth float64) {
	// Deterministic per pair and independent of Seed: the "hardware" stays the same across runs,
	// only the noise changes.
	r := rand.New(rand.NewPCG(uint64(src)+1, uint64(dst)+1<<32))
	ea := (2*r.Float64() - 1) * m.Spread
	eb := (2*r.Float64() - 1) * m.Spread
	return m.Alpha * (1 + ea), m.Bandwidth * (1 + eb)
}

// Expected is the model's noise-free time for m bytes from src to dst.
func (m Model) Expected(src, dst int, bytes int64) time.Duration {
	return seconds(m.ExpectedSeconds(src, dst, bytes))
}

// ExpectedSeconds is Expected in seconds, unrounded. Past a planted knee the line continues from
// the knee with the changed bandwidth, so the time stays continuous in the size.
func (m Model) ExpectedSeconds(src, dst int, bytes int64) float64 {
	a, b := m.Pair(src, dst)
	if m.KneeBytes > 0 && bytes > m.KneeBytes && m.KneeFactor > 0 {
		return a + float64(m.KneeBytes)/b + float64(bytes-m.KneeBytes)/(b*m.KneeFactor)
	}
	return a + float64(bytes)/b
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// String encodes the model as an option string ("alpha=3e-06,bandwidth=3.7e+11,...").
func (m Model) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	parts := []string{
		"alpha=" + f(m.Alpha), "bandwidth=" + f(m.Bandwidth), "spread=" + f(m.Spread),
		"noise=" + f(m.Noise), "outliers=" + f(m.Outliers), "outlier-factor=" + f(m.OutlierFactor),
		"seed=" + strconv.FormatUint(m.Seed, 10),
	}
	if m.CrashOn != "" {
		parts = append(parts, "crash-on="+m.CrashOn)
	}
	if m.HangOn != "" {
		parts = append(parts, "hang-on="+m.HangOn)
	}
	if m.NoIPC {
		parts = append(parts, "no-ipc=true")
	}
	if m.Corrupt {
		parts = append(parts, "corrupt=true")
	}
	if m.KneeBytes > 0 {
		parts = append(parts, "knee-bytes="+strconv.FormatInt(m.KneeBytes, 10), "knee-factor="+f(m.KneeFactor))
	}
	if m.Contention != 0 {
		parts = append(parts, "contention="+f(m.Contention))
	}
	return strings.Join(parts, ",")
}

// ParseModel reads an option string; keys it does not set keep their Defaults.
func ParseModel(s string) (Model, error) {
	m := Defaults
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return m, fmt.Errorf("fake engine option %q: want key=value", kv)
		}
		var dst *float64
		switch k {
		case "alpha":
			dst = &m.Alpha
		case "bandwidth":
			dst = &m.Bandwidth
		case "spread":
			dst = &m.Spread
		case "noise":
			dst = &m.Noise
		case "outliers":
			dst = &m.Outliers
		case "outlier-factor":
			dst = &m.OutlierFactor
		case "seed":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return m, fmt.Errorf("fake engine option seed=%q: %w", v, err)
			}
			m.Seed = n
			continue
		case "crash-on":
			m.CrashOn = v
			continue
		case "hang-on":
			m.HangOn = v
			continue
		case "no-ipc", "corrupt":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return m, fmt.Errorf("fake engine option %s=%q: %w", k, v, err)
			}
			if k == "no-ipc" {
				m.NoIPC = b
			} else {
				m.Corrupt = b
			}
			continue
		case "knee-bytes":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return m, fmt.Errorf("fake engine option knee-bytes=%q: want a byte count >= 0", v)
			}
			m.KneeBytes = n
			continue
		case "knee-factor":
			dst = &m.KneeFactor
		case "contention":
			dst = &m.Contention
		default:
			return m, fmt.Errorf("fake engine option %q: unknown key (have alpha, bandwidth, spread, noise, outliers, outlier-factor, seed, crash-on, hang-on, no-ipc, corrupt, knee-bytes, knee-factor, contention)", k)
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return m, fmt.Errorf("fake engine option %s=%q: want a finite number >= 0", k, v)
		}
		*dst = x
	}
	if m.Bandwidth <= 0 || m.Spread >= 1 || m.Outliers > 1 || m.OutlierFactor < 1 || (m.KneeBytes > 0 && m.KneeFactor <= 0) {
		return m, fmt.Errorf("fake engine options %q: want bandwidth > 0, spread < 1, outliers <= 1, outlier-factor >= 1, knee-factor > 0 with knee-bytes", s)
	}
	return m, nil
}

// handle is what a fake IPC handle carries, in the 64 bytes a cudaIpcMemHandle has.
const handleMagic = "tetris-hil-fake\x00"

type buffer struct {
	owner int // GPU that holds the memory
	bytes int64
	// content is the pattern the buffer's bytes were last filled with: what a verifying copy
	// compares, standing in for the bytes themselves.
	content byte
}

type engine struct {
	dev     transfer.Device
	model   Model
	buffers map[int]buffer
	next    int
	pattern byte // the source's current fill pattern
}

func open(_ context.Context, cfg transfer.Config) (transfer.Engine, error) {
	m, err := ParseModel(cfg.Options)
	if err != nil {
		return nil, err
	}
	return &engine{
		dev:     cfg.Device,
		model:   m,
		buffers: map[int]buffer{},
		next:    1,
	}, nil
}

func (e *engine) Device() transfer.Device { return e.dev }

// fault carries out the configured crash or hang for op.
func (e *engine) fault(ctx context.Context, op string) {
	if e.model.CrashOn == op {
		fmt.Fprintf(os.Stderr, "fake engine: crashing in %s as configured\n", op)
		os.Exit(3)
	}
	if e.model.HangOn == op {
		<-ctx.Done()
	}
}

func (e *engine) add(b buffer) int {
	id := e.next
	e.next++
	e.buffers[id] = b
	return id
}

func (e *engine) Export(ctx context.Context, n int64) (int, []byte, error) {
	e.fault(ctx, "export")
	if n <= 0 {
		return 0, nil, fmt.Errorf("export %d bytes: want > 0", n)
	}
	if e.model.NoIPC {
		return 0, nil, fmt.Errorf("export: %w (fake engine with no-ipc)", transfer.ErrIPCUnsupported)
	}
	id := e.add(buffer{owner: e.dev.GPU, bytes: n})
	h := make([]byte, 64)
	copy(h, handleMagic)
	binary.LittleEndian.PutUint64(h[16:], uint64(e.dev.GPU))
	binary.LittleEndian.PutUint64(h[24:], uint64(id))
	binary.LittleEndian.PutUint64(h[32:], uint64(n))
	return id, h, nil
}

func (e *engine) Import(ctx context.Context, h []byte) (int, error) {
	e.fault(ctx, "import")
	if len(h) != 64 || string(h[:16]) != handleMagic {
		return 0, errors.New("import: not a fake engine handle")
	}
	owner := int(binary.LittleEndian.Uint64(h[16:]))
	n := int64(binary.LittleEndian.Uint64(h[32:]))
	return e.add(buffer{owner: owner, bytes: n}), nil
}

func (e *engine) Peer(ctx context.Context, peer transfer.Device, n int64) (int, error) {
	e.fault(ctx, "peer")
	if n <= 0 {
		return 0, fmt.Errorf("peer buffer of %d bytes: want > 0", n)
	}
	return e.add(buffer{owner: peer.GPU, bytes: n}), nil
}

// Copy draws each copy's time from the model. It does not take that time: HostStart is the
// release (after waiting for c.StartAt) and HostEnd is HostStart plus the drawn times, which is
// where a real GPU's copies would end.
func (e *engine) Copy(ctx context.Context, dst int, c transfer.Copy) (transfer.Timing, error) {
	e.fault(ctx, "copy")
	if err := c.Validate(); err != nil {
		return transfer.Timing{}, err
	}
	b, ok := e.buffers[dst]
	if !ok {
		return transfer.Timing{}, fmt.Errorf("copy to buffer %d: no such buffer", dst)
	}
	if c.Bytes > b.bytes {
		return transfer.Timing{}, fmt.Errorf("copy of %d bytes into buffer %d of %d bytes", c.Bytes, dst, b.bytes)
	}
	if err := transfer.WaitUntil(ctx, c.StartAt); err != nil {
		return transfer.Timing{}, err
	}
	tm := transfer.Timing{HostStart: transfer.Monotonic(), Times: make([]time.Duration, c.Reps)}
	base := e.model.ExpectedSeconds(e.dev.GPU, b.owner, c.Bytes)
	if c.StartAt != 0 && e.model.Contention > 1 {
		a, _ := e.model.Pair(e.dev.GPU, b.owner)
		base = a + (base-a)*e.model.Contention
	}
	// The noise of a call is a function of (seed, pair, size): a measurement repeated in another
	// process (a resumed calibration, a fresh worker) draws the same times, so runs reproduce.
	rng := rand.New(rand.NewPCG(e.model.Seed, uint64(e.dev.GPU)<<56^uint64(b.owner)<<48^uint64(c.Bytes)))
	var sum time.Duration
	for i := range tm.Times {
		t := base * math.Exp(e.model.Noise*rng.NormFloat64())
		if rng.Float64() < e.model.Outliers {
			t *= 1 + (e.model.OutlierFactor-1)*(0.5+0.5*rng.Float64())
		}
		tm.Times[i] = seconds(t)
		sum += tm.Times[i]
	}
	tm.HostEnd = tm.HostStart + sum
	if c.Verify {
		e.pattern++
		b.content = e.pattern
		if e.model.Corrupt {
			b.content = ^e.pattern
		}
		e.buffers[dst] = b
		if b.content != e.pattern {
			return tm, fmt.Errorf("verifying %d bytes copied to GPU %d: byte 0 is %#02x, the source holds %#02x: %w",
				c.Bytes, b.owner, b.content, e.pattern, transfer.ErrCorrupt)
		}
	}
	return tm, nil
}

func (e *engine) Free(id int) error {
	if _, ok := e.buffers[id]; !ok {
		return fmt.Errorf("free buffer %d: no such buffer", id)
	}
	delete(e.buffers, id)
	return nil
}

func (e *engine) Close() error {
	e.buffers = map[int]buffer{}
	return nil
}
