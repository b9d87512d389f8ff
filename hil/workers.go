package hil

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/tetris-hil/tetris-hil/gpu/bench"
	"github.com/tetris-hil/tetris-hil/gpu/transfer"
	"github.com/tetris-hil/tetris-hil/gpu/worker"
	"github.com/tetris-hil/tetris-hil/schedules"
)

// Workers carries transfers as copies between pinned worker processes (package gpu/bench): one
// worker per endpoint, on the endpoint's GPU, so that endpoints sharing a GPU still copy
// concurrently, each from its own process and stream; each ordered pair of endpoints that a
// schedule uses gets a destination buffer on the receiver's GPU, shared by IPC handle (or, where
// IPC is unavailable, allocated by the sender on the receiver's GPU).
type Workers struct {
	gpuOf   []int
	sets    []*bench.Workers // per endpoint
	buf     map[[2]int]pairBuf
	kind    transfer.Kind
	timeout time.Duration
	// Via says how each pair's buffer is reached ("ipc" or "peer"), for the manifest.
	Via map[string]int
}

type pairBuf struct {
	id    int
	bytes int64
	ipc   bool // opened by the sender from the receiver's IPC handle
}

// Pairs returns, per ordered pair of endpoints the schedules use, the largest circuit between
// them: the size of its destination buffer.
func Pairs(ss ...*schedules.Schedule) map[[2]int]int64 {
	out := map[[2]int]int64{}
	for _, s := range ss {
		for _, c := range s.Circuits {
			k := [2]int{c.Src, c.Dst}
			out[k] = max(out[k], c.Bytes)
		}
	}
	return out
}

func pairSizes(b map[[2]int]pairBuf) map[[2]int]int64 {
	out := make(map[[2]int]int64, len(b))
	for k, v := range b {
		out[k] = v.bytes
	}
	return out
}

// sortedPairs lists the pairs in order, so that buffers are made in the same order every run.
func sortedPairs(pairs map[[2]int]int64) [][2]int {
	keys := make([][2]int, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	return keys
}

// StartWorkers starts one worker per endpoint, endpoint e on GPU gpuOf[e], with cfg's engine,
// command, environment, pinning and timeout (package bench's Config), and connects a destination
// buffer for every pair in pairs (Pairs). kind is how copies are made (ce or sm). If anything
// fails, the workers already started are stopped.
func StartWorkers(ctx context.Context, cfg bench.Config, gpuOf []int, pairs map[[2]int]int64, kind transfer.Kind) (*Workers, error) {
	if _, err := transfer.ParseKind(string(kind)); err != nil {
		return nil, fmt.Errorf("hil: %w", err)
	}
	ws := &Workers{gpuOf: slices.Clone(gpuOf), buf: map[[2]int]pairBuf{}, kind: kind, timeout: cfg.Timeout, Via: map[string]int{}}
	if ws.timeout <= 0 {
		ws.timeout = 60 * time.Second
	}
	for e, g := range gpuOf {
		set, err := bench.StartWorkers(ctx, cfg, []int{g})
		if err != nil {
			return nil, errors.Join(fmt.Errorf("hil: worker for endpoint %d on GPU %d: %w", e, g, err), ws.Close())
		}
		ws.sets = append(ws.sets, set)
	}
	for _, k := range sortedPairs(pairs) {
		src, dst := k[0], k[1]
		if src < 0 || src >= len(gpuOf) || dst < 0 || dst >= len(gpuOf) {
			return nil, errors.Join(fmt.Errorf("hil: a circuit from endpoint %d to %d, but only endpoints 0..%d have GPUs", src, dst, len(gpuOf)-1), ws.Close())
		}
		if pairs[k] <= 0 {
			continue // nothing to copy: such circuits end as they start
		}
		sw, rw := ws.worker(src), ws.worker(dst)
		id, via, err := bench.Connect(ctx, sw, rw, ws.sets[dst].Device(gpuOf[dst]), pairs[k])
		if err != nil {
			return nil, errors.Join(fmt.Errorf("hil: buffer for endpoint %d (GPU %d) → endpoint %d (GPU %d), %d bytes: %w",
				src, gpuOf[src], dst, gpuOf[dst], pairs[k], err), ws.Close())
		}
		ws.buf[k] = pairBuf{id: id, bytes: pairs[k], ipc: via == "ipc" && src != dst}
		ws.Via[via]++
		// One untimed copy per pair before the replay: the first copy through a fresh worker,
		// context and IPC mapping pays start-up costs that are no part of the schedule.
		if _, err := sw.Copy(ctx, id, transfer.Copy{Bytes: pairs[k], Reps: 1, Kind: kind}, ws.timeout); err != nil {
			return nil, errors.Join(fmt.Errorf("hil: warm-up copy endpoint %d → %d: %w", src, dst, err), ws.Close())
		}
	}
	return ws, nil
}

func (ws *Workers) worker(e int) *worker.Worker { return ws.sets[e].Worker(ws.gpuOf[e]) }

// CPUs lists the CPUs each endpoint's worker was pinned to (empty when unpinned).
func (ws *Workers) CPUs() []string {
	out := make([]string, len(ws.sets))
	for e := range ws.sets {
		out[e] = ws.worker(e).Hello().CPUs
	}
	return out
}

// Transfer makes one timed copy from src's worker into the pair's buffer.
func (ws *Workers) Transfer(ctx context.Context, src, dst int, bytes int64) (time.Duration, time.Duration, error) {
	if bytes == 0 {
		now := transfer.Monotonic()
		return now, now, nil
	}
	b, ok := ws.buf[[2]int{src, dst}]
	if !ok || bytes > b.bytes {
		return 0, 0, fmt.Errorf("no buffer of %d bytes for endpoint %d → %d (the workers were started for other schedules)", bytes, src, dst)
	}
	tm, err := ws.worker(src).Copy(ctx, b.id, transfer.Copy{Bytes: bytes, Reps: 1, Kind: ws.kind}, ws.timeout)
	if err != nil {
		return 0, 0, err
	}
	return tm.HostStart, tm.HostEnd, nil
}

// Close stops every worker, last started first.
// Every sender first closes the buffers it opened from another endpoint's IPC handle: a worker
// that stops frees the buffers it exported, which cuda.h leaves undefined while another process
// has them open, and endpoints import from each other, so no order of stopping them alone would do.
func (ws *Workers) Close() error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), ws.timeout)
	defer cancel()
	for _, k := range sortedPairs(pairSizes(ws.buf)) {
		if b := ws.buf[k]; b.ipc && k[0] < len(ws.sets) {
			// A worker stopped when the run was cancelled took its imports with its process.
			if err := ws.worker(k[0]).Free(ctx, b.id); err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, fmt.Errorf("hil: endpoint %d closing its IPC buffer of endpoint %d: %w", k[0], k[1], err))
			}
		}
	}
	ws.buf = map[[2]int]pairBuf{}
	for i := len(ws.sets) - 1; i >= 0; i-- {
		errs = append(errs, ws.sets[i].Close())
	}
	ws.sets = nil
	return errors.Join(errs...)
}
