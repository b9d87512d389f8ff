package sunflow

import (
	"context"
	"math"
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

// The 3×3 demand of the reservation-timeline tables, in bytes, at b = 1 B/s and α_r = 1 s so
// that every circuit lasts 1 + bytes seconds.
var table3x3 = [][]int64{
	{0, 4, 2},
	{4, 0, 3},
	{5, 1, 0},
}

type res struct {
	src, dst   int
	bytes      int64
	group      int
	start, end float64
}

// TestReservationTimeline3x3 checks Sunflow's reservations, worked out by hand from the
// algorithm's definition, in creation order.
func TestReservationTimeline3x3(t *testing.T) {
	cases := []struct {
		name   string
		bySize bool
		want   []res
	}{
		{
			// (src, dst) order: (0,1) (0,2) (1,0) (1,2) (2,0) (2,1).
			// t=0, scan 0: 0→1 [0,5], 1→0 [0,5]; the rest are blocked by Tx0, Tx1, Rx0, Rx1.
			// 0→1 and 1→0 both end at 5; 0→1 was created first and is freed first.
			// t=5, scan 1 (Tx0, Rx1 free): 0→2 [5,8]; 1→2 blocked (Tx1); 2→0 blocked (Rx0 is
			//   still held by 1→0); 2→1 [5,7]. Freeing both before scanning would have given
			//   2→0 instead of 2→1 here.
			// t=5, scan 2 (Tx1, Rx0 free): 1→2 blocked (Rx2), 2→0 blocked (Tx2). Nothing.
			// t=7, 2→1 ends (Tx2, Rx1 free), scan 3: 2→0 [7,13].
			// t=8, 0→2 ends (Tx0, Rx2 free), scan 4: 1→2 [8,12].
			name: "src-dst order, tie freed first-created-first",
			want: []res{
				{0, 1, 4, 0, 0, 5}, {1, 0, 4, 0, 0, 5},
				{0, 2, 2, 1, 5, 8}, {2, 1, 1, 1, 5, 7},
				{2, 0, 5, 2, 7, 13},
				{1, 2, 3, 3, 8, 12},
			},
		},
		{
			// Size order: (2,0)5 (0,1)4 (1,0)4 (1,2)3 (0,2)2 (2,1)1.
			// t=0, scan 0: 2→0 [0,6], 0→1 [0,5], 1→0 blocked (Rx0), 1→2 [0,4].
			// t=4, 1→2 ends: 1→0 blocked (Rx0), 0→2 blocked (Tx0). Nothing.
			// t=5, 0→1 ends: 1→0 blocked (Rx0), 0→2 [5,8], 2→1 blocked (Tx2).
			// t=6, 2→0 ends: 1→0 [6,11], 2→1 [6,8].
			name:   "size order",
			bySize: true,
			want: []res{
				{2, 0, 5, 0, 0, 6}, {0, 1, 4, 0, 0, 5}, {1, 2, 3, 0, 0, 4},
				{0, 2, 2, 1, 5, 8},
				{1, 0, 4, 2, 6, 11}, {2, 1, 1, 2, 6, 8},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := Plan(context.Background(), moetest.FromRows(t, table3x3), 1, 1, c.bySize)
			if err != nil {
				t.Fatal(err)
			}
			var got []res
			for _, p := range plan {
				got = append(got, res{p.Src, p.Dst, p.Bytes, p.Group, p.Start, p.End})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("reservations\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

// TestSizeOrderSkippedOnOnePort follows the simulator's ShuffleDemand: when every demand leaves
// one transmitter, the (src, dst) order is kept even with the size option.
func TestSizeOrderSkippedOnOnePort(t *testing.T) {
	d := moetest.FromRows(t, [][]int64{{0, 1, 5}, {0, 0, 0}, {0, 0, 0}})
	for _, bySize := range []bool{false, true} {
		plan, err := Plan(context.Background(), d, 1, 1, bySize)
		if err != nil {
			t.Fatal(err)
		}
		want := []rnbmap.Circuit{
			{Src: 0, Dst: 1, Bytes: 1, Group: 0, Start: 0, End: 2},
			{Src: 0, Dst: 2, Bytes: 5, Group: 1, Start: 2, End: 8},
		}
		if !slices.Equal(plan, want) {
			t.Errorf("bySize=%v: got %v, want %v", bySize, plan, want)
		}
	}
}

func TestDiagonal(t *testing.T) {
	rows := [][]int64{{7, 1}, {0, 9}}
	for _, count := range []bool{false, true} {
		d := moetest.FromRows(t, rows)
		d.CountDiagonal = count
		plan, err := Plan(context.Background(), d, 1, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if count {
			want = 3
		}
		if len(plan) != want {
			t.Errorf("CountDiagonal=%v: %d circuits, want %d: %v", count, len(plan), want, plan)
		}
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
		wantFabric := schedules.Benes
		if fabric == schedules.Crossbar {
			wantFabric = schedules.Crossbar
		}
		if s.Fabric != wantFabric || s.Mode != schedules.Partial || s.N != 4 || s.Ports != 3 || s.Algorithm != Name {
			t.Errorf("fabric %q: header fabric=%s mode=%s n=%d ports=%d algorithm=%s", fabric, s.Fabric, s.Mode, s.N, s.Ports, s.Algorithm)
		}
		// Ordered by planned start; 2→1 [5,7] was created after 0→2 [5,8] and stays after it.
		var order [][2]int
		for _, c := range s.Circuits {
			order = append(order, [2]int{c.Src, c.Dst})
			if (c.Path.Len() == 0) != (wantFabric == schedules.Crossbar) {
				t.Errorf("fabric %s: circuit %d→%d has %d traversals", wantFabric, c.Src, c.Dst, c.Path.Len())
			}
		}
		want := [][2]int{{0, 1}, {1, 0}, {0, 2}, {2, 1}, {2, 0}, {1, 2}}
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
		golden(t, filepath.Join("testdata", "table3x3-"+string(fabric)+".json"), s)
	}
}

func golden(t *testing.T, path string, s *schedules.Schedule) {
	t.Helper()
	if goldenfile.Update() {
		if err := safefile.WriteJSON(path, s); err != nil {
			t.Fatal(err)
		}
	}
	want, err := schedules.LoadSchedule(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !scheduleEqual(s, want) {
		t.Errorf("schedule differs from %s (run go test -update after checking the change)", path)
	}
}

func scheduleEqual(a, b *schedules.Schedule) bool {
	if a.Version != b.Version || a.Algorithm != b.Algorithm || a.N != b.N || a.Ports != b.Ports ||
		a.Fabric != b.Fabric || a.Mode != b.Mode || a.Params.BandwidthBytesPerSecond != b.Params.BandwidthBytesPerSecond ||
		a.Params.ReconfigSeconds != b.Params.ReconfigSeconds || len(a.Circuits) != len(b.Circuits) {
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
	for _, o := range []schedules.Options{
		{Bandwidth: 0, Reconfig: 1},
		{Bandwidth: 1, Reconfig: -1},
		{Bandwidth: 1, Reconfig: 1, Fabric: "torus"},
	} {
		if _, err := Schedule(context.Background(), d, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Plan(ctx, moetest.FromRows(t, table3x3), 1, 1, false); err == nil {
		t.Error("cancelled context: no error")
	}
}

func TestRegistered(t *testing.T) {
	s, err := schedules.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	d := moetest.FromRows(t, table3x3)
	got, err := s.Schedule(context.Background(), d, schedules.Options{Bandwidth: 1, Reconfig: 1})
	if err != nil || got.Algorithm != Name {
		t.Fatalf("registered scheduler: %v, %v", got, err)
	}
}

// reference is Sunflow written the slow way, straight from its definition: a full scan of every
// waiting demand after every single release.
func reference(d *schedules.Demand, b, alpha float64, bySize bool) []rnbmap.Circuit {
	pairs := d.Pairs()
	if bySize && !singlePort(pairs) {
		slices.SortStableFunc(pairs, func(x, y schedules.Pair) int { return cmpSign(y.Bytes, x.Bytes) })
	}
	n := d.N()
	tx, rx := make([]bool, n), make([]bool, n)
	waiting := slices.Clone(pairs)
	var plan []rnbmap.Circuit
	running := []int{}
	t, group := 0.0, 0
	for {
		placed := false
		waiting = slices.DeleteFunc(waiting, func(q schedules.Pair) bool {
			if tx[q.Src] || rx[q.Dst] {
				return false
			}
			tx[q.Src], rx[q.Dst] = true, true
			plan = append(plan, rnbmap.Circuit{Src: q.Src, Dst: q.Dst, Bytes: q.Bytes, Group: group, Start: t, End: t + (alpha + float64(q.Bytes)/b)})
			running = append(running, len(plan)-1)
			placed = true
			return true
		})
		if placed {
			group++
		}
		if len(waiting) == 0 {
			return plan
		}
		// The earliest end; running is in creation order, so the first minimum is the first created.
		best := 0
		for k, c := range running {
			if plan[c].End < plan[running[best]].End {
				best = k
			}
		}
		c := plan[running[best]]
		running = slices.Delete(running, best, best+1)
		t = c.End
		tx[c.Src], rx[c.Dst] = false, false
	}
}

func cmpSign(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// drawDemand draws a small demand with a few heavy entries, zeros, and equal sizes (ties).
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

func TestPropertySunflow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := drawDemand(t)
		b := rapid.SampledFrom([]float64{1, 7, 1e9, 1e11}).Draw(t, "bandwidth")
		alpha := rapid.SampledFrom([]float64{0, 1e-6, 0.5, 3}).Draw(t, "alpha")
		bySize := rapid.Bool().Draw(t, "bySize")
		plan, err := Plan(context.Background(), d, b, alpha, bySize)
		if err != nil {
			t.Fatal(err)
		}
		if want := reference(d, b, alpha, bySize); !slices.Equal(plan, want) {
			t.Fatalf("plan differs from the full-scan reference\n got %v\nwant %v", plan, want)
		}
		if err := rnbmap.CheckPlan(plan, d.N()); err != nil {
			t.Fatal(err)
		}
		completion := 0.0
		for _, c := range plan {
			completion = max(completion, c.End)
		}
		lb := schedules.LowerBound(d, b, alpha)
		if completion < lb.Max()*(1-1e-12) {
			t.Fatalf("completion %g below lower bounds %+v", completion, lb)
		}
		for _, fm := range []struct {
			fabric  schedules.FabricKind
			mapping string
		}{{schedules.Benes, "looping"}, {schedules.Benes, "earliest"}, {schedules.Crossbar, ""}} {
			fabric := fm.fabric
			o := schedules.Options{Bandwidth: b, Reconfig: alpha, Fabric: fabric, SunflowBySize: bySize, RNBMapping: fm.mapping}
			s, err := Schedule(context.Background(), d, o)
			if err != nil {
				t.Fatal(err)
			}
			// Verify checks that bytes add up to the demand exactly and every path is physical.
			if vs := schedules.Verify(s, d); len(vs) != 0 {
				t.Fatalf("%s: %v", fabric, schedules.ViolationsError(vs))
			}
			// Looping and the crossbar keep the plan's times; earliest re-times on the fabric,
			// never sooner than the bound.
			if fm.mapping == "earliest" {
				if planned(s) < lb.Max()*(1-1e-12) {
					t.Fatalf("%s, earliest: planned completion %g below lower bounds %+v", fabric, planned(s), lb)
				}
			} else if math.Abs(planned(s)-completion) != 0 {
				t.Fatalf("%s: schedule's planned completion %g, plan's %g", fabric, planned(s), completion)
			}
		}
	})
}

func planned(s *schedules.Schedule) float64 {
	m := 0.0
	for _, c := range s.Circuits {
		m = max(m, *c.PlannedEnd)
	}
	return m
}
