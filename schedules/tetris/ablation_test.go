package tetris

import (
	"context"
	"slices"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/internal/moetest"
)

type timed struct {
	u, v       int
	group      int
	start, end float64
}

func timesOf(s *schedules.Schedule) []timed {
	var ts []timed
	for _, c := range s.Circuits {
		ts = append(ts, timed{c.Src, c.Dst, c.Group, *c.PlannedStart, *c.PlannedEnd})
	}
	return ts
}

// TestAblationsHandWorked runs each option of Tetris Figure 6 on small demands whose schedules
// were worked out by hand (b = 1 byte/s, α_r = 1 s unless stated).
func TestAblationsHandWorked(t *testing.T) {
	d4 := demandOf(4, map[pair]int64{{0, 1}: 4, {0, 2}: 2, {1, 0}: 3, {2, 1}: 1, {3, 2}: 5})
	// Rx2 hears from Tx0 and Tx1, each of which also has a cheap demand elsewhere.
	d3 := demandOf(3, map[pair]int64{{0, 1}: 1, {1, 0}: 1, {0, 2}: 5, {1, 2}: 5})
	cases := []struct {
		name   string
		d      *schedules.Demand
		o      schedules.Options
		fabric schedules.FabricKind
		mode   schedules.Mode
		want   []timed
	}{{
		// The matchings and paths of TestHandWorked4x4, run as rounds. Round 0 needs Cross
		// switches: everyone waits α_r and the round lasts until (3,2) ends at 6. Round 1 changes
		// middle switch 0: both circuits start at 6 + 1.
		name: "no-partial", d: d4, o: schedules.Options{Bandwidth: 1, Reconfig: 1, NoPartial: true},
		fabric: schedules.Benes, mode: schedules.Barrier,
		want: []timed{{3, 2, 0, 1, 6}, {0, 1, 0, 1, 5}, {1, 0, 0, 1, 4}, {0, 2, 1, 7, 9}, {2, 1, 1, 7, 8}},
	}, {
		// On the crossbar a circuit starts α_r after both endpoints are free: the same matchings
		// as on the Beneš network ((0,2) waits for Rx2 until 6, (2,1) for Rx1 until 5).
		name: "crossbar", d: d4, o: schedules.Options{Bandwidth: 1, Reconfig: 1, Fabric: schedules.Crossbar},
		fabric: schedules.Crossbar, mode: schedules.Partial,
		want: []timed{{3, 2, 0, 1, 6}, {0, 1, 0, 1, 5}, {1, 0, 0, 1, 4}, {0, 2, 1, 7, 9}, {2, 1, 1, 6, 7}},
	}, {
		// Crossbar barrier rounds: every transmitter re-points every round.
		name: "crossbar no-partial", d: d4, o: schedules.Options{Bandwidth: 1, Reconfig: 1, Fabric: schedules.Crossbar, NoPartial: true},
		fabric: schedules.Crossbar, mode: schedules.Barrier,
		want: []timed{{3, 2, 0, 1, 6}, {0, 1, 0, 1, 5}, {1, 0, 0, 1, 4}, {0, 2, 1, 7, 9}, {2, 1, 1, 7, 8}},
	}, {
		// With degree coverage (α_r = 0, crossbar) C = {Tx0, Tx1, Rx2}: W = Tx0 6, Tx1 6, Rx2 10,
		// all costs are max W ≤ B = 10, and the walk takes (0,2) (key 10, first by port) then
		// (1,0): Δ = 2 matchings. Then W_Rx2 = 5 puts (1,2) before (0,1): Rx2 busy 0..5, 5..10.
		name: "degree coverage", d: d3, o: schedules.Options{Bandwidth: 1, Reconfig: 0, Fabric: schedules.Crossbar},
		fabric: schedules.Crossbar, mode: schedules.Partial,
		want: []timed{{0, 2, 0, 0, 5}, {1, 0, 0, 0, 1}, {1, 2, 1, 5, 10}, {0, 1, 1, 5, 6}},
	}, {
		// Without it the cheapest pair goes first: (0,1) and (1,0) cost 6, (0,2) and (1,2) 10, so
		// matching 0 leaves Rx2 idle, and Rx2's two demands need two more matchings: 1..6, 6..11.
		name: "no-degree-coverage", d: d3, o: schedules.Options{Bandwidth: 1, Reconfig: 0, Fabric: schedules.Crossbar, NoDegreeCoverage: true},
		fabric: schedules.Crossbar, mode: schedules.Partial,
		want: []timed{{0, 1, 0, 0, 1}, {1, 0, 0, 0, 1}, {0, 2, 1, 1, 6}, {1, 2, 2, 6, 11}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Schedule(context.Background(), c.d, c.o)
			if err != nil {
				t.Fatal(err)
			}
			checkSchedule(t, c.d, c.o, s)
			if s.Fabric != c.fabric || s.Mode != c.mode {
				t.Errorf("%s/%s, want %s/%s", s.Fabric, s.Mode, c.fabric, c.mode)
			}
			if got := timesOf(s); !slices.Equal(got, c.want) {
				t.Errorf("circuits %v,\nwant %v", got, c.want)
			}
		})
	}
}

