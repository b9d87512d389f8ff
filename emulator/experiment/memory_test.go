package experiment

import (
	"context"
	"errors"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
)

func dense(n int) *schedules.Demand {
	d := schedules.NewDemand(n)
	for i := range n {
		for j := range n {
			if i != j {
				d.Bytes[i][j] = int64(1<<20 + 4096*((i*7+j*3)%13))
			}
		}
	}
	return d
}

// TestEstimateRun checks the circuit bounds by hand: a dense n×n demand has n(n−1) pairs; the
// Birkhoff–von Neumann family is bounded by (n² − 2n + 2)·n circuits.
func TestEstimateRun(t *testing.T) {
	for _, tc := range []struct {
		algo     string
		n        int
		circuits int64
	}{
		{"tetris", 8, 8*7 + 8},
		{"maxweight", 64, 64*63 + 64},
		{"bvn", 8, (64 - 16 + 2) * 8},
		{"bvn-sinkhorn", 256, (65536 - 512 + 2) * 256},
	} {
		e := EstimateRun(tc.algo, dense(tc.n), "", false)
		barrier := slices.Contains(barrierAlgorithms, tc.algo)
		// A barrier run not kept holds no circuit beyond the round under way: its plan's pieces
		// (MaxWeight) or a decomposition's slices (n ints each, n² − 2n + 2 at most).
		least := e.Circuits * perCircuitBytes(0, true, false)
		switch {
		case tc.algo == "maxweight":
			least = 24 * e.Circuits
		case barrier:
			least = int64(tc.n*tc.n-2*tc.n+2) * int64(8*tc.n)
		}
		// Its timeline check holds up to schedules.MaxPendingRounds rounds of n circuits back,
		// each a 48-byte entry and its path of 2·log2 n − 1 stages decoded.
		if barrier {
			stages := int64(2*(bits.Len(uint(tc.n))-1) - 1)
			least += min(schedules.MaxPendingRounds*int64(tc.n), e.Circuits) * (48 + 8*stages)
		}
		if e.Circuits != tc.circuits || e.Ports != tc.n || e.Bytes < least || barrier && e.Bytes > 2*least+16*int64(tc.n*tc.n)*8 {
			t.Errorf("%s n=%d: %+v, want %d circuits and %d to %d bytes", tc.algo, tc.n, e, tc.circuits, least, 2*least)
		}
		// A kept timeline holds a 48-byte entry per circuit and 32 bytes per change; a barrier
		// run not kept is streamed without them; a partial run builds its timeline either way.
		kept := EstimateRun(tc.algo, dense(tc.n), "", true)
		if barrier && kept.Bytes-e.Bytes < 48*e.Circuits || !barrier && kept.Bytes != e.Bytes {
			t.Errorf("%s n=%d: %d bytes with the timeline kept, %d without", tc.algo, tc.n, kept.Bytes, e.Bytes)
		}
	}
	// A crossbar has no paths: fewer bytes a circuit than Beneš.
	if b, x := EstimateRun("tetris", dense(16), schedules.Benes, false), EstimateRun("tetris", dense(16), schedules.Crossbar, false); x.Bytes >= b.Bytes {
		t.Errorf("crossbar estimate %d ≥ Beneš %d", x.Bytes, b.Bytes)
	}
}

// TestMaxMemoryRefusesBeforePlanning: above the limit nothing is planned (a scheduler that
// fails the test if called), and the error names every algorithm over the limit and n.
func TestMaxMemoryRefusesBeforePlanning(t *testing.T) {
	d := dense(256)
	cfg := Config{Algorithms: []string{"tetris", "bvn", failAlgo}, MaxMemory: 128 << 20, Options: schedules.Options{Bandwidth: 1e11, Reconfig: 1e-6},
		Exec: emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ParallelReconfig(1e-6)}}
	d.Bytes[0][1] = failBytes // failAlgo fails when planned: it must not be
	_, err := Run(context.Background(), []Matrix{{Demand: d}}, cfg, Pool{Jobs: 2})
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("err %v, want a *MemoryError", err)
	}
	msg := err.Error()
	for _, want := range []string{"bvn on n = 256 needs about", "above the limit of 128MiB", "16646656 circuits"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "tetris on") || strings.Contains(msg, "\n") {
		t.Errorf("message %q names tetris, which fits, or is not one line", msg)
	}
	// Within the limit it runs.
	cfg.Algorithms, cfg.MaxMemory = []string{"tetris"}, 4<<30
	if _, err := Run(context.Background(), []Matrix{{Demand: dense(16)}}, cfg, Pool{}); err != nil {
		t.Fatal(err)
	}
}

