package rnbmap

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// tr is a traversal [stage, switch, in lane, out lane], as paths are written in files.
func tr(stage, sw, in, out int) benes.Traversal {
	return benes.Traversal{Stage: stage, Switch: sw, In: in, Out: out}
}

// TestAvoidLiveByHand works the strategy out on the 4-port fabric from the wiring convention of
// package benes: input switch j takes ports 2j (lane 0) and 2j+1 (lane 1); lane c out of an input
// switch goes to middle switch c on lane j; middle switch c's lane m goes to output switch m on
// lane c; output switch m's lanes 0 and 1 are ports 2m and 2m+1. So the path (src, dst, c) is
// [0, src/2, src%2, c] [1, c, src/2, dst/2] [2, dst/2, c, dst%2].
func TestAvoidLiveByHand(t *testing.T) {
	f := fabric(t, 4)
	cases := []struct {
		name      string
		plan      []Circuit
		want      [][]benes.Traversal
		fallbacks []int
	}{{
		// A = 1→0 alone: c=0 is [0,0,1,0] cross, [1,0,0,0] bar, [2,0,0,0] bar, one change from the
		// all-bar start; c=1 is [0,0,1,1] bar, [1,1,0,0] bar, [2,0,1,0] cross, also one: the tie
		// goes to c=0. C = 0→1 starts while A runs: c=0 would leave input switch 0 on lane 0,
		// A's lane, in bar where A holds it in cross (looping gives C exactly that path, see
		// TestMappingIgnoresRunningCircuits); c=1 leaves on lane 1 in cross, as A holds the
		// switch, then middle switch 1 (unused) in bar and output switch 0 on lanes 1→1 in bar,
		// as A holds it: free, with no change.
		name: "looping collides, avoid-live is free",
		plan: []Circuit{{Src: 1, Dst: 0, Start: 0, End: 10}, {Src: 0, Dst: 1, Start: 1, End: 5}},
		want: [][]benes.Traversal{
			{tr(0, 0, 1, 0), tr(1, 0, 0, 0), tr(2, 0, 0, 0)},
			{tr(0, 0, 0, 1), tr(1, 1, 0, 0), tr(2, 0, 1, 1)},
		},
	}, {
		// X = 0→1 alone: c=0 is bar, bar, [2,0,0,1] cross; c=1 is [0,0,0,1] cross, bar, bar: one
		// change each, c=0 wins and leaves output switch 0 in cross. X has ended when Y = 1→0
		// starts, so both its paths are free; c=0 ([0,0,1,0] cross, bar, [2,0,0,0] bar) changes
		// input switch 0 and output switch 0, c=1 ([0,0,1,1] bar, [1,1,0,0] bar, [2,0,1,0]
		// cross) changes nothing. Looping alone would give Y c=0.
		name: "fewest changes from the states left behind",
		plan: []Circuit{{Src: 0, Dst: 1, Start: 0, End: 1}, {Src: 1, Dst: 0, Start: 2, End: 3}},
		want: [][]benes.Traversal{
			{tr(0, 0, 0, 0), tr(1, 0, 0, 0), tr(2, 0, 0, 1)},
			{tr(0, 0, 1, 1), tr(1, 1, 0, 0), tr(2, 0, 1, 0)},
		},
	}, {
		// A = 0→0 takes c=0 (all bar, no change). B = 3→3 starts with it: c=0 needs input switch 1
		// and output switch 1 in cross (two changes), c=1 is [0,1,1,1] [1,1,1,1] [2,1,1,1], all
		// bar: no change. C = 1→2 starts while both run: c=0 leaves input switch 0 on lane 0,
		// A's; c=1 needs middle switch 1 in cross ([1,1,0,1]) where B holds it in bar, and enters
		// output switch 1 on lane 1, B's. No path is free: C takes its looping path.
		name: "no free path: fall back",
		plan: []Circuit{
			{Src: 0, Dst: 0, Start: 0, End: 10},
			{Src: 3, Dst: 3, Start: 0, End: 10},
			{Src: 1, Dst: 2, Start: 1, End: 5},
		},
		want: [][]benes.Traversal{
			{tr(0, 0, 0, 0), tr(1, 0, 0, 0), tr(2, 0, 0, 0)},
			{tr(0, 1, 1, 1), tr(1, 1, 1, 1), tr(2, 1, 1, 1)},
			nil, // the looping path, checked against Paths below
		},
		fallbacks: []int{2},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := AvoidLivePaths(f, c.plan)
			if err != nil {
				t.Fatal(err)
			}
			looping, err := Paths(f, c.plan)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range c.want {
				if want == nil {
					want = looping[i].Traversals()
				}
				if !slices.Equal(m.Paths[i].Traversals(), want) {
					t.Errorf("circuit %d (%d->%d): path %v, want %v", i, c.plan[i].Src, c.plan[i].Dst, m.Paths[i], want)
				}
			}
			if !slices.Equal(m.Fallbacks, c.fallbacks) {
				t.Errorf("fallbacks %v, want %v", m.Fallbacks, c.fallbacks)
			}
		})
	}
	// The first case is the collision looping makes: it gives C the path avoid-live avoids.
	looping, err := Paths(f, cases[0].plan)
	if err != nil {
		t.Fatal(err)
	}
	if want := []benes.Traversal{tr(0, 0, 0, 0), tr(1, 0, 0, 0), tr(2, 0, 0, 1)}; !slices.Equal(looping[1].Traversals(), want) {
		t.Errorf("looping gives C %v, the hand-worked colliding path is %v", looping[1], want)
	}
}

