package emulator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// circuit builds a circuit; on a Beneš fabric of n ports the path takes the given child choices.
func circuit(n, src, dst int, bytes int64, group int, choices uint32) schedules.Circuit {
	c := schedules.Circuit{Src: src, Dst: dst, Bytes: bytes, Group: group}
	if n > 0 {
		f, err := benes.New(n)
		if err != nil {
			panic(err)
		}
		c.Path = f.NewPath(src, dst, choices)
	}
	return c
}

func sched(fabric schedules.FabricKind, mode schedules.Mode, n int, cs ...schedules.Circuit) *schedules.Schedule {
	return &schedules.Schedule{Version: schedules.FormatVersion, Algorithm: "hand", N: n, Ports: n,
		Fabric: fabric, Mode: mode, Circuits: cs,
		Params: schedules.Params{BandwidthBytesPerSecond: 1, ReconfigSeconds: 10}}
}

// timing is the expected [Ready, PathReady, ReconfigStart, TransmitStart, End] of one circuit.
type timing [5]float64

func TestHandWorkedTimelines(t *testing.T) {
	// Units: b = 1 byte/s, so a circuit of k bytes transmits for k seconds.
	// 2×2 Beneš: one switch; i→j needs Bar when i = j and Cross otherwise.
	twoByTwo := func(mode schedules.Mode) *schedules.Schedule {
		return sched(schedules.Benes, mode, 2,
			circuit(2, 0, 1, 5, 0, 0), circuit(2, 1, 0, 3, 0, 0), // Cross
			circuit(2, 0, 0, 4, 1, 0), circuit(2, 1, 1, 2, 1, 0)) // Bar
	}
	barrier2 := twoByTwo(schedules.Barrier)
	barrier2.Rounds = []schedules.Round{{Group: 0, PlannedDuration: 6}}

	// 4×4 RNB conflict: 0→0 and 2→1 both routed through the upper middle switch need its out
	// lane 0; 2→1 has its endpoints free at 0 but its path only at 100, when 0→0 ends.
	rnb := sched(schedules.Benes, schedules.Partial, 4,
		circuit(4, 0, 0, 100, 0, 0), circuit(4, 2, 1, 5, 0, 0))
	// Routed through the lower middle switch instead, 2→1 only waits for its own Cross.
	noRNB := sched(schedules.Benes, schedules.Partial, 4,
		circuit(4, 0, 0, 100, 0, 0), circuit(4, 2, 1, 5, 0, 1))

	// 4×4 barrier: round 0 is the identity on upper paths (all Bar: no reconfiguration at
	// all); round 1 swaps 0↔1, which needs changes, so both of its circuits wait α_r.
	barrier4 := sched(schedules.Benes, schedules.Barrier, 4,
		circuit(4, 0, 0, 3, 0, 0), circuit(4, 3, 3, 7, 0, 1),
		circuit(4, 0, 1, 2, 1, 0), circuit(4, 1, 0, 4, 1, 1))

	// Crossbar: transmitters point nowhere at 0. 0→1 twice re-points once; 0→2 re-points when
	// the second 0→1 ends; 1→2 re-points only when 0→2 has left receiver 2.
	xbar := sched(schedules.Crossbar, schedules.Partial, 4,
		circuit(0, 0, 1, 5, 0, 0), circuit(0, 0, 1, 3, 1, 0), circuit(0, 0, 2, 2, 2, 0), circuit(0, 1, 2, 4, 2, 0))

	// Crossbar under the controller model (T_r = 2, T_w = 5): the requests at 8 and 9 are
	// served one after the other, the second when the controller frees up at 10.
	xbarCtl := sched(schedules.Crossbar, schedules.Partial, 4,
		circuit(0, 0, 1, 1, 0, 0), circuit(0, 2, 3, 2, 0, 0), circuit(0, 0, 2, 1, 1, 0), circuit(0, 2, 0, 1, 1, 0))

	// Crossbar barrier: round 0 points both transmitters (one command); in round 1 only
	// transmitter 1 re-points, and both circuits of the round wait for it.
	xbarBarrier := sched(schedules.Crossbar, schedules.Barrier, 4,
		circuit(0, 0, 1, 5, 0, 0), circuit(0, 1, 0, 3, 0, 0), circuit(0, 0, 1, 2, 1, 0), circuit(0, 1, 2, 4, 1, 0))

	tests := []struct {
		name       string
		s          *schedules.Schedule
		rc         ReconfigModel
		want       []timing
		changes    int
		events     int
		rnbWait    float64
		completion float64
	}{
		{"2x2 partial parallel", twoByTwo(schedules.Partial), ParallelReconfig(10), []timing{
			// Cross requested at 0 (first epoch, not Bar), done at 10.
			{0, 0, 0, 10, 15}, {0, 0, 0, 10, 13},
			// Bar requested when both Cross users are done (15), done at 25.
			{15, 15, 15, 25, 29}, {15, 15, 15, 25, 27}}, 2, 2, 0, 29},
		{"2x2 partial controller", twoByTwo(schedules.Partial), ControllerReconfig(1, 10), []timing{
			{0, 0, 0, 11, 16}, {0, 0, 0, 11, 14},
			{16, 16, 16, 27, 31}, {16, 16, 16, 27, 29}}, 2, 2, 0, 31},
		{"2x2 barrier parallel", barrier2, ParallelReconfig(10), []timing{
			// Round 0: change at 0, transmit from 10; planned duration 6 holds it until 16.
			{0, 0, 0, 10, 15}, {0, 0, 0, 10, 13},
			{16, 16, 16, 26, 30}, {16, 16, 16, 26, 28}}, 2, 2, 0, 30},
		{"2x2 barrier controller", barrier2, ControllerReconfig(1, 10), []timing{
			{0, 0, 0, 11, 16}, {0, 0, 0, 11, 14},
			{17, 17, 17, 28, 32}, {17, 17, 17, 28, 30}}, 2, 2, 0, 32},
		{"4x4 RNB conflict", rnb, ParallelReconfig(10), []timing{
			{0, 0, 0, 0, 100},
			// Endpoints free at 0, path at 100; its two Cross switches then take until 110.
			{0, 100, 100, 110, 115}}, 2, 1, 100, 115},
		{"4x4 no conflict on the other path", noRNB, ParallelReconfig(10), []timing{
			{0, 0, 0, 0, 100}, {0, 0, 0, 10, 15}}, -1, 1, 0, 100},
		{"4x4 barrier", barrier4, ParallelReconfig(10), []timing{
			{0, 0, 0, 0, 3}, {0, 0, 0, 0, 7},
			{7, 7, 7, 17, 19}, {7, 7, 7, 17, 21}}, -1, 1, 0, 21},
		{"crossbar partial", xbar, ParallelReconfig(10), []timing{
			{0, 0, 0, 10, 15}, {15, 15, 15, 15, 18}, {18, 18, 18, 28, 30}, {30, 30, 30, 40, 44}}, 3, 3, 0, 44},
		{"crossbar barrier", xbarBarrier, ParallelReconfig(10), []timing{
			{0, 0, 0, 10, 15}, {0, 0, 0, 10, 13}, {15, 15, 15, 25, 27}, {15, 15, 15, 25, 29}}, 3, 2, 0, 29},
		{"crossbar controller", xbarCtl, ControllerReconfig(2, 5), []timing{
			{0, 0, 0, 7, 8}, {0, 0, 0, 7, 9}, {8, 8, 8, 15, 16}, {9, 9, 10, 17, 18}}, 4, 3, 0, 18},
		// The same requests with B = 1 (T_r per change): the first command re-points two
		// transmitters, 2·2 + 5 = 9; the later ones arrive at 10 and 11, the second queued to 12.
		{"crossbar controller B=1", xbarCtl, Controller(ControllerTiming{TR: 2, TW: 5, Batch: 1}), []timing{
			{0, 0, 0, 9, 10}, {0, 0, 0, 9, 11}, {10, 10, 10, 17, 18}, {11, 11, 12, 19, 20}}, 4, 3, 0, 20},
		// Serial settles: the command requested at 9 waits until the one of 8 has settled (15).
		{"crossbar controller serial settles", xbarCtl, Controller(ControllerTiming{TR: 2, TW: 5, SerialSettle: true}), []timing{
			{0, 0, 0, 7, 8}, {0, 0, 0, 7, 9}, {8, 8, 8, 15, 16}, {9, 9, 15, 22, 23}}, 4, 3, 0, 23},
		// Barrier rounds, B = 1: round 0's two changes take 2·2 + 5, round 1's one 2 + 5 from 14.
		{"crossbar barrier controller B=1", xbarBarrier, Controller(ControllerTiming{TR: 2, TW: 5, Batch: 1}), []timing{
			{0, 0, 0, 9, 14}, {0, 0, 0, 9, 12}, {14, 14, 14, 21, 23}, {14, 14, 14, 21, 25}}, 3, 2, 0, 25},
		// B = 2 holds both changes of round 0 in one request: as with no limit, 2 + 5.
		{"crossbar barrier controller B=2", xbarBarrier, Controller(ControllerTiming{TR: 2, TW: 5, Batch: 2}), []timing{
			{0, 0, 0, 7, 12}, {0, 0, 0, 7, 10}, {12, 12, 12, 19, 21}, {12, 12, 12, 19, 23}}, 3, 2, 0, 23},
		{"crossbar parallel, same nominal delay", xbarCtl, ParallelReconfig(7), []timing{
			{0, 0, 0, 7, 8}, {0, 0, 0, 7, 9}, {8, 8, 8, 15, 16}, {9, 9, 9, 16, 17}}, 4, 3, 0, 17},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, tl, err := Run(context.Background(), tc.s, nil, Config{Transfer: BandwidthModel(1), Reconfig: tc.rc})
			if err != nil {
				t.Fatal(err)
			}
			if vs := schedules.VerifyTimeline(tc.s, tl); len(vs) > 0 {
				t.Errorf("timeline fails the verifier: %v", vs)
			}
			for i, w := range tc.want {
				ct := tl.Circuits[i]
				got := timing{ct.Ready, ct.PathReady, ct.ReconfigStart, ct.TransmitStart, ct.End}
				if !near(got[:], w[:]) || ct.Circuit != i {
					t.Errorf("circuit %d: [ready path reconfig transmit end] = %v, want %v", i, got, w)
				}
			}
			if !near([]float64{res.Completion, res.RNBWait}, []float64{tc.completion, tc.rnbWait}) {
				t.Errorf("completion %g, RNB wait %g; want %g, %g", res.Completion, res.RNBWait, tc.completion, tc.rnbWait)
			}
			if tc.changes >= 0 && res.StateChanges != tc.changes {
				t.Errorf("state changes %d, want %d", res.StateChanges, tc.changes)
			}
			if res.ReconfigEvents != tc.events {
				t.Errorf("reconfiguration events %d, want %d", res.ReconfigEvents, tc.events)
			}
		})
	}
}