// overlapAlgo is a test scheduler that records how many of its runs are under way at once. With
// rendezvous set, a run waits (up to ten seconds) for a second one to start beside it, so that
// concurrency, where allowed, is observed whatever the host's load.
const overlapAlgo = "experimenttest-overlap"

var overlap struct {
	mu         sync.Mutex
	now, most  int
	rendezvous bool
	arrived    chan struct{}
}

func init() {
	schedules.Register(overlapAlgo, "test", schedules.SchedulerFunc(
		func(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
			overlap.mu.Lock()
			overlap.now++
			overlap.most = max(overlap.most, overlap.now)
			wait := overlap.rendezvous
			overlap.mu.Unlock()
			if wait {
				select {
				case overlap.arrived <- struct{}{}:
				case <-overlap.arrived:
				case <-time.After(10 * time.Second):
				}
			} else {
				time.Sleep(5 * time.Millisecond)
			}
			overlap.mu.Lock()
			overlap.now--
			overlap.mu.Unlock()
			s := &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: overlapAlgo, N: d.N(), Ports: d.N(),
				Fabric: schedules.Crossbar, Mode: schedules.Partial,
				Params: schedules.Params{BandwidthBytesPerSecond: o.Bandwidth, ReconfigSeconds: o.Reconfig}}
			for _, p := range d.Pairs() {
				s.Circuits = append(s.Circuits, schedules.Circuit{Src: p.Src, Dst: p.Dst, Bytes: p.Bytes})
			}
			return s, nil
		}))
}

// TestMaxMemoryRunsFewerAtOnce: runs that fit the limit alone but not two together are not
// refused; they run one at a time on a two-worker pool, and give the same outcome as without a
// limit (where two do run at once).
func TestMaxMemoryRunsFewerAtOnce(t *testing.T) {
	d := dense(16)
	one := EstimateRun(overlapAlgo, d, "", false).Bytes
	ms := []Matrix{{Demand: d}, {Demand: d}, {Demand: d}, {Demand: d}}
	cfg := Config{Algorithms: []string{overlapAlgo}, Options: schedules.Options{Bandwidth: 1e11, Reconfig: 1e-6},
		Exec: emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ParallelReconfig(1e-6)}}
	run := func(limit int64, rendezvous bool) (*Outcome, int) {
		overlap.mu.Lock()
		overlap.most, overlap.rendezvous, overlap.arrived = 0, rendezvous, make(chan struct{})
		overlap.mu.Unlock()
		c := cfg
		c.MaxMemory = limit
		out, err := Run(context.Background(), ms, c, Pool{Jobs: 2})
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		return out, overlap.most
	}
	free, most := run(0, true)
	if most != 2 {
		t.Fatalf("without a limit at most %d run at once, want 2", most)
	}
	gated, most := run(baseBytes+one+one/2, false)
	if most != 1 {
		t.Errorf("with room for one run, %d ran at once", most)
	}
	if !reflect.DeepEqual(free.Records, gated.Records) {
		t.Errorf("gated outcome differs from the free one")
	}
	// Room for two: both run at once again.
	if _, most := run(baseBytes+2*one, true); most != 2 {
		t.Errorf("with room for two runs, at most %d ran at once", most)
	}
}

