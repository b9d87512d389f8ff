package rnbmap_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/bff"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
	"github.com/tetris-hil/tetris-hil/schedules/rnbmap"
	"github.com/tetris-hil/tetris-hil/schedules/sunflow"
)

func emulate(t *testing.T, s *schedules.Schedule, d *schedules.Demand, bw, alpha float64) *emulator.Result {
	t.Helper()
	res, tl, err := emulator.Run(context.Background(), s, d, emulator.Config{
		Transfer: emulator.BandwidthModel(bw), Reconfig: emulator.ParallelReconfig(alpha),
	})
	if err != nil {
		t.Fatal(err)
	}
	if vs := schedules.VerifyTimeline(s, tl); len(vs) != 0 {
		t.Fatal(schedules.ViolationsError(vs))
	}
	return res
}

// TestEmulateHandCase executes the hand-worked plan of TestAvoidLiveByHand at b = 1 B/s, α_r = 1 s.
// A = 1→0 (9 B) first sets input switch 0 to cross (1 s) and sends until 10. Under looping C = 0→1
// (3 B) needs A's output lane of that switch in bar, so it waits for A to end at 10, then for the
// switch to turn (1 s), and sends for 3 s: 14. Under avoid-live its path needs no change and no
// lane of A's, so it sends over [1, 4) and the pass ends with A at 10, the plan's own end. Under
// earliest A's two paths each need one change (tie: the upper one), it sends over [1, 10); C's
// lower path enters input switch 0 on lane 0 and leaves on lane 1, the cross state A set, and
// turns the idle lower middle switch (ready at 0 + α_r): it also sends over [1, 4).
func TestEmulateHandCase(t *testing.T) {
	d, err := schedules.DemandFromRows([][]int64{{0, 3, 0, 0}, {9, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	plan := []rnbmap.Circuit{{Src: 1, Dst: 0, Bytes: 9, Start: 0, End: 10}, {Src: 0, Dst: 1, Bytes: 3, Start: 1, End: 5}}
	for _, c := range []struct {
		strategy string
		want     float64
	}{{"looping", 14}, {"avoid-live", 10}, {"earliest", 10}} {
		s, err := rnbmap.Schedule("test", d, schedules.Options{Bandwidth: 1, Reconfig: 1, RNBMapping: c.strategy}, plan, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := emulate(t, s, d, 1, 1).Completion; got != c.want {
			t.Errorf("%s: completion %g s, want %g s", c.strategy, got, c.want)
		}
		if c.strategy == "earliest" {
			for i, want := range [][2]float64{{1, 10}, {1, 4}} {
				if got := s.Circuits[i]; *got.PlannedStart != want[0] || *got.PlannedEnd != want[1] {
					t.Errorf("earliest: circuit %d (%d->%d) planned [%g, %g), want [%g, %g)", i, got.Src, got.Dst, *got.PlannedStart, *got.PlannedEnd, want[0], want[1])
				}
			}
		}
	}
}

// TestEmulateMoE executes Sunflow's and BFF's schedules of MoE-like demands under both strategies:
// every timeline passes the verifier and no completion beats the larger lower bound.
func TestEmulateMoE(t *testing.T) {
	const bw, alpha = 100e9, 10e-6
	algos := []struct {
		name     string
		schedule schedules.SchedulerFunc
	}{{sunflow.Name, sunflow.Schedule}, {bff.Name, bff.Schedule}}
	for _, a := range algos {
		for _, strategy := range []string{"earliest", "looping", "avoid-live"} {
			for seed := range uint64(3) {
				t.Run(fmt.Sprintf("%s/%s/seed=%d", a.name, strategy, seed), func(t *testing.T) {
					d := moetest.Skewed(seed, 16)
					s, err := a.schedule(context.Background(), d, schedules.Options{Bandwidth: bw, Reconfig: alpha, RNBMapping: strategy})
					if err != nil {
						t.Fatal(err)
					}
					res := emulate(t, s, d, bw, alpha)
					if lb := max(res.Bounds.Bandwidth, res.Bounds.Reconfig); res.Completion < lb*(1-1e-9) {
						t.Errorf("completion %g s is below the lower bound %g s", res.Completion, lb)
					}
				})
			}
		}
	}
}
