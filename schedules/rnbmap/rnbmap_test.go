package rnbmap

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

func fabric(t interface{ Fatal(...any) }, n int) *benes.Fabric {
	f, err := benes.New(n)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// tiePlan is Sunflow's plan of the 3×3 table in package sunflow (b = 1 B/s, α_r = 1 s).
var tiePlan = []Circuit{
	{Src: 0, Dst: 1, Bytes: 4, Group: 0, Start: 0, End: 5},
	{Src: 1, Dst: 0, Bytes: 4, Group: 0, Start: 0, End: 5},
	{Src: 0, Dst: 2, Bytes: 2, Group: 1, Start: 5, End: 8},
	{Src: 2, Dst: 1, Bytes: 1, Group: 1, Start: 5, End: 7},
	{Src: 2, Dst: 0, Bytes: 5, Group: 2, Start: 7, End: 13},
	{Src: 1, Dst: 2, Bytes: 3, Group: 3, Start: 8, End: 12},
}

// TestLiveSetsByHand: the live sets of tiePlan, listed by hand, and each circuit's path is the one
// plain looping gives it within the live set at its start.
func TestLiveSetsByHand(t *testing.T) {
	f := fabric(t, 4)
	paths, err := Paths(f, tiePlan)
	if err != nil {
		t.Fatal(err)
	}
	live := []struct {
		at      float64
		set     []benes.Conn // the live set, circuits starting at `at` included
		started []int        // plan indices of the circuits starting at `at`, by position in set
	}{
		// 0→1 and 1→0 end at 5, so they are not live at 5 (half-open intervals).
		{0, []benes.Conn{{Src: 0, Dst: 1}, {Src: 1, Dst: 0}}, []int{0, 1}},
		{5, []benes.Conn{{Src: 0, Dst: 2}, {Src: 2, Dst: 1}}, []int{2, 3}},
		// 2→1 ends at 7; 0→2 runs on to 8 and is routed again (without changing its path).
		{7, []benes.Conn{{Src: 0, Dst: 2}, {Src: 2, Dst: 0}}, []int{-1, 4}},
		{8, []benes.Conn{{Src: 2, Dst: 0}, {Src: 1, Dst: 2}}, []int{-1, 5}},
	}
	for _, l := range live {
		want, err := f.RoutePaths(l.set)
		if err != nil {
			t.Fatal(err)
		}
		for k, c := range l.started {
			if c < 0 {
				continue
			}
			if !slices.Equal(paths[c].Traversals(), want[k]) {
				t.Errorf("t=%g: circuit %d (%d->%d) has path %v, the live-set routing gives %v",
					l.at, c, tiePlan[c].Src, tiePlan[c].Dst, paths[c], want[k])
			}
		}
	}
}

// TestMappingIgnoresRunningCircuits is the RNB cost the mapping exposes, worked by hand on the
// 4-port fabric. A = 1→0 runs alone over [0, 10): plain looping puts the component {A} in
// orientation 0, which sends its smallest input port upper. C = 0→1 starts at 1: the live set
// {A, C} has input ports 0 and 1 on input switch 0, so they take opposite children, and
// orientation 0 sends the smaller port, C's, upper. C keeps that path although A already holds
// the upper lane out of input switch 0 (A enters on lane 1 and leaves on lane 0, Cross; C needs
// lane 0 to lane 0, Bar), so on the fabric C must wait for A.
func TestMappingIgnoresRunningCircuits(t *testing.T) {
	f := fabric(t, 4)
	plan := []Circuit{
		{Src: 1, Dst: 0, Bytes: 9, Start: 0, End: 10},
		{Src: 0, Dst: 1, Bytes: 3, Start: 1, End: 5},
	}
	paths, err := Paths(f, plan)
	if err != nil {
		t.Fatal(err)
	}
	a, c := paths[0], paths[1]
	if want := f.NewPath(1, 0, 0); !a.Equal(want) {
		t.Errorf("A: %v, want the upper path %v", a, want)
	}
	if want := f.NewPath(0, 1, 0); !c.Equal(want) {
		t.Errorf("C: %v, want the upper path %v", c, want)
	}
	if a.At(0) != (benes.Traversal{Stage: 0, Switch: 0, In: 1, Out: 0}) || c.At(0) != (benes.Traversal{Stage: 0, Switch: 0, In: 0, Out: 0}) {
		t.Errorf("first hops A %v, C %v: want both out of switch 0 on lane 0, A Cross and C Bar", a.At(0), c.At(0))
	}
}

func TestPathsRejectsLiveSetThatIsNotAPartialPermutation(t *testing.T) {
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
		_, err := Paths(f, c.plan)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
	// Touching intervals on one port are fine: the first has ended when the second starts.
	if _, err := Paths(f, []Circuit{{Src: 0, Dst: 1, Start: 0, End: 4}, {Src: 0, Dst: 2, Start: 4, End: 5}}); err != nil {
		t.Errorf("touching intervals rejected: %v", err)
	}
}

func TestCheckPlan(t *testing.T) {
	cases := []struct {
		name string
		plan []Circuit
		want string // "" = valid
	}{
		{"sunflow table", tiePlan, ""},
		{"touching", []Circuit{{Src: 0, Dst: 1, Start: 0, End: 2}, {Src: 2, Dst: 1, Start: 2, End: 3}}, ""},
		{"rx overlap", []Circuit{{Src: 0, Dst: 1, Start: 0, End: 2}, {Src: 2, Dst: 1, Start: 1, End: 3}}, "receiver 1"},
		{"tx overlap", []Circuit{{Src: 0, Dst: 1, Start: 1, End: 2}, {Src: 0, Dst: 2, Start: 0, End: 3}}, "transmitter 0"},
		{"same start", []Circuit{{Src: 0, Dst: 1, Start: 1, End: 1}, {Src: 0, Dst: 2, Start: 1, End: 3}}, "transmitter 0"},
		{"backwards", []Circuit{{Src: 0, Dst: 1, Start: 2, End: 1}}, "not an interval"},
		{"negative start", []Circuit{{Src: 0, Dst: 1, Start: -1, End: 1}}, "not an interval"},
		{"range", []Circuit{{Src: 3, Dst: 1, Start: 0, End: 1}}, "out of range"},
	}
	for _, c := range cases {
		err := CheckPlan(c.plan, 3)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}

func TestSchedule(t *testing.T) {
	d, err := schedules.DemandFromRows([][]int64{{0, 4, 2}, {4, 0, 3}, {5, 1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	// Out of start order on purpose: the schedule lists by start, ties in plan order.
	plan := []Circuit{tiePlan[5], tiePlan[0], tiePlan[3], tiePlan[1], tiePlan[4], tiePlan[2]}
	for _, fk := range []schedules.FabricKind{"", schedules.Benes, schedules.Crossbar} {
		// Looping keeps the plan's times, which this test follows; Earliest re-times (its own tests).
		s, err := Schedule("test", d, schedules.Options{Bandwidth: 1, Reconfig: 1, Fabric: fk, RNBMapping: "looping"}, plan, map[string]string{"k": "v"})
		if err != nil {
			t.Fatal(err)
		}
		if vs := schedules.Verify(s, d); len(vs) != 0 {
			t.Fatalf("%q: %v", fk, schedules.ViolationsError(vs))
		}
		var got [][2]int
		for _, c := range s.Circuits {
			got = append(got, [2]int{c.Src, c.Dst})
			if (fk == schedules.Crossbar) != (c.Path.Len() == 0) {
				t.Errorf("%q: circuit %d->%d has %d traversals", fk, c.Src, c.Dst, c.Path.Len())
			}
		}
		want := [][2]int{{0, 1}, {1, 0}, {2, 1}, {0, 2}, {2, 0}, {1, 2}}
		if !slices.Equal(got, want) {
			t.Errorf("%q: order %v, want %v", fk, got, want)
		}
		if c := s.Circuits[4]; *c.PlannedStart != 7 || *c.PlannedEnd != 13 || c.Group != 2 {
			t.Errorf("%q: 2->0 planned [%g, %g) group %d, want [7, 13) group 2", fk, *c.PlannedStart, *c.PlannedEnd, c.Group)
		}
		if s.N != 4 || s.Ports != 3 || s.Mode != schedules.Partial || s.Params.Options["k"] != "v" {
			t.Errorf("%q: header n=%d ports=%d mode=%s options=%v", fk, s.N, s.Ports, s.Mode, s.Params.Options)
		}
	}
	if _, err := Schedule("test", d, schedules.Options{Bandwidth: 1, Fabric: "ring"}, plan, nil); err == nil {
		t.Error("unknown fabric accepted")
	}
	if _, err := Schedule("test", schedules.NewDemand(0), schedules.Options{Bandwidth: 1}, nil, nil); err == nil {
		t.Error("demand with no ports accepted")
	}
	bad := append(slices.Clone(plan), Circuit{Src: 0, Dst: 1, Bytes: 1, Start: 0, End: 1})
	if _, err := Schedule("test", d, schedules.Options{Bandwidth: 1}, bad, nil); err == nil {
		t.Error("overlapping plan accepted")
	}
}

// drawPlan draws a valid non-blocking plan: each new circuit starts at or after the moment both
// its ports are released, sometimes exactly then (so starts and ends coincide), sometimes later.
func drawPlan(t *rapid.T, ports int) []Circuit {
	txFree, rxFree := make([]float64, ports), make([]float64, ports)
	k := rapid.IntRange(0, 40).Draw(t, "circuits")
	plan := make([]Circuit, 0, k)
	for range k {
		s := rapid.IntRange(0, ports-1).Draw(t, "src")
		r := rapid.IntRange(0, ports-1).Draw(t, "dst")
		start := max(txFree[s], rxFree[r]) + float64(rapid.SampledFrom([]int{0, 0, 1, 3}).Draw(t, "gap"))
		end := start + float64(rapid.IntRange(1, 6).Draw(t, "length"))
		txFree[s], rxFree[r] = end, end
		plan = append(plan, Circuit{Src: s, Dst: r, Bytes: 1, Start: start, End: end})
	}
	return plan
}

// consistent reports whether paths can all be set up at once: no lane of any switch carries two
// of them and every switch they share is asked for one state.
func consistent(paths [][]benes.Traversal) bool {
	type lane struct{ stage, sw, lane int }
	type sw struct{ stage, sw int }
	in, out := map[lane]bool{}, map[lane]bool{}
	state := map[sw]benes.State{}
	for _, p := range paths {
		for _, h := range p {
			li, lo := lane{h.Stage, h.Switch, h.In}, lane{h.Stage, h.Switch, h.Out}
			if in[li] || out[lo] {
				return false
			}
			in[li], out[lo] = true, true
			k := sw{h.Stage, h.Switch}
			if st, ok := state[k]; ok && st != h.State() {
				return false
			}
			state[k] = h.State()
		}
	}
	return true
}

func TestPropertyPaths(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom([]int{2, 4, 8, 16}).Draw(t, "n")
		f := fabric(t, n)
		plan := drawPlan(t, n)
		if err := CheckPlan(plan, n); err != nil {
			t.Fatalf("generator made an invalid plan: %v", err)
		}
		paths, err := Paths(f, plan)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range plan {
			if err := f.CheckPath(c.Src, c.Dst, paths[i]); err != nil {
				t.Fatalf("circuit %d: %v", i, err)
			}
			// The live set at c's start, found the slow way.
			var set []benes.Conn
			at := -1
			for j, o := range plan {
				if o.Start == c.Start || (o.Start <= c.Start && c.Start < o.End) {
					if j == i {
						at = len(set)
					}
					set = append(set, benes.Conn{Src: o.Src, Dst: o.Dst})
				}
			}
			routed, err := f.RoutePaths(set)
			if err != nil {
				t.Fatalf("circuit %d: live set %v: %v", i, set, err)
			}
			if !consistent(routed) {
				t.Fatalf("circuit %d: the routing of live set %v is not realisable at once: %v", i, set, routed)
			}
			if !slices.Equal(paths[i].Traversals(), routed[at]) {
				t.Fatalf("circuit %d: path %v, its live-set routing gives %v", i, paths[i], routed[at])
			}
		}
	})
}