// Kept runs (their schedules and timelines stay to the end) are refused when all of them
// together are over the limit, though each fits alone: the gate does not hold their memory back.
func TestMaxMemoryCountsKeptRuns(t *testing.T) {
	d := dense(16)
	one := EstimateRun("tetris", d, "", true).Bytes
	ms := []Matrix{{Demand: d}, {Demand: d}, {Demand: d}, {Demand: d}}
	cfg := Config{Algorithms: []string{"tetris"}, KeepRuns: true, MaxMemory: baseBytes + one + one/2,
		Options: schedules.Options{Bandwidth: 1e11, Reconfig: 1e-6},
		Exec:    emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ParallelReconfig(1e-6)}}
	_, err := Run(context.Background(), ms, cfg, Pool{Jobs: 2})
	var me *MemoryError
	if !errors.As(err, &me) || me.Peak != baseBytes+4*one || len(me.Over) != 0 {
		t.Fatalf("err %v (%+v), want a *MemoryError for the 4 kept runs together (%d bytes), none over alone", err, me, baseBytes+4*one)
	}
	// Not kept, the same runs pass one after another.
	cfg.KeepRuns = false
	if _, err := Run(context.Background(), ms, cfg, Pool{Jobs: 2}); err != nil {
		t.Fatalf("runs not kept: %v", err)
	}
	// Kept, with room for all four: they run.
	cfg.KeepRuns, cfg.MaxMemory = true, baseBytes+4*one
	if _, err := Run(context.Background(), ms, cfg, Pool{Jobs: 2}); err != nil {
		t.Fatalf("room for the 4 kept runs: %v", err)
	}
}

// TestGateCancel: a run waiting at the gate gives up when its context is cancelled.
func TestGateCancel(t *testing.T) {
	g := newGate(10)
	if err := g.acquire(context.Background(), 8); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { errc <- g.acquire(ctx, 8) }()
	select {
	case err := <-errc:
		t.Fatalf("second acquire passed a full gate: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled acquire: %v", err)
	}
	g.release(8)
	if err := g.acquire(context.Background(), 8); err != nil {
		t.Fatal(err)
	}
}

// TestStreamedRunsAreNotKept: kept runs given to Config.Stream as they finish are not counted
// together (the estimate is the largest run per worker, as for runs not kept), so the limit
// that refuses the four kept to the end lets them through; Stream sees every run once with its
// schedule and timeline, the same records as kept runs, which then drop both.
func TestStreamedRunsAreNotKept(t *testing.T) {
	d := dense(16)
	one := EstimateRun("tetris", d, "", true).Bytes
	ms := []Matrix{{Demand: d}, {Demand: d}, {Demand: d}, {Demand: d}}
	cfg := Config{Algorithms: []string{"tetris", "bvn"}, KeepRuns: true,
		Options: schedules.Options{Bandwidth: 1e11, Reconfig: 1e-6},
		Exec:    emulator.Config{Transfer: emulator.BandwidthModel(1e11), Reconfig: emulator.ParallelReconfig(1e-6)}}
	kept, err := Run(context.Background(), ms, cfg, Pool{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	bvn := EstimateRun("bvn", d, "", true).Bytes
	cfg.MaxMemory = baseBytes + bvn + one/2
	if _, err := Run(context.Background(), ms, cfg, Pool{Jobs: 2}); err == nil {
		t.Fatalf("the 8 runs kept to the end are let through a limit of %d bytes", cfg.MaxMemory)
	}
	var mu sync.Mutex
	seen := map[int]Record{}
	cfg.Stream = func(i int, r *Record) error {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := seen[i]; dup || r.Schedule == nil || r.Timeline == nil {
			t.Errorf("run %d streamed twice or without its schedule and timeline", i)
		}
		seen[i] = *r
		return nil
	}
	if e := EstimateMemory(ms, cfg, 2); e.Peak != baseBytes+2*bvn {
		t.Errorf("streamed estimate %d, want the base and two bvn runs %d", e.Peak, baseBytes+2*bvn)
	}
	streamed, err := Run(context.Background(), ms, cfg, Pool{Jobs: 2})
	if err != nil {
		t.Fatalf("streamed runs refused or failed: %v", err)
	}
	if len(seen) != len(kept.Records) {
		t.Fatalf("%d runs streamed, want %d", len(seen), len(kept.Records))
	}
	for i, r := range kept.Records {
		if s := streamed.Records[i]; s.Schedule != nil || s.Timeline != nil {
			t.Errorf("record %d keeps its schedule or timeline after Stream", i)
		}
		got := seen[i]
		got.Speedup = r.Speedup // filled in once every run is done
		if !reflect.DeepEqual(got, r) {
			t.Errorf("run %d streamed differs from the kept one", i)
		}
	}
	boom := errors.New("disk full")
	cfg.Stream = func(int, *Record) error { return boom }
	if _, err := Run(context.Background(), ms, cfg, Pool{Jobs: 2}); !errors.Is(err, boom) {
		t.Errorf("Stream's error %v, want %v", err, boom)
	}
}
