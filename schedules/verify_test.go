package schedules

import (
	"strings"
	"testing"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// fourPort is a 4×4 demand: 0→1 100 B, 1→0 50 B, 2→3 30 B, 3→2 20 B, 0→2 10 B.
func fourPort(t *testing.T) *Demand {
	t.Helper()
	d, err := DemandFromRows([][]int64{
		{0, 100, 10, 0},
		{50, 0, 0, 0},
		{0, 0, 0, 30},
		{0, 0, 20, 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// validFourPort is a hand-built barrier schedule for fourPort: round 0 is the permutation
// 0→1, 1→0, 2→3, 3→2 (all through the upper middle switch where possible), round 1 is 0→2.
func validFourPort(t *testing.T) *Schedule {
	t.Helper()
	f, _ := benes.New(4)
	// At n = 4 a path has one choice bit (level 0: upper 0 / lower 1). The input switch 0 carries
	// ports 0 and 1, so they must take opposite children; likewise for outputs.
	c := func(src, dst int, bytes int64, group int, choice uint32) Circuit {
		return Circuit{Src: src, Dst: dst, Bytes: bytes, Group: group, Path: f.NewPath(src, dst, choice)}
	}
	return &Schedule{
		Version: FormatVersion, Algorithm: "hand", N: 4, Ports: 4, Fabric: Benes, Mode: Barrier,
		Params: Params{BandwidthBytesPerSecond: 1, ReconfigSeconds: 1},
		Circuits: []Circuit{
			c(0, 1, 100, 0, 0), c(1, 0, 50, 0, 1), c(2, 3, 30, 0, 0), c(3, 2, 20, 0, 1),
			c(0, 2, 10, 1, 0),
		},
	}
}

func kinds(vs []Violation) map[ViolationKind]int {
	m := map[ViolationKind]int{}
	for _, v := range vs {
		m[v.Kind]++
	}
	return m
}

func TestVerifyAcceptsHandBuiltSchedule(t *testing.T) {
	if vs := Verify(validFourPort(t), fourPort(t)); len(vs) != 0 {
		t.Fatalf("valid schedule rejected: %v", ViolationsError(vs))
	}
}

// Each deliberately broken schedule must be caught with the right kind of violation.
func TestVerifyCatchesEachViolation(t *testing.T) {
	cases := []struct {
		name   string
		breakS func(s *Schedule)
		want   ViolationKind
		text   string
	}{
		{"version", func(s *Schedule) { s.Version = 2 }, Header, "version"},
		{"fabric", func(s *Schedule) { s.Fabric = "torus" }, Header, "fabric"},
		{"mode", func(s *Schedule) { s.Mode = "eager" }, Header, "mode"},
		{"n not power of two", func(s *Schedule) { s.N = 6 }, Header, "power of two"},
		{"port out of range", func(s *Schedule) { s.Circuits[0].Dst = 4 }, BadEndpoint, "real ports"},
		{"zero-byte circuit", func(s *Schedule) {
			s.Circuits = append(s.Circuits, Circuit{Src: 1, Dst: 2, Group: 1, Path: s.Circuits[4].Path})
		}, BadEndpoint, "carries 0 bytes"},
		{"path to the wrong output", func(s *Schedule) { s.Circuits[4].Dst = 3; s.Circuits[4].Bytes = 10 }, BadPath, "ends at output port 2"},
		{"path with a broken wire", func(s *Schedule) {
			s.Circuits[0].Path = editHop(s.Circuits[0].Path, 1, func(t *benes.Traversal) { t.Switch ^= 1 })
		}, BadPath, "wiring leads"},
		{"path too short", func(s *Schedule) { s.Circuits[0].Path = benes.PathOf(s.Circuits[0].Path.Traversals()[:2]) }, BadPath, "2 traversals"},
		{"crossbar with a path", func(s *Schedule) { s.Fabric = Crossbar }, BadPath, "crossbar"},
		{"byte lost", func(s *Schedule) { s.Circuits[1].Bytes = 49 }, BytesMismatch, "1→0: schedule carries 49 bytes, demand is 50"},
		{"byte invented", func(s *Schedule) { s.Circuits[2].Bytes = 31 }, BytesMismatch, "2→3"},
		{"transmitter twice in a round", func(s *Schedule) { s.Circuits[4].Group = 0 }, RoundEndpoint, "transmitter 0 twice"},
		{"lane twice in a round", func(s *Schedule) {
			// Send 1→0 through the upper child too: input switch 0's lane 0 is then used twice.
			f, _ := benes.New(4)
			s.Circuits[1].Path = f.NewPath(1, 0, 0)
		}, RoundLane, "twice"},
		{"negative round duration", func(s *Schedule) { s.Rounds = []Round{{Group: 0, PlannedDuration: -1}} }, Header, "planned_duration"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := validFourPort(t)
			c.breakS(s)
			vs := Verify(s, fourPort(t))
			if kinds(vs)[c.want] == 0 {
				t.Fatalf("want a %s violation, got %v", c.want, ViolationsError(vs))
			}
			if !strings.Contains(ViolationsError(vs).Error(), c.text) {
				t.Errorf("message %q lacks %q", ViolationsError(vs), c.text)
			}
		})
	}
}

func TestVerifyRoundSwitchState(t *testing.T) {
	// Two circuits that share no lane but need the middle switch in two states cannot exist in a
	// Beneš network (each switch has two lanes, and two traversals through one switch on distinct
	// lanes always agree on the state); so construct the disagreement on one switch by hand.
	s := validFourPort(t)
	s.Circuits[2].Path = editHop(s.Circuits[2].Path, 1, func(t *benes.Traversal) { *t = benes.Traversal{Stage: 1, Switch: 0, In: 1, Out: 0} })
	vs := Verify(s, fourPort(t))
	if kinds(vs)[RoundSwitchState] == 0 {
		t.Fatalf("want a %s violation, got %v", RoundSwitchState, ViolationsError(vs))
	}
}

// timedFourPort is validFourPort run by hand as barrier rounds with bandwidth 1 B/s and α_r = 1 s.
//
// Round 0 (0→1, 2→3 upper; 1→0, 3→2 lower) needs both output switches in Cross (e.g. 0→1 enters
// output switch 0 on lane 0 and leaves on lane 1) and everything else in Bar, so it reconfigures
// over [0, 1) and transmits from 1; it ends at 101. Round 1 (0→2 upper) needs middle switch (1,0)
// Cross (in lane 0, out lane 1) and output switch (2,1) back in Bar: it reconfigures over
// [101, 102) and transmits 10 B over [102, 112).
func timedFourPort(t *testing.T) (*Schedule, *Timeline) {
	s := validFourPort(t)
	tl := &Timeline{}
	for i := 0; i < 4; i++ {
		end := 1 + float64(s.Circuits[i].Bytes)
		tl.Circuits = append(tl.Circuits, CircuitTiming{Circuit: i, PathReady: 1, TransmitStart: 1, End: end})
	}
	tl.SwitchChanges = []SwitchChange{
		{Stage: 2, Switch: 0, From: benes.Bar, To: benes.Cross, Start: 0, End: 1},
		{Stage: 2, Switch: 1, From: benes.Bar, To: benes.Cross, Start: 0, End: 1},
		{Stage: 1, Switch: 0, From: benes.Bar, To: benes.Cross, Start: 101, End: 102},
		{Stage: 2, Switch: 1, From: benes.Cross, To: benes.Bar, Start: 101, End: 102},
	}
	tl.Circuits = append(tl.Circuits, CircuitTiming{Circuit: 4, Ready: 101, PathReady: 102, ReconfigStart: 101, TransmitStart: 102, End: 112})
	return s, tl
}

func TestVerifyTimelineAcceptsHandTimeline(t *testing.T) {
	s, tl := timedFourPort(t)
	if s.Circuits[4].Path.At(1).State() != benes.Cross {
		t.Fatalf("hand-worked premise wrong: 0→2 upper needs the middle switch %s", s.Circuits[4].Path.At(1).State())
	}
	if vs := VerifyTimeline(s, tl); len(vs) != 0 {
		t.Fatalf("valid timeline rejected: %v", ViolationsError(vs))
	}
}

func TestVerifyTimelineCatchesEachViolation(t *testing.T) {
	cases := []struct {
		name string
		brk  func(s *Schedule, tl *Timeline)
		want ViolationKind
		text string
	}{
		{"missing circuit", func(_ *Schedule, tl *Timeline) { tl.Circuits = tl.Circuits[:4] }, TimelineShape, "missing"},
		{"duplicate circuit", func(_ *Schedule, tl *Timeline) { tl.Circuits = append(tl.Circuits, tl.Circuits[0]) }, TimelineShape, "twice"},
		{"end before start", func(_ *Schedule, tl *Timeline) { tl.Circuits[0].End = -1 }, TimelineShape, "out of order"},
		{"transmitter overlap", func(_ *Schedule, tl *Timeline) {
			tl.Circuits[4].TransmitStart, tl.Circuits[4].End = 99, 109
			tl.Circuits[4].PathReady, tl.Circuits[4].Ready, tl.Circuits[4].ReconfigStart = 99, 99, 99
		}, EndpointOverlap, "transmitter 0"},
		{"receiver overlap", func(s *Schedule, tl *Timeline) {
			// Move 3→2 (receiver 2) so that it is still live when 0→2 starts at 102.
			tl.Circuits[3].TransmitStart, tl.Circuits[3].End = 90, 110
		}, EndpointOverlap, "receiver 2"},
		{"switch changes under a live circuit", func(_ *Schedule, tl *Timeline) {
			tl.SwitchChanges[2].Start, tl.SwitchChanges[2].End = 50, 51 // 0→1 is live until 101
		}, SwitchUnderLiveCircuit, "while the circuit transmits"},
		{"switch in the wrong state", func(_ *Schedule, tl *Timeline) { tl.SwitchChanges = nil }, SwitchUnderLiveCircuit, "needs cross"},
		{"change from the wrong state", func(_ *Schedule, tl *Timeline) { tl.SwitchChanges[0].From = benes.Cross }, TimelineShape, "does not follow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, tl := timedFourPort(t)
			c.brk(s, tl)
			vs := VerifyTimeline(s, tl)
			if kinds(vs)[c.want] == 0 {
				t.Fatalf("want a %s violation, got %v", c.want, ViolationsError(vs))
			}
			if !strings.Contains(ViolationsError(vs).Error(), c.text) {
				t.Errorf("message %q lacks %q", ViolationsError(vs), c.text)
			}
		})
	}
}

func TestVerifyTimelineLaneOverlap(t *testing.T) {
	// Two circuits from different transmitters that share an internal lane: 0→1 and 2→3 both
	// through the upper child use middle switch (1,0), on lanes 0 and 1, so they do not share; but
	// 0→1 upper and 1→0 upper share input switch 0's out lane 0. Run them at the same time.
	f, _ := benes.New(4)
	d, _ := DemandFromRows([][]int64{{0, 10, 0, 0}, {10, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}})
	s := &Schedule{Version: 1, Algorithm: "hand", N: 4, Ports: 4, Fabric: Benes, Mode: Partial,
		Params: Params{BandwidthBytesPerSecond: 1},
		Circuits: []Circuit{
			{Src: 0, Dst: 1, Bytes: 10, Path: f.NewPath(0, 1, 0)},
			{Src: 1, Dst: 0, Bytes: 10, Path: f.NewPath(1, 0, 0)},
		}}
	if vs := Verify(s, d); len(vs) != 0 {
		t.Fatalf("partial-mode schedule should pass the static checks: %v", ViolationsError(vs))
	}
	// Both need input switch 0: 0→1 enters lane 0 leaves lane 0 (Bar); 1→0 enters lane 1 leaves
	// lane 0 (Cross), so run them back to back with a change between.
	tl := &Timeline{
		Circuits: []CircuitTiming{
			{Circuit: 0, TransmitStart: 0, End: 10},
			{Circuit: 1, TransmitStart: 5, End: 15, Ready: 0, PathReady: 0},
		},
	}
	vs := VerifyTimeline(s, tl)
	if kinds(vs)[LaneOverlap] == 0 {
		t.Fatalf("want a lane overlap, got %v", ViolationsError(vs))
	}
}

// editHop is p with traversal i changed by fn: how a test breaks a path (a Path is immutable).
func editHop(p benes.Path, i int, fn func(*benes.Traversal)) benes.Path {
	hops := p.Traversals()
	fn(&hops[i])
	return benes.PathOf(hops)
}
