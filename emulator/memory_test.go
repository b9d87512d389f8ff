package emulator

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/barrier"
)

// sinkhornSchedule is bvn-sinkhorn's schedule of a random dense n×n demand: about n^2·n/4
// circuits in n^2/4 rounds, the shape of the barrier schedules that must run within a few tens
// of bytes per circuit at 256 ports.
func sinkhornSchedule(t testing.TB, n int) (*schedules.Schedule, *schedules.Demand) {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	d := schedules.NewDemand(n)
	for i := range n {
		for j := range n {
			d.Bytes[i][j] = 1 + rng.Int64N(1<<24)
		}
	}
	s, err := barrier.BvNSinkhorn(context.Background(), d, schedules.Options{Bandwidth: 1e11, Reconfig: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	return s, d
}

// emulatorBytesPerCircuit is what one call allocates per circuit beyond the timeline it returns
// (the order, the walk, the durations), with the scratch pool emptied first so that the
// scratch's own buffers count.
func emulatorBytesPerCircuit(t testing.TB, s *schedules.Schedule, run func() *schedules.Timeline) float64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.GC() // twice: sync.Pool keeps a victim cache across one collection
	runtime.ReadMemStats(&m0)
	tl := run()
	runtime.ReadMemStats(&m1)
	timeline := 0
	if tl != nil {
		timeline = len(tl.Circuits)*int(unsafe.Sizeof(tl.Circuits[0])) + len(tl.SwitchChanges)*int(unsafe.Sizeof(schedules.SwitchChange{}))
	}
	return float64(int(m1.TotalAlloc-m0.TotalAlloc)-timeline) / float64(len(s.Circuits))
}

// A barrier run keeps nothing per circuit but its end and duration (rounds are ranges of
// circuits, their changes ranges of epochs); epochs cost 8 bytes each, grown by doubling. At
// n = 64 bvn-sinkhorn has 250 k circuits and 1.2 epochs per circuit: Run and RunResult must stay
// within 64 bytes per circuit beyond the timeline (they took 920 before barrier mode skipped the
// per-hop lists).
func TestBarrierRunBytesPerCircuit(t *testing.T) {
	if testing.Short() {
		t.Skip("plans a 250 k-circuit schedule")
	}
	if raceEnabled {
		t.Skip("the race detector allocates per access")
	}
	s, d := sinkhornSchedule(t, 64)
	cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(1e-6)}
	run := emulatorBytesPerCircuit(t, s, func() *schedules.Timeline {
		_, tl, err := Run(context.Background(), s, d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return tl
	})
	result := emulatorBytesPerCircuit(t, s, func() *schedules.Timeline {
		if _, err := RunResult(context.Background(), s, d, cfg); err != nil {
			t.Fatal(err)
		}
		return nil
	})
	t.Logf("%d circuits: Run %.1f B/circuit beyond its timeline, RunResult %.1f B/circuit", len(s.Circuits), run, result)
	if run > 64 || result > 64 {
		t.Fatalf("Run allocates %.1f and RunResult %.1f bytes per circuit beyond the timeline, want at most 64", run, result)
	}
}
