package ctlmodel

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// TestCost checks one command on an idle station against ⌈k/B⌉·T_r + T_w worked by hand.
func TestCost(t *testing.T) {
	for _, tc := range []struct {
		name     string
		m        Model
		k        int
		requests int
		cost     float64
	}{
		{"B=1 one change", Model{TR: 2, TW: 10, Batch: 1}, 1, 1, 12},
		{"B=1 three changes: 3·2+10", Model{TR: 2, TW: 10, Batch: 1}, 3, 3, 16},
		{"B=4 one change", Model{TR: 2, TW: 10, Batch: 4}, 1, 1, 12},
		{"B=4 four changes, one request", Model{TR: 2, TW: 10, Batch: 4}, 4, 1, 12},
		{"B=4 five changes, two requests", Model{TR: 2, TW: 10, Batch: 4}, 5, 2, 14},
		{"B=4 seventeen changes: ⌈17/4⌉=5", Model{TR: 2, TW: 10, Batch: 4}, 17, 5, 20},
		{"B=16 sixteen", Model{TR: 0.003, TW: 0.02, Batch: 16}, 16, 1, 0.023},
		{"B=16 seventeen", Model{TR: 0.003, TW: 0.02, Batch: 16}, 17, 2, 0.026},
		{"B=0 no limit, 100 changes", Model{TR: 2, TW: 10}, 100, 1, 12},
		{"no change is no command", Model{TR: 2, TW: 10, Batch: 3}, 0, 0, 0},
		{"serial settle does not change one command", Model{TR: 2, TW: 10, Batch: 2, SerialSettle: true}, 5, 3, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.Requests(tc.k); got != tc.requests {
				t.Errorf("Requests(%d) = %d, want %d", tc.k, got, tc.requests)
			}
			if got := tc.m.Cost(tc.k); math.Abs(got-tc.cost) > 1e-12 {
				t.Errorf("Cost(%d) = %v, want %v", tc.k, got, tc.cost)
			}
			start, acked, settled := tc.m.NewStation().Command(0, tc.k)
			if start != 0 || math.Abs(settled-tc.cost) > 1e-12 || math.Abs(settled-acked-min(tc.cost, tc.m.TW)) > 1e-12 {
				t.Errorf("Command(0, %d) on an idle station = %v, %v, %v, want 0, %v, %v", tc.k, start, acked, settled, tc.cost-tc.m.TW, tc.cost)
			}
		})
	}
}

type call struct {
	t float64
	k int
}

type times struct{ start, acked, settled float64 }

// TestQueue checks several commands queueing at the station, with settles overlapping and not,
// against timelines worked by hand (T_r = 1, T_w = 10).
func TestQueue(t *testing.T) {
	calls := []call{{0, 3}, {1, 1}, {5, 4}}
	for _, tc := range []struct {
		name string
		m    Model
		want []times
	}{
		// A: requests 0–1, 1–2, settles at 12. B arrives at 1, waits for the station until 2, done
		// at 3, settles at 13 (overlapping A's settle). C arrives at 5 to an idle station.
		{"B=2 overlapping", Model{TR: 1, TW: 10, Batch: 2}, []times{{0, 2, 12}, {2, 3, 13}, {5, 7, 17}}},
		// Each command holds the station until it has settled: B waits for 12, C for 23.
		{"B=2 serial settles", Model{TR: 1, TW: 10, Batch: 2, SerialSettle: true}, []times{{0, 2, 12}, {12, 13, 23}, {23, 25, 35}}},
		// B = 1: A holds the station 0–3, B 3–4, C 5–9.
		{"B=1 overlapping", Model{TR: 1, TW: 10, Batch: 1}, []times{{0, 3, 13}, {3, 4, 14}, {5, 9, 19}}},
		// B = 1, serial: A 0–13, B 13–24, C 24–38.
		{"B=1 serial settles", Model{TR: 1, TW: 10, Batch: 1, SerialSettle: true}, []times{{0, 3, 13}, {13, 14, 24}, {24, 28, 38}}},
		// No limit: every command is one request, as the emulator's controller model always was.
		{"B=0 overlapping", Model{TR: 1, TW: 10}, []times{{0, 1, 11}, {1, 2, 12}, {5, 6, 16}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.m.NewStation()
			for i, c := range calls {
				var got times
				got.start, got.acked, got.settled = s.Command(c.t, c.k)
				if got != tc.want[i] {
					t.Errorf("command %d (%d changes at %v) = %+v, want %+v", i, c.k, c.t, got, tc.want[i])
				}
			}
		})
	}
}

