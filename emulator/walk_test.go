package emulator

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Run derives its order in pooled memory and walks it in compact form; RunOrder walks an Order
// that NewOrder put on the heap. Both must give the same execution, and every epoch the order
// lists must appear exactly once among the timeline's switch changes, with the states a switch
// that starts in Bar and flips once per epoch goes through.
func TestPropertyRunMatchesNewOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]schedules.Mode{schedules.Partial, schedules.Barrier}).Draw(t, "mode")
		s := genSchedule(t, mode)
		cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ControllerReconfig(2e-7, 1e-6)}
		res, tl, err := Run(context.Background(), s, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		o, err := NewOrder(s)
		if err != nil {
			t.Fatal(err)
		}
		res2, tl2, err := RunOrder(context.Background(), o, s, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res, res2) || !reflect.DeepEqual(tl, tl2) {
			t.Fatalf("Run and RunOrder(NewOrder) disagree:\n%+v\n%+v", res, res2)
		}
		if s.Fabric != schedules.Benes {
			return
		}
		type sw struct{ stage, sw int }
		state := map[sw]benes.State{}
		left := map[schedules.SwitchChange]int{}
		for _, ep := range o.Epochs() {
			k := sw{ep.Stage, ep.Switch}
			if ep.From != state[k] || ep.To == ep.From {
				t.Fatalf("epoch %+v: switch (%d, %d) is in %v, so it must change from %v to the other state", ep, ep.Stage, ep.Switch, state[k], state[k])
			}
			state[k] = ep.To
			left[schedules.SwitchChange{Stage: int32(ep.Stage), Switch: int32(ep.Switch), From: ep.From, To: ep.To}]++
		}
		for _, ch := range tl.SwitchChanges {
			k := ch
			k.Start, k.End = 0, 0
			if left[k]--; left[k] < 0 {
				t.Fatalf("switch change %+v is not an epoch of the order, or appears too often", ch)
			}
		}
		if len(tl.SwitchChanges) != len(o.Epochs()) {
			t.Fatalf("%d switch changes for %d epochs", len(tl.SwitchChanges), len(o.Epochs()))
		}
	})
}

// Run's memory comes from a pool, so the number of allocations per run (the result, the
// timeline and a few headers) must not grow with the number of events.
func TestRunAllocationsDoNotGrowWithEvents(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's own allocations vary with the events")
	}
	cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(1e-6)}
	allocs := map[int]float64{}
	for _, n := range []int{8, 64} {
		s := randomSchedule(rand.New(rand.NewPCG(3, uint64(n))), n, n, schedules.Benes, schedules.Partial, 1)
		run := func() {
			if _, _, err := Run(context.Background(), s, nil, cfg); err != nil {
				t.Fatal(err)
			}
		}
		run() // sizes the pooled scratch
		allocs[n] = testing.AllocsPerRun(10, run)
	}
	// n = 64 has about 150 times as many events as n = 8; a little slack covers the pool
	// dropping its scratch at a garbage collection.
	if allocs[64] > allocs[8]+2 {
		t.Fatalf("allocations per run: %v at n = 8, %v at n = 64", allocs[8], allocs[64])
	}
}

// Completed counts a completion's epochs down in one of two ways, with a branch for small walks
// and without one for large ones (Walker.small), and Settled visits an epoch's users in one
// of two ways too (a loop per epoch, or gathered into lists): each way must give the same walk,
// on both fabrics and on either side of the threshold, with lists of any length.
func TestCompletedCountdownsAgree(t *testing.T) {
	for _, tc := range []struct {
		n      int
		fabric schedules.FabricKind
	}{{8, schedules.Benes}, {32, schedules.Benes}, {8, schedules.Crossbar}, {64, schedules.Crossbar}} {
		s := randomSchedule(rand.New(rand.NewPCG(5, uint64(tc.n))), tc.n, tc.n, tc.fabric, schedules.Partial, 0.8)
		o, err := NewOrder(s)
		if err != nil {
			t.Fatal(err)
		}
		dur := make([]float64, len(s.Circuits))
		for i, c := range s.Circuits {
			dur[i] = float64(c.Bytes) / 1e11
		}
		// The third walk gathers each command's users into a list of a few at a time (Settled),
		// so that a full list is met often.
		var tls [3]*schedules.Timeline
		var counts [3]Counts
		for k, small := range []bool{true, false, false} {
			w := NewWalker(o)
			w.small = small
			if k == 2 {
				w.gmax = 3
			}
			sc := getScratch()
			err := drive(context.Background(), w, dur, ControllerReconfig(2e-7, 1e-6), sc)
			sc.release()
			if err != nil {
				t.Fatal(err)
			}
			if tls[k], err = w.Timeline(); err != nil {
				t.Fatal(err)
			}
			counts[k] = w.Counts()
		}
		if !reflect.DeepEqual(tls[0], tls[1]) || counts[0] != counts[1] {
			t.Fatalf("n = %d, %v: the countdown with a branch and the one without walk differently (counts %+v, %+v)", tc.n, tc.fabric, counts[0], counts[1])
		}
		if !reflect.DeepEqual(tls[0], tls[2]) || counts[0] != counts[2] {
			t.Fatalf("n = %d, %v: the walk that gathers a few users at a time walks differently (counts %+v, %+v)", tc.n, tc.fabric, counts[0], counts[2])
		}
		if len(tls[0].Circuits) != len(s.Circuits) {
			t.Fatalf("n = %d, %v: %d timeline entries for %d circuits", tc.n, tc.fabric, len(tls[0].Circuits), len(s.Circuits))
		}
	}
}