func TestAvoidLiveRejectsWhatPathsRejects(t *testing.T) {
	f := fabric(t, 4)
	cases := []struct {
		name string
		plan []Circuit
		want string
	}{
		{"transmitter", []Circuit{{Src: 0, Dst: 1, Start: 0, End: 4}, {Src: 0, Dst: 2, Start: 3, End: 5}}, "transmitter 0"},
		{"receiver", []Circuit{{Src: 0, Dst: 1, Start: 0, End: 4}, {Src: 2, Dst: 1, Start: 0, End: 1}}, "receiver 1"},
		{"port range", []Circuit{{Src: 0, Dst: 4, Start: 0, End: 4}}, "out of range"},
	}
	for _, c := range cases {
		if _, err := AvoidLivePaths(f, c.plan); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}

func TestParseStrategy(t *testing.T) {
	cases := []struct {
		in   string
		want Strategy
		err  bool
	}{
		{"", Earliest, false}, {"earliest", Earliest, false}, {"looping", Looping, false}, {"avoid-live", AvoidLive, false},
		{"Looping", "", true}, {"avoid_live", "", true},
	}
	for _, c := range cases {
		got, err := ParseStrategy(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("ParseStrategy(%q) = %q, %v; want %q, error %v", c.in, got, err, c.want, c.err)
		}
	}
	if _, err := Map(fabric(t, 2), nil, "ring", Timing{}); err == nil {
		t.Error("Map accepted an unknown strategy")
	}
}

// liveAtStart lists, for circuit i, the circuits mapped before it (in StartOrder) that the plan
// has live at its start: started earlier and not yet ended, or starting at the same instant.
func liveAtStart(plan []Circuit, order []int, pos int) []int {
	c := plan[order[pos]]
	var live []int
	for _, o := range order[:pos] {
		if p := plan[o]; p.Start == c.Start || p.End > c.Start {
			live = append(live, o)
		}
	}
	return live
}

// blocked reports why path cannot run beside the paths of live, or "" if it can.
func blocked(path []benes.Traversal, live [][]benes.Traversal) string {
	for _, h := range path {
		for _, p := range live {
			for _, g := range p {
				if g.Stage != h.Stage || g.Switch != h.Switch {
					continue
				}
				switch {
				case g.In == h.In:
					return fmt.Sprintf("shares input lane %d of stage %d switch %d", h.In, h.Stage, h.Switch)
				case g.Out == h.Out:
					return fmt.Sprintf("shares output lane %d of stage %d switch %d", h.Out, h.Stage, h.Switch)
				case g.State() != h.State():
					return fmt.Sprintf("needs stage %d switch %d %s, a live circuit holds it %s", h.Stage, h.Switch, h.State(), g.State())
				}
			}
		}
	}
	return ""
}

// TestPropertyAvoidLive checks every circuit against the strategy's definition the slow way:
// replaying the plan, it tries all n/2 paths of each circuit against the live circuits' paths and
// the switch states left so far, and asks that a circuit falls back exactly when none is free,
// and otherwise takes the free path with the fewest changes, then the smallest choices.
func TestPropertyAvoidLive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom([]int{2, 4, 8, 16}).Draw(t, "n")
		f := fabric(t, n)
		plan := drawPlan(t, n)
		m, err := AvoidLivePaths(f, plan)
		if err != nil {
			t.Fatal(err)
		}
		looping, err := Paths(f, plan)
		if err != nil {
			t.Fatal(err)
		}
		order := StartOrder(plan)
		left := map[[2]int]benes.State{} // switch -> state of the latest mapped circuit; absent: bar
		var fallbacks []int
		for pos, i := range order {
			c := plan[i]
			if err := f.CheckPath(c.Src, c.Dst, m.Paths[i]); err != nil {
				t.Fatalf("circuit %d: %v", i, err)
			}
			var live [][]benes.Traversal
			for _, o := range liveAtStart(plan, order, pos) {
				live = append(live, m.Paths[o].Traversals())
			}
			best, bestChanges := uint32(0), -1
			for ch := uint32(0); ch < uint32(n/2); ch++ {
				p := f.PathFrom(c.Src, c.Dst, ch)
				if blocked(p, live) != "" {
					continue
				}
				changes := 0
				for _, h := range p {
					if left[[2]int{h.Stage, h.Switch}] != h.State() {
						changes++
					}
				}
				if bestChanges < 0 || changes < bestChanges {
					best, bestChanges = ch, changes
				}
			}
			if bestChanges < 0 {
				fallbacks = append(fallbacks, i)
				if !m.Paths[i].Equal(looping[i]) {
					t.Fatalf("circuit %d has no free path but does not take its looping path %v: %v", i, looping[i], m.Paths[i])
				}
			} else {
				if why := blocked(m.Paths[i].Traversals(), live); why != "" {
					t.Fatalf("circuit %d (%d->%d) has a free path but took %v, which %s", i, c.Src, c.Dst, m.Paths[i], why)
				}
				if got := f.Choices(m.Paths[i].Traversals()); got != best {
					t.Fatalf("circuit %d (%d->%d): choices %d, the free path with the fewest changes (%d) is %d",
						i, c.Src, c.Dst, got, bestChanges, best)
				}
			}
			for _, h := range m.Paths[i].All() {
				left[[2]int{h.Stage, h.Switch}] = h.State()
			}
		}
		if !slices.Equal(m.Fallbacks, fallbacks) {
			t.Fatalf("fallbacks %v, the replay finds %v", m.Fallbacks, fallbacks)
		}
	})
}
