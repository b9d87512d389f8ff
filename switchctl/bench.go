package switchctl

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl/benchfile"
)

// BenchOptions configure Bench.
type BenchOptions struct {
	// Rounds is the number of single-switch toggles (default 200); the switches take turns in
	// wiring-map order.
	Rounds int
	// BatchReps is how many times each batch size is tried to find B (default 5); MaxBatch bounds
	// the largest batch tried (default 64, and never more than the wiring map's switches).
	BatchReps, MaxBatch int
	// Progress, if set, is called after each round and each batch tried.
	Progress func(done, total int)
}

// Bench measures the controller model of package ctlmodel (Er-El and Feitelson §2.3.3: T_c =
// T_r + T_w, a command of k changes costing ⌈k/B⌉·T_r + T_w). First it toggles switches one at
// a time and measures, from the change log, each change's round trip (commanded to
// acknowledged) and settle latency (commanded to settled): T_r is the median round trip, the
// time one request holds the controller; T_w is the median of acknowledged to settled. Then it
// finds B from batches of k changes (see measureBatch). A backend that cannot tell acknowledged
// from settled gets T_r = 0, T_w = the median settle latency and B = 0 (no limit: with T_r = 0
// it costs nothing). The switches are left as the bench leaves them: the caller puts the
// hardware safe.
func Bench(ctx context.Context, c Controller, log *ChangeLog, w *Wiring, opt BenchOptions) (*benchfile.File, error) {
	if opt.Rounds <= 0 {
		opt.Rounds = 200
	}
	if opt.BatchReps <= 0 {
		opt.BatchReps = 5
	}
	if opt.MaxBatch <= 0 {
		opt.MaxBatch = 64
	}
	total := opt.Rounds + batchProbes(min(len(w.Switches), opt.MaxBatch))*opt.BatchReps
	if log == nil || len(w.Switches) == 0 {
		return nil, fmt.Errorf("bench: needs a change log and at least one switch")
	}
	st, err := c.States(ctx)
	if err != nil {
		return nil, fmt.Errorf("bench: reading the switches: %w", err)
	}
	cur := map[Addr]State{}
	for _, s := range st {
		cur[s.Switch] = s.State
	}
	var rt, settle, tw []float64
	acked := true
	for r := 0; r < opt.Rounds; r++ {
		a := w.Switches[r%len(w.Switches)].Switch
		next := Cross
		if cur[a] == Cross {
			next = Bar
		}
		n := log.Len()
		if err := c.Apply(ctx, []Change{{Switch: a, State: next}}); err != nil {
			return nil, fmt.Errorf("bench: round %d of %d, %s=%s: %w", r+1, opt.Rounds, a, next, err)
		}
		cur[a] = next
		for _, e := range log.Entries(n) {
			if e.Halt || e.Settled.IsZero() {
				continue
			}
			settle = append(settle, e.Settled.Sub(e.Commanded).Seconds())
			if e.Acknowledged.IsZero() {
				acked = false
				continue
			}
			rt = append(rt, e.Acknowledged.Sub(e.Commanded).Seconds())
			tw = append(tw, e.Settled.Sub(e.Acknowledged).Seconds())
		}
		if opt.Progress != nil {
			opt.Progress(r+1, total)
		}
	}
	f := &benchfile.File{Version: benchfile.Version, Backend: w.Backend, Wiring: w.Path, WiringSHA256: w.SHA256,
		Switches: len(w.Switches), RoundTrip: Summarise(rt), Settle: Summarise(settle), Taken: time.Now().UTC().Format(time.RFC3339)}
	if !acked || len(rt) == 0 {
		f.TWSeconds = f.Settle.MedianSeconds
		return f, nil
	}
	f.TRSeconds, f.TWSeconds = f.RoundTrip.MedianSeconds, Summarise(tw).MedianSeconds
	b := batchBench{c: c, log: log, w: w, cur: cur, opt: opt, done: opt.Rounds, total: total}
	if f.Batch, f.BatchBusy, err = b.measure(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// batchBench finds B: how many changes one request carries.
type batchBench struct {
	c           Controller
	log         *ChangeLog
	w           *Wiring
	cur         map[Addr]State
	opt         BenchOptions
	done, total int
}

// batchProbes is how many batch sizes measure tries at most with K switches: 1, K and the
// bisection's between them.
func batchProbes(K int) int {
	if K <= 1 {
		return 1
	}
	return 2 + bits.Len(uint(K-1))
}

// measure times batches of the first k switches (each toggled), BatchReps times each: a
// batch's busy time runs from its first change commanded to its last acknowledged, and its
// number of requests is the shortest busy time over that of a batch of one, rounded (the
// shortest, because a loaded host stretches a busy time but never shortens it). Requests
// grow with k as ⌈k/B⌉, so B is the largest k that is still one request: found by bisection
// between 1 and the largest batch tried, K. When K is still one request, B is 0 (no limit
// seen). The samples come back sorted by k.
func (b *batchBench) measure(ctx context.Context) (int, []benchfile.BatchSample, error) {
	K := min(len(b.w.Switches), b.opt.MaxBatch)
	var out []benchfile.BatchSample
	one, err := b.sample(ctx, 1, 0)
	if err != nil {
		return 0, nil, err
	}
	out = append(out, one)
	unit := one.MinSeconds
	if K == 1 {
		return 0, out, nil
	}
	top, err := b.sample(ctx, K, unit)
	if err != nil {
		return 0, nil, err
	}
	out = append(out, top)
	batch := 0
	if top.Requests > 1 {
		lo, hi := 1, K // lo is one request, hi more
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			s, err := b.sample(ctx, mid, unit)
			if err != nil {
				return 0, nil, err
			}
			out = append(out, s)
			if s.Requests <= 1 {
				lo = mid
			} else {
				hi = mid
			}
		}
		batch = lo
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Changes < out[j].Changes })
	return batch, out, nil
}