func near(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}

func TestSwitchChangesAndBubbles(t *testing.T) {
	s := sched(schedules.Benes, schedules.Partial, 2,
		circuit(2, 0, 1, 5, 0, 0), circuit(2, 1, 0, 3, 0, 0), circuit(2, 0, 0, 4, 1, 0), circuit(2, 1, 1, 2, 1, 0))
	d, err := schedules.DemandFromRows([][]int64{{4, 5}, {3, 2}})
	if err != nil {
		t.Fatal(err)
	}
	d.CountDiagonal = true
	res, tl, err := Run(context.Background(), s, d, Config{Transfer: BandwidthModel(1), Reconfig: ParallelReconfig(10)})
	if err != nil {
		t.Fatal(err)
	}
	wantSC := []schedules.SwitchChange{
		{Stage: 0, Switch: 0, From: benes.Bar, To: benes.Cross, Start: 0, End: 10},
		{Stage: 0, Switch: 0, From: benes.Cross, To: benes.Bar, Start: 15, End: 25},
	}
	if len(tl.SwitchChanges) != len(wantSC) {
		t.Fatalf("switch changes %+v, want %+v", tl.SwitchChanges, wantSC)
	}
	for i := range wantSC {
		if tl.SwitchChanges[i] != wantSC[i] {
			t.Errorf("switch change %d = %+v, want %+v", i, tl.SwitchChanges[i], wantSC[i])
		}
	}
	// Bounds: Tx0 carries 9 bytes to 2 partners: 9 s, and 9 + 1·10 s with reconfiguration.
	if res.Bounds.Bandwidth != 9 || res.Bounds.Reconfig != 19 {
		t.Errorf("bounds %+v, want bandwidth 9, reconfig 19", res.Bounds)
	}
	if !near([]float64{res.RatioBandwidth, res.RatioReconfig}, []float64{29.0 / 9, 29.0 / 19}) {
		t.Errorf("ratios %g, %g", res.RatioBandwidth, res.RatioReconfig)
	}
	// Tx0 sends 5 then 4 (busy 9) and waits for a reconfiguration before each (10 + 10).
	// Rx1 receives 5 (0→1) and 2 (1→1): busy 7, reconfiguring 10 + 10, idle 29 − 27 = 2.
	want := map[schedules.Endpoint][3]float64{
		{Port: 0}:           {9, 20, 0},
		{Port: 1}:           {5, 20, 4},
		{Port: 0, Rx: true}: {7, 20, 2},
		{Port: 1, Rx: true}: {7, 20, 2},
	}
	if len(res.Endpoints) != 4 {
		t.Fatalf("%d endpoints, want 4", len(res.Endpoints))
	}
	for _, e := range res.Endpoints {
		w := want[e.Endpoint()]
		if !near([]float64{e.Busy, e.Reconfiguring, e.Idle}, w[:]) {
			t.Errorf("%v: busy/reconfiguring/idle %g/%g/%g, want %v", e.Endpoint(), e.Busy, e.Reconfiguring, e.Idle, w)
		}
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	good := sched(schedules.Benes, schedules.Partial, 2, circuit(2, 0, 1, 5, 0, 0))
	badPath := sched(schedules.Benes, schedules.Partial, 4, circuit(4, 0, 1, 5, 0, 0))
	hops := badPath.Circuits[0].Path.Traversals()
	hops[1].Switch = 1
	badPath.Circuits[0].Path = benes.PathOf(hops)
	xbarPath := sched(schedules.Crossbar, schedules.Partial, 2, circuit(2, 0, 1, 5, 0, 0))
	clash := sched(schedules.Benes, schedules.Barrier, 2, circuit(2, 0, 1, 5, 0, 0), circuit(2, 1, 1, 5, 0, 0))
	d3 := schedules.NewDemand(3)
	cfg := Config{Transfer: BandwidthModel(1), Reconfig: ParallelReconfig(1)}
	tests := []struct {
		name string
		s    *schedules.Schedule
		d    *schedules.Demand
		cfg  Config
		want string
	}{
		{"path off the wiring", badPath, nil, cfg, "circuit 0"},
		{"path on a crossbar", xbarPath, nil, cfg, "crossbar circuit has no path"},
		{"two states in one round", clash, nil, cfg, "needed both bar and cross"},
		{"demand size", good, d3, cfg, "demand has 3 ports"},
		{"no models", good, nil, Config{}, "needs both"},
		{"negative delay", good, nil, Config{Transfer: BandwidthModel(1), Reconfig: ParallelReconfig(-1)}, "not a non-negative time"},
		{"zero bandwidth", good, nil, Config{Transfer: BandwidthModel(0), Reconfig: ParallelReconfig(1)}, "not positive"},
		// The walk takes a partial-mode circuit's start as the latest end of its waits: a model
		// whose command ends before it is requested, or starts before, would make that wrong.
		{"command ends before its request", good, nil, Config{Transfer: BandwidthModel(1), Reconfig: brokenReconfig{start: 0, end: -1}}, "it must start at or after its request"},
		{"command starts before its request", good, nil, Config{Transfer: BandwidthModel(1), Reconfig: brokenReconfig{start: -1, end: 1}}, "starts at -1 s and ends at 1 s"},
		{"command ends after its start but never", good, nil, Config{Transfer: BandwidthModel(1), Reconfig: brokenReconfig{start: 0, end: math.Inf(1)}}, "in finite time"},
		{"command ends before its start", good, nil, Config{Transfer: BandwidthModel(1), Reconfig: brokenReconfig{start: 2, end: 1}}, "model broken: a command of 1 changes requested at 0 s"},
		{"command at NaN", good, nil, Config{Transfer: BandwidthModel(1), Reconfig: brokenReconfig{start: math.NaN(), end: 1}}, "starts at NaN s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Run(context.Background(), tc.s, tc.d, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// brokenReconfig is a reconfiguration model whose every command takes the given span, offset from
// its request, whatever that makes of it.
type brokenReconfig struct{ start, end float64 }

func (m brokenReconfig) Name() string                  { return "broken" }
func (m brokenReconfig) Nominal() float64              { return 0 }
func (m brokenReconfig) NewReconfigurer() Reconfigurer { return m }
func (m brokenReconfig) Command(t float64, _ int) (float64, float64) {
	return t + m.start, t + m.end
}

func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ParallelReconfig(1e-6)}
	big := randomSchedule(rand.New(rand.NewPCG(3, 3)), 64, 64, schedules.Benes, schedules.Partial, 1)
	small := randomSchedule(rand.New(rand.NewPCG(3, 3)), 4, 3, schedules.Benes, schedules.Barrier, 1)
	for _, s := range []*schedules.Schedule{big, small} {
		if _, _, err := Run(ctx, s, nil, cfg); !errors.Is(err, context.Canceled) {
			t.Errorf("%s schedule of %d circuits: error %v, want context.Canceled", s.Mode, len(s.Circuits), err)
		}
	}
}

// Runs share pooled scratch memory; concurrent runs (a sweep uses every core) must not see each
// other's.
func TestConcurrentRunsAgree(t *testing.T) {
	var ss []*schedules.Schedule
	for i := range 4 {
		ss = append(ss, randomSchedule(rand.New(rand.NewPCG(uint64(i), 9)), 8<<(i%2), 6, schedules.Benes, schedules.Partial, 0.8))
	}
	cfg := Config{Transfer: BandwidthModel(1e11), Reconfig: ControllerReconfig(1e-7, 1e-6)}
	want := make([]*schedules.Timeline, len(ss))
	for i, s := range ss {
		_, tl, err := Run(context.Background(), s, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = tl
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for k := range 20 {
				i := (g + k) % len(ss)
				_, tl, err := Run(context.Background(), ss[i], nil, cfg)
				if err == nil && !reflect.DeepEqual(tl, want[i]) {
					err = fmt.Errorf("goroutine %d, run %d: schedule %d gave a different timeline", g, k, i)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
