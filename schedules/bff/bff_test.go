package bff

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tetris-hil/tetris-hil/internal/safefile"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/internal/goldenfile"
	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
	"github.com/tetris-hil/tetris-hil/schedules/rnbmap"
)

var table3x3 = [][]int64{
	{0, 4, 2},
	{4, 0, 3},
	{5, 1, 0},
}

type placement struct {
	src, dst   int
	group      int
	start, end float64
}

// TestFirstFitDecreasing checks placements worked out by hand at b = 1 B/s and α_r = 1 s (each
// circuit lasts 1 + bytes seconds), in placement order.
func TestFirstFitDecreasing(t *testing.T) {
	cases := []struct {
		name string
		rows [][]int64
		want []placement
	}{
		{
			// Decreasing: (2,0)5 (0,1)4 (1,0)4 (1,2)3 (0,2)2 (2,1)1.
			// 2→0 [0,6]; 0→1 [0,5]; 1→0: Rx0 busy until 6 → [6,11];
			// 1→2 (4 s): Tx1 is free before 6 and Rx2 is free, the gap [0,6) fits → [0,4];
			// 0→2 (3 s): Tx0 busy [0,5], Rx2 busy [0,4] → [5,8];
			// 2→1 (2 s): Tx2 busy [0,6], Rx1 busy [0,5] → [6,8].
			// Distinct starts 0, 5, 6 are groups 0, 1, 2.
			name: "a gap that fits",
			rows: table3x3,
			want: []placement{
				{2, 0, 0, 0, 6}, {0, 1, 0, 0, 5}, {1, 0, 2, 6, 11},
				{1, 2, 0, 0, 4}, {0, 2, 1, 5, 8}, {2, 1, 2, 6, 8},
			},
		},
		{
			// Decreasing: (0,1)9 (1,0)8 (2,1)7 (2,0)3 (1,2)2 (0,2)1.
			// 0→1 [0,10]; 1→0 [0,9]; 2→1: Rx1 busy until 10 → [10,18];
			// 2→0 (4 s): Rx0 busy [0,9], Tx2 busy [10,18]: the joint gap [9,10) is too short,
			//   so it goes after both → [18,22];
			// 1→2 (3 s): Tx1 busy [0,9] → [9,12];
			// 0→2 (2 s): Tx0 busy [0,10], Rx2 busy [9,12] → [12,14].
			// Distinct starts 0, 9, 10, 12, 18 are groups 0..4.
			name: "a gap too short",
			rows: [][]int64{
				{0, 9, 1},
				{8, 0, 2},
				{3, 7, 0},
			},
			want: []placement{
				{0, 1, 0, 0, 10}, {1, 0, 0, 0, 9}, {2, 1, 2, 10, 18},
				{2, 0, 4, 18, 22}, {1, 2, 1, 9, 12}, {0, 2, 3, 12, 14},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := Plan(context.Background(), moetest.FromRows(t, c.rows), 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			var got []placement
			for _, p := range plan {
				got = append(got, placement{p.Src, p.Dst, p.Group, p.Start, p.End})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("placements\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

// TestReconfigOnlyOnTheTwoPorts: with α_r large, circuits on disjoint ports all start at 0, each
// paying its own α_r; nobody else waits for them.
func TestReconfigOnlyOnTheTwoPorts(t *testing.T) {
	d := moetest.FromRows(t, [][]int64{{0, 10, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0, 0}})
	plan, err := Plan(context.Background(), d, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []rnbmap.Circuit{
		{Src: 0, Dst: 1, Bytes: 10, Start: 0, End: 110},
		{Src: 2, Dst: 3, Bytes: 1, Start: 0, End: 101},
	}
	if !slices.Equal(plan, want) {
		t.Errorf("got %v, want %v", plan, want)
	}
}

func TestScheduleLayout(t *testing.T) {
	d := moetest.FromRows(t, table3x3)
	for _, fabric := range []schedules.FabricKind{"", schedules.Benes, schedules.Crossbar} {
		s, err := Schedule(context.Background(), d, schedules.Options{Bandwidth: 1, Reconfig: 1, Fabric: fabric})
		if err != nil {
			t.Fatal(err)
		}
		if vs := schedules.Verify(s, d); len(vs) != 0 {
			t.Fatalf("fabric %q: %v", fabric, schedules.ViolationsError(vs))
		}
		if s.Mode != schedules.Partial || s.N != 4 || s.Ports != 3 || s.Algorithm != Name {
			t.Errorf("header mode=%s n=%d ports=%d algorithm=%s", s.Mode, s.N, s.Ports, s.Algorithm)
		}
		// By planned start, ties in placement order: 1→2 was placed after 1→0 but starts at 0.
		var order [][2]int
		for _, c := range s.Circuits {
			order = append(order, [2]int{c.Src, c.Dst})
		}
		want := [][2]int{{2, 0}, {0, 1}, {1, 2}, {0, 2}, {1, 0}, {2, 1}}
		if !slices.Equal(order, want) {
			t.Errorf("fabric %q: order %v, want %v", fabric, order, want)
		}
	}
}

func TestScheduleGolden(t *testing.T) {
	d := moetest.FromRows(t, table3x3)
	for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
		s, err := Schedule(context.Background(), d, schedules.Options{Bandwidth: 1, Reconfig: 1, Fabric: fabric})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "table3x3-"+string(fabric)+".json")
		if goldenfile.Update() {
			if err := safefile.WriteJSON(path, s); err != nil {
				t.Fatal(err)
			}
		}
		want, err := schedules.LoadSchedule(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !equal(s, want) {
			t.Errorf("schedule differs from %s (run go test -update after checking the change)", path)
		}
	}
}

func equal(a, b *schedules.Schedule) bool {
	if a.Algorithm != b.Algorithm || a.N != b.N || a.Ports != b.Ports || a.Fabric != b.Fabric ||
		a.Mode != b.Mode || len(a.Circuits) != len(b.Circuits) {
		return false
	}
	for i := range a.Circuits {
		x, y := a.Circuits[i], b.Circuits[i]
		if x.Src != y.Src || x.Dst != y.Dst || x.Bytes != y.Bytes || x.Group != y.Group ||
			!x.Path.Equal(y.Path) || *x.PlannedStart != *y.PlannedStart || *x.PlannedEnd != *y.PlannedEnd {
			return false
		}
	}
	return true
}

func TestRejectsBadOptions(t *testing.T) {
	d := moetest.FromRows(t, table3x3)
	for _, o := range []schedules.Options{{Bandwidth: -1}, {Bandwidth: 1, Reconfig: -2}, {Bandwidth: 1, Fabric: "ring"}} {
		if _, err := Schedule(context.Background(), d, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestRegistered(t *testing.T) {
	s, err := schedules.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Schedule(context.Background(), moetest.FromRows(t, table3x3), schedules.Options{Bandwidth: 1, Reconfig: 1})
	if err != nil || got.Algorithm != Name {
		t.Fatalf("registered scheduler: %v, %v", got, err)
	}
}

// reference is first-fit decreasing the slow way: the candidate starts of an entry are 0 and
// every planned end on its two ports; it takes the smallest candidate whose interval meets no
// busy interval of either port.
func reference(d *schedules.Demand, b, alpha float64) []rnbmap.Circuit {
	pairs := d.Pairs()
	slices.SortStableFunc(pairs, func(x, y schedules.Pair) int {
		switch {
		case x.Bytes > y.Bytes:
			return -1
		case x.Bytes < y.Bytes:
			return 1
		}
		return 0
	})
	var plan []rnbmap.Circuit
	for _, q := range pairs {
		dur := alpha + float64(q.Bytes)/b
		cands := []float64{0}
		for _, c := range plan {
			if c.Src == q.Src || c.Dst == q.Dst {
				cands = append(cands, c.End)
			}
		}
		slices.Sort(cands)
		for _, t := range cands {
			ok := true
			for _, c := range plan {
				if (c.Src == q.Src || c.Dst == q.Dst) && t < c.End && c.Start < t+dur {
					ok = false
					break
				}
			}
			if ok {
				plan = append(plan, rnbmap.Circuit{Src: q.Src, Dst: q.Dst, Bytes: q.Bytes, Start: t, End: t + dur})
				break
			}
		}
	}
	return plan
}

func drawDemand(t *rapid.T) *schedules.Demand {
	n := rapid.IntRange(1, 9).Draw(t, "n")
	d := schedules.NewDemand(n)
	sizes := rapid.SampledFrom([]int64{0, 0, 1, 3, 3, 8, 100, 1000, 12345})
	for i := range n {
		for j := range n {
			d.Bytes[i][j] = sizes.Draw(t, "bytes")
		}
	}
	d.CountDiagonal = rapid.Bool().Draw(t, "diag")
	return d
}

func TestPropertyBFF(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := drawDemand(t)
		b := rapid.SampledFrom([]float64{1, 7, 1e9, 1e11}).Draw(t, "bandwidth")
		alpha := rapid.SampledFrom([]float64{0, 1e-6, 0.5, 3}).Draw(t, "alpha")
		plan, err := Plan(context.Background(), d, b, alpha)
		if err != nil {
			t.Fatal(err)
		}
		want := reference(d, b, alpha)
		if len(plan) != len(want) {
			t.Fatalf("%d circuits, reference %d", len(plan), len(want))
		}
		for i := range plan {
			g, w := plan[i], want[i]
			if g.Src != w.Src || g.Dst != w.Dst || g.Bytes != w.Bytes || g.Start != w.Start || g.End != w.End {
				t.Fatalf("circuit %d: %+v, reference %+v", i, g, w)
			}
		}
		if err := rnbmap.CheckPlan(plan, d.N()); err != nil {
			t.Fatal(err)
		}
		completion := 0.0
		for _, c := range plan {
			completion = max(completion, c.End)
		}
		if lb := schedules.LowerBound(d, b, alpha); completion < lb.Max()*(1-1e-12) {
			t.Fatalf("completion %g below lower bounds %+v", completion, lb)
		}
		for _, fabric := range []schedules.FabricKind{schedules.Benes, schedules.Crossbar} {
			s, err := Schedule(context.Background(), d, schedules.Options{Bandwidth: b, Reconfig: alpha, Fabric: fabric})
			if err != nil {
				t.Fatal(err)
			}
			if vs := schedules.Verify(s, d); len(vs) != 0 {
				t.Fatalf("%s: %v", fabric, schedules.ViolationsError(vs))
			}
		}
	})
}
