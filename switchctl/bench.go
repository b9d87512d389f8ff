package switchctl

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/tetris-hil/tetris-hil/switchctl/benchfile"
)

// BenchOptions configure Bench.
type BenchOptions struct {
	// Rounds is the number of single-switch toggles (default 200); the switches take turns in
	// wiring-map order.
	Rounds int
	// Progress, if set, is called after each round.
	Progress func(done, total int)
}

// Bench toggles switches one at a time and measures, from the change log, each change's round
// trip (commanded to acknowledged) and settle latency (commanded to settled). The derived T_r
// is the median round trip, the time one request holds the controller; T_w is the median of
// acknowledged to settled, the part that overlaps other requests (Er-El and Feitelson §2.3.3:
// T_c = T_r + T_w). A backend that cannot tell acknowledged from settled gets T_r = 0 and T_w =
// the median settle latency. The switches are left as the bench leaves them: the caller puts
// the hardware safe.
func Bench(ctx context.Context, c Controller, log *ChangeLog, w *Wiring, opt BenchOptions) (*benchfile.File, error) {
	if opt.Rounds <= 0 {
		opt.Rounds = 200
	}
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
			opt.Progress(r+1, opt.Rounds)
		}
	}
	f := &benchfile.File{Version: benchfile.Version, Backend: w.Backend, Wiring: w.Path, WiringSHA256: w.SHA256,
		Switches: len(w.Switches), RoundTrip: Summarise(rt), Settle: Summarise(settle), Taken: time.Now().UTC().Format(time.RFC3339)}
	if acked && len(rt) > 0 {
		f.TRSeconds, f.TWSeconds = f.RoundTrip.MedianSeconds, Summarise(tw).MedianSeconds
	} else {
		f.TWSeconds = f.Settle.MedianSeconds
	}
	return f, nil
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