// sample applies batches of the first k switches, each toggled, and summarises their busy
// times; unit is a batch of one's shortest busy time (0: this is that batch).
func (b *batchBench) sample(ctx context.Context, k int, unit float64) (benchfile.BatchSample, error) {
	var busy []float64
	for r := 0; r < b.opt.BatchReps; r++ {
		changes := make([]Change, k)
		for i, s := range b.w.Switches[:k] {
			changes[i] = Change{Switch: s.Switch, State: Cross}
			if b.cur[s.Switch] == Cross {
				changes[i].State = Bar
			}
		}
		n := b.log.Len()
		if err := b.c.Apply(ctx, changes); err != nil {
			return benchfile.BatchSample{}, fmt.Errorf("bench: a batch of %d changes (try %d of %d): %w", k, r+1, b.opt.BatchReps, err)
		}
		var first, last time.Time
		for _, e := range b.log.Entries(n) {
			if e.Halt || e.Acknowledged.IsZero() {
				continue
			}
			if first.IsZero() || e.Commanded.Before(first) {
				first = e.Commanded
			}
			if e.Acknowledged.After(last) {
				last = e.Acknowledged
			}
		}
		for _, ch := range changes {
			b.cur[ch.Switch] = ch.State
		}
		if !first.IsZero() {
			busy = append(busy, last.Sub(first).Seconds())
		}
		b.done++
		if b.opt.Progress != nil {
			b.opt.Progress(b.done, b.total)
		}
	}
	st := Summarise(busy)
	s := benchfile.BatchSample{Changes: k, Samples: st.Samples, MedianSeconds: st.MedianSeconds, MinSeconds: st.MinSeconds, Requests: 1}
	if unit > 0 {
		s.Requests = max(1, int(math.Round(st.MinSeconds/unit)))
	}
	return s, nil
}

// Summarise returns the samples' median, 99th percentile (nearest rank), minimum and maximum.
func Summarise(xs []float64) benchfile.Stats {
	if len(xs) == 0 {
		return benchfile.Stats{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	p99 := s[int(math.Ceil(0.99*float64(len(s))))-1]
	return benchfile.Stats{Samples: len(s), MedianSeconds: med, P99Seconds: p99, MinSeconds: s[0], MaxSeconds: s[len(s)-1]}
}