// TestRegisteredSchedulers: "tetris" plans on the Beneš network unless told crossbar, "snb" always
// on the crossbar, and both record the ablation options they ran with.
func TestRegisteredSchedulers(t *testing.T) {
	d := moetest.Demand(3, 6, 1, 0.2)
	cases := []struct {
		algo   string
		o      schedules.Options
		fabric schedules.FabricKind
		n      int
		opts   map[string]string
	}{
		{"tetris", schedules.Options{Bandwidth: 1e9, Reconfig: 1e-6}, schedules.Benes, 8,
			map[string]string{"no-partial": "false", "naive-routing": "false", "no-degree-coverage": "false"}},
		{"tetris", schedules.Options{Bandwidth: 1e9, Reconfig: 1e-6, Fabric: schedules.Crossbar, NaiveRouting: true}, schedules.Crossbar, 6,
			map[string]string{"no-partial": "false", "naive-routing": "true", "no-degree-coverage": "false"}},
		{"snb", schedules.Options{Bandwidth: 1e9, Reconfig: 1e-6, NoDegreeCoverage: true}, schedules.Crossbar, 6,
			map[string]string{"no-partial": "false", "naive-routing": "false", "no-degree-coverage": "true"}},
		{"snb", schedules.Options{Bandwidth: 1e9, Reconfig: 1e-6, Fabric: schedules.Benes, NoPartial: true}, schedules.Crossbar, 6,
			map[string]string{"no-partial": "true", "naive-routing": "false", "no-degree-coverage": "false"}},
	}
	for _, c := range cases {
		sch, err := schedules.Lookup(c.algo)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sch.Schedule(context.Background(), d, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if s.Algorithm != c.algo || s.Fabric != c.fabric || s.N != c.n || s.Ports != 6 {
			t.Errorf("%s %+v: algorithm %q fabric %s n %d ports %d", c.algo, c.o, s.Algorithm, s.Fabric, s.N, s.Ports)
		}
		for k, v := range c.opts {
			if s.Params.Options[k] != v {
				t.Errorf("%s %+v: option %s = %q, want %q", c.algo, c.o, k, s.Params.Options[k], v)
			}
		}
		if s.Params.BandwidthBytesPerSecond != c.o.Bandwidth || s.Params.ReconfigSeconds != c.o.Reconfig {
			t.Errorf("%s: params %+v", c.algo, s.Params)
		}
	}
}

// TestBadInput: options and demands no schedule can be made from are errors, not panics.
func TestBadInput(t *testing.T) {
	d := moetest.Demand(1, 4, 1, 0)
	cases := []struct {
		name string
		d    *schedules.Demand
		o    schedules.Options
	}{
		{"zero bandwidth", d, schedules.Options{Reconfig: 1}},
		{"negative reconfiguration", d, schedules.Options{Bandwidth: 1, Reconfig: -1}},
		{"unknown fabric", d, schedules.Options{Bandwidth: 1, Fabric: "torus"}},
		{"nil demand", nil, schedules.Options{Bandwidth: 1}},
		{"empty demand", schedules.NewDemand(0), schedules.Options{Bandwidth: 1}},
	}
	for _, c := range cases {
		if _, err := Schedule(context.Background(), c.d, c.o); err == nil {
			t.Errorf("%s: want an error", c.name)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Schedule(ctx, d, schedules.Options{Bandwidth: 1}); err == nil {
		t.Error("cancelled context: want an error")
	}
}

// TestDiagonalAndEmpty: local traffic is ignored unless the demand counts it; a demand with
// nothing to carry gives an empty schedule.
func TestDiagonalAndEmpty(t *testing.T) {
	o := schedules.Options{Bandwidth: 1, Reconfig: 1}
	d := demandOf(4, map[pair]int64{{1, 1}: 7, {2, 2}: 3})
	s, err := Schedule(context.Background(), d, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Circuits) != 0 {
		t.Fatalf("diagonal-only demand: %d circuits, want none", len(s.Circuits))
	}
	d.CountDiagonal = true
	s, err = Schedule(context.Background(), d, o)
	if err != nil {
		t.Fatal(err)
	}
	checkSchedule(t, d, o, s)
	// (1,1) and (2,2) have all-Bar paths (the identity): no reconfiguration, both start at 0.
	if got, want := timesOf(s), []timed{{1, 1, 0, 0, 7}, {2, 2, 0, 0, 3}}; !slices.Equal(got, want) {
		t.Errorf("circuits %v, want %v", got, want)
	}
}