// TestEmptyCommand: a command of no change neither waits nor holds the station, also with
// serial settles.
func TestEmptyCommand(t *testing.T) {
	s := Model{TR: 1, TW: 10, Batch: 2, SerialSettle: true}.NewStation()
	s.Command(0, 3) // the station is busy until 12 (2 requests, then the settle)
	if a, b, c := s.Command(5, 0); a != 12 || b != 12 || c != 12 {
		t.Errorf("no change at 5: %v, %v, %v; want all 12, when the station is free", a, b, c)
	}
	if start, _, _ := s.Command(13, 1); start != 13 {
		t.Errorf("a command at 13 after the empty one starts at %v, want 13", start)
	}
}

func TestRequestTimes(t *testing.T) {
	m := Model{TR: 2, TW: 5, Batch: 3}
	// Changes 0–2 go in request 0 (done at start+2), 3–5 in request 1 (start+4), 6 in request 2.
	for j, want := range []int{0, 0, 0, 1, 1, 1, 2} {
		if got := m.RequestOf(j); got != want {
			t.Errorf("RequestOf(%d) = %d, want %d", j, got, want)
		}
	}
	if got := m.RequestDone(10, 2); got != 16 {
		t.Errorf("RequestDone(10, 2) = %v, want 16", got)
	}
	if got := (Model{TR: 2}).RequestOf(40); got != 0 {
		t.Errorf("B=0: RequestOf(40) = %d, want 0 (one request)", got)
	}
}

func TestValidate(t *testing.T) {
	for _, m := range []Model{{TR: -1}, {TW: math.NaN()}, {TR: math.Inf(1)}, {TW: 1e6}, {Batch: -2}} {
		if m.Validate() == nil {
			t.Errorf("%+v: accepted", m)
		}
	}
	if err := (Model{TR: 1e-3, TW: 1e-2, Batch: 16, SerialSettle: true}).Validate(); err != nil {
		t.Error(err)
	}
}

// TestStationProperties: every command takes its Cost once it starts, never starts before it
// arrives or before the previous command's requests are done (after its settle too, when settles
// are serial), and serial settles never make a command start earlier than overlapping ones do.
func TestStationProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := Model{TR: rapid.Float64Range(0, 1).Draw(t, "tr"), TW: rapid.Float64Range(0, 5).Draw(t, "tw"), Batch: rapid.IntRange(0, 20).Draw(t, "batch")}
		ser := m
		ser.SerialSettle = true
		so, ss := m.NewStation(), ser.NewStation()
		var at float64
		var prevO, prevS times
		for i, n := 0, rapid.IntRange(1, 30).Draw(t, "n"); i < n; i++ {
			at += rapid.Float64Range(0, 3).Draw(t, "gap")
			k := rapid.IntRange(1, 64).Draw(t, "k")
			var o, s times
			o.start, o.acked, o.settled = so.Command(at, k)
			s.start, s.acked, s.settled = ss.Command(at, k)
			for _, x := range []times{o, s} {
				if x.start < at || math.Abs(x.settled-x.start-m.Cost(k)) > 1e-9 || math.Abs(x.acked-x.start-m.Busy(k)) > 1e-9 {
					t.Fatalf("command %d (%d changes at %v): %+v, cost %v", i, k, at, x, m.Cost(k))
				}
			}
			if i > 0 && (o.start < prevO.acked || s.start < prevS.settled) {
				t.Fatalf("command %d starts before the station is free: overlapping %+v after %+v, serial %+v after %+v", i, o, prevO, s, prevS)
			}
			if s.start < o.start {
				t.Fatalf("command %d: serial settles start it at %v, before overlapping ones (%v)", i, s.start, o.start)
			}
			prevO, prevS = o, s
		}
	})
}
