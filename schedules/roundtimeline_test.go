package schedules

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
	"pgregory.net/rapid"
)

// genRoundTimeline draws a barrier execution of s stored by round: rounds one after another,
// each circuit in the round of its group's rank (or, now and then, another), every switch its
// circuits need changed by its round's command, then broken: ends before starts, NaN and
// infinite times, measured transmit starts, changes dropped, flipped, moved to another round or
// put out of order.
func genRoundTimeline(t *rapid.T, s *Schedule) *RoundTimeline {
	groups := slices.Sorted(func(yield func(int) bool) {
		seen := map[int]bool{}
		for _, c := range s.Circuits {
			if !seen[c.Group] && !yield(c.Group) {
				return
			}
			seen[c.Group] = true
		}
	})
	nr := max(len(groups), 1) + rapid.IntRange(0, 1).Draw(t, "extra round")
	rank := map[int]int{}
	for i, g := range groups {
		rank[g] = i
	}
	alpha := rapid.SampledFrom([]float64{0, 1, 1e-11}).Draw(t, "alpha")
	now := rapid.SampledFrom([]float64{0, 1, 1e4}).Draw(t, "base")
	rounds := make([]RoundTiming, nr)
	roundOf := make([]int32, len(s.Circuits))
	ends := make([]float64, len(s.Circuits))
	var transmit []float64
	if rapid.IntRange(0, 3).Draw(t, "measured starts") == 0 {
		transmit = make([]float64, len(s.Circuits))
		for c := range transmit {
			transmit[c] = math.NaN()
		}
	}
	for c := range s.Circuits {
		roundOf[c] = int32(rank[s.Circuits[c].Group])
		if rapid.IntRange(0, 9).Draw(t, "other round") == 0 {
			roundOf[c] = int32(rapid.IntRange(0, nr-1).Draw(t, "round"))
		}
	}
	type change struct {
		round, stage, sw int
		to               benes.State
	}
	var changes []change
	state := map[[2]int]benes.State{}
	for r := range rounds {
		rt := &rounds[r]
		rt.Ready = now
		changed := false
		for c := range s.Circuits {
			if int(roundOf[c]) != r || s.Fabric != Benes {
				continue
			}
			for _, tr := range s.Circuits[c].Path.All() {
				k := [2]int{tr.Stage, tr.Switch}
				if tr.Stage < 0 || tr.Switch < 0 || tr.Switch >= max(s.N/2, 1) {
					continue // off the fabric: a round timeline cannot name it
				}
				if state[k] != tr.State() {
					state[k] = tr.State()
					changes = append(changes, change{r, tr.Stage, tr.Switch, tr.State()})
					changed = true
				}
			}
		}
		rt.ReconfigStart, rt.ChangeStart, rt.ChangeEnd = now, now, now
		if changed {
			rt.ChangeEnd = now + alpha
		}
		end := rt.ChangeEnd
		for c := range s.Circuits {
			if int(roundOf[c]) == r {
				ends[c] = rt.ChangeEnd + rapid.SampledFrom([]float64{0, 1, 2, 1e-11}).Draw(t, "duration")
				end = max(end, ends[c])
			}
		}
		now = end
	}
	for range rapid.IntRange(0, 3).Draw(t, "breaks") {
		switch rapid.IntRange(0, 9).Draw(t, "break") {
		case 0:
			if len(ends) > 0 {
				c := rapid.IntRange(0, len(ends)-1).Draw(t, "circuit")
				ends[c] = rapid.SampledFrom([]float64{-1, math.NaN(), math.Inf(1), 0}).Draw(t, "end")
			}
		case 1:
			r := &rounds[rapid.IntRange(0, nr-1).Draw(t, "round")]
			*rapid.SampledFrom([]*float64{&r.Ready, &r.ReconfigStart, &r.ChangeStart, &r.ChangeEnd}).Draw(t, "which") =
				rapid.SampledFrom([]float64{-1, math.NaN(), math.Inf(1), 0.5, 1e4}).Draw(t, "time")
		case 2:
			if len(transmit) > 0 {
				c := rapid.IntRange(0, len(transmit)-1).Draw(t, "measured")
				transmit[c] = rapid.SampledFrom([]float64{0, 0.5, 1e4, math.Inf(1)}).Draw(t, "start")
			}
		case 3:
			if len(changes) > 0 {
				k := rapid.IntRange(0, len(changes)-1).Draw(t, "drop")
				changes = append(changes[:k], changes[k+1:]...)
			}
		case 4:
			if len(changes) > 0 {
				changes[rapid.IntRange(0, len(changes)-1).Draw(t, "flip")].to ^= 1
			}
		case 5:
			if len(changes) > 0 {
				changes[rapid.IntRange(0, len(changes)-1).Draw(t, "move")].round = rapid.IntRange(0, nr-1).Draw(t, "to round")
			}
		case 6:
			perm := rapid.Permutation(iota[int](len(changes))).Draw(t, "shuffle")
			out := make([]change, len(perm))
			for i, p := range perm {
				out[i] = changes[p]
			}
			changes = out
		case 7:
			if len(changes) > 0 {
				changes = append(changes, changes[rapid.IntRange(0, len(changes)-1).Draw(t, "repeat")])
			}
		case 8: // a change on a stage past the fabric's (a round timeline can hold one)
			if s.Fabric == Benes && len(rounds) > 0 {
				changes = append(changes, change{0, 99, 0, benes.Cross})
			}
		default:
			if len(roundOf) > 0 {
				roundOf[rapid.IntRange(0, len(roundOf)-1).Draw(t, "regroup")] = int32(rapid.IntRange(0, nr-1).Draw(t, "new round"))
			}
		}
	}
	rc := NewRoundChanges(s.N)
	for _, ch := range changes {
		if err := rc.Add(ch.round, ch.stage, ch.sw, ch.to); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := NewRoundTimeline(rounds, roundOf, ends, transmit, rc)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestVerifyRoundTimelineMatchesOracle: a timeline stored by round is checked exactly as its
// expansion is, by the current verifier and by the oracle (the verifier as it was before it
// read timelines entry by entry).
func TestVerifyRoundTimelineMatchesOracle(t *testing.T) {
	seen := kindsSeen{}
	rapid.Check(t, func(t *rapid.T) {
		s := genSchedule(t)
		s.Mode = Barrier
		rt := genRoundTimeline(t, s)
		tl := rt.Expand()
		if len(tl.Circuits) != rt.Len() || len(tl.SwitchChanges) != rt.NumSwitchChanges() || tl.SwitchChanges == nil {
			t.Fatalf("Expand: %d circuits, %d changes (nil %v); Len %d, NumSwitchChanges %d",
				len(tl.Circuits), len(tl.SwitchChanges), tl.SwitchChanges == nil, rt.Len(), rt.NumSwitchChanges())
		}
		want := oracleVerifyTimeline(s, tl)
		if got := VerifyTimeline(s, tl); !reflect.DeepEqual(got, want) {
			t.Fatalf("VerifyTimeline of the expansion differs from the oracle\n got: %#v\nwant: %#v", got, want)
		}
		if got := VerifyRoundTimeline(s, rt); !reflect.DeepEqual(got, want) {
			t.Fatalf("VerifyRoundTimeline differs from the oracle on its expansion\n got: %#v\nwant: %#v", got, want)
		}
		if got := verifyTimelineOf[int](s, timelineView{rt: rt}); !reflect.DeepEqual(got, want) {
			t.Fatalf("verifyTimelineOf[int] differs from the oracle\n got: %#v\nwant: %#v", got, want)
		}
		if c := tl.Completion(); c != rt.Completion() && !(math.IsNaN(c) && math.IsNaN(rt.Completion())) {
			t.Fatalf("Completion %g, of the expansion %g", rt.Completion(), c)
		}
		seen.add(want)
	})
	seen.require(t, TimelineShape, EndpointOverlap, LaneOverlap, SwitchUnderLiveCircuit)
}

// TestRoundTimelineEntries: each entry is what the rules of barrier execution say (a round's
// circuits share their ready, reconfiguration and transmit-start times; its changes, their
// span), switch ids round-trip for every fabric size and across blocks, and bad input is
// refused by name.
func TestRoundTimelineEntries(t *testing.T) {
	rounds := []RoundTiming{{Ready: 0, ReconfigStart: 0, ChangeStart: 0, ChangeEnd: 0}, {Ready: 3, ReconfigStart: 3.5, ChangeStart: 3.5, ChangeEnd: 4}}
	rc := NewRoundChanges(1 << 20)
	for _, ch := range []struct {
		round, stage, sw int
		to               benes.State
	}{{1, 38, 1<<19 - 1, benes.Cross}, {1, 0, 0, benes.Bar}, {0, 3, 12345, benes.Cross}} {
		if err := rc.Add(ch.round, ch.stage, ch.sw, ch.to); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := NewRoundTimeline(rounds, []int32{1, 0, 1}, []float64{7, 2, 6}, []float64{math.NaN(), math.NaN(), 4.25}, rc)
	if err != nil {
		t.Fatal(err)
	}
	wantC := []CircuitTiming{
		{Circuit: 0, Ready: 3, PathReady: 3, ReconfigStart: 3.5, TransmitStart: 4, End: 7},
		{Circuit: 1, Ready: 0, PathReady: 0, ReconfigStart: 0, TransmitStart: 0, End: 2},
		{Circuit: 2, Ready: 3, PathReady: 3, ReconfigStart: 3.5, TransmitStart: 4.25, End: 6},
	}
	wantS := []SwitchChange{
		{Stage: 38, Switch: 1<<19 - 1, From: benes.Bar, To: benes.Cross, Start: 3.5, End: 4},
		{Stage: 0, Switch: 0, From: benes.Cross, To: benes.Bar, Start: 3.5, End: 4},
		{Stage: 3, Switch: 12345, From: benes.Bar, To: benes.Cross, Start: 0, End: 0},
	}
	tl := rt.Expand()
	if !reflect.DeepEqual(tl.Circuits, wantC) || !reflect.DeepEqual(tl.SwitchChanges, wantS) {
		t.Fatalf("Expand:\n got %+v\n     %+v\nwant %+v\n     %+v", tl.Circuits, tl.SwitchChanges, wantC, wantS)
	}
	if rt.Completion() != 7 || rt.Rounds() != 2 || rt.Len() != 3 || rt.NumSwitchChanges() != 3 {
		t.Fatalf("Completion %g, Rounds %d, Len %d, NumSwitchChanges %d; want 7, 2, 3, 3", rt.Completion(), rt.Rounds(), rt.Len(), rt.NumSwitchChanges())
	}
	for _, n := range []int{0, 2, 4, 8, 256, 1 << 20} {
		half := max(n/2, 1)
		c := NewRoundChanges(n)
		if err := c.Add(7, 5, half-1, benes.Cross); err != nil {
			t.Fatal(err)
		}
		if r, stage, sw, to := c.At(0); r != 7 || stage != 5 || sw != half-1 || to != benes.Cross {
			t.Errorf("n = %d: change (7, 5, %d, cross) reads back as (%d, %d, %d, %s)", n, half-1, r, stage, sw, to)
		}
		if err := c.Add(0, 0, half, benes.Cross); err == nil || !strings.Contains(err.Error(), "not on the fabric") {
			t.Errorf("n = %d: switch %d (one past the stage) accepted: %v", n, half, err)
		}
	}
	// Three blocks and a bit: every change reads back, in order.
	big := NewRoundChanges(64)
	const many = 3*changeBlock + 5
	for k := range many {
		if err := big.Add(k/1000, k%11, k%32, benes.State(k&1)); err != nil {
			t.Fatal(err)
		}
	}
	for k := range many {
		if r, stage, sw, to := big.At(k); r != k/1000 || stage != k%11 || sw != k%32 || to != benes.State(k&1) {
			t.Fatalf("change %d reads back as (%d, %d, %d, %s)", k, r, stage, sw, to)
		}
	}
	if big.Len() != many || len(big.blocks) != 4 || cap(big.blocks[3]) != changeBlock {
		t.Fatalf("%d changes in %d blocks (last of %d): want %d in 4", big.Len(), len(big.blocks), cap(big.blocks[len(big.blocks)-1]), many)
	}
	for _, tc := range []struct {
		name    string
		roundOf []int32
		ends    []float64
		tx      []float64
		changes *RoundChanges
		want    string
	}{
		{"ends short", []int32{0, 0}, []float64{1}, nil, nil, "2 circuits in rounds, 1 ends"},
		{"transmit short", []int32{0}, []float64{1}, []float64{}, nil, "0 transmit starts"},
		{"round out of range", []int32{0, 2}, []float64{1, 1}, nil, nil, "circuit 1 is in round 2, there are 2"},
		{"negative round", []int32{-1}, []float64{1}, nil, nil, "circuit 0 is in round -1"},
		{"change past the rounds", nil, nil, nil, big, "switch change 2000 is in round 2, there are 2"},
	} {
		if _, err := NewRoundTimeline(rounds, tc.roundOf, tc.ends, tc.tx, tc.changes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if err := rc.Add(-1, 0, 0, benes.Bar); err == nil || !strings.Contains(err.Error(), "round -1 is out of range") {
		t.Errorf("a change in round -1: %v", err)
	}
	if err := rc.Add(0, -1, 0, benes.Bar); err == nil {
		t.Error("a change on stage -1 accepted")
	}
}
