package schedules

import (
	"math"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// The verifier must give exactly the violations it gave before it was rewritten for linear memory
// (the oracle, verify_oracle_test.go): same kinds, circuits and messages, in the same order, for
// valid and invalid schedules and timelines alike. The generators below make schedules that are
// mostly almost right (real routed paths, groups from a small sparse set, so that rounds collide
// and pairs repeat) and then break them in every way the checks look for; kindsSeen asserts that
// every violation kind, and valid inputs, came up.

// oddGroups are the group numbers drawn: sparse, huge, negative.
var oddGroups = []int{0, 1, 2, 3, 7, 1000, MaxGroup, -1, -1 << 40}

// oddPorts are endpoints out of every range (besides ports, n and n−1, drawn per schedule).
var oddPorts = []int{-1, -1 << 40, 1 << 40}

// genSchedule draws a schedule: Beneš or crossbar, partial or barrier, on up to 16 ports with
// up to 40 circuits, rounds interleaved or in order, and every kind of broken field.
func genSchedule(t *rapid.T) *Schedule {
	fabric := rapid.SampledFrom([]FabricKind{Benes, Benes, Benes, Crossbar}).Draw(t, "fabric")
	mode := rapid.SampledFrom([]Mode{Partial, Barrier}).Draw(t, "mode")
	n := rapid.SampledFrom([]int{2, 4, 8, 16}).Draw(t, "n")
	ports := rapid.IntRange(1, n).Draw(t, "ports")
	if rapid.Bool().Draw(t, "full") {
		ports = n
	}
	s := &Schedule{Version: FormatVersion, Algorithm: "rapid", N: n, Ports: ports, Fabric: fabric, Mode: mode,
		Params: Params{BandwidthBytesPerSecond: 1, ReconfigSeconds: 1}}
	f, _ := benes.New(n)
	groups := rapid.SliceOfNDistinct(rapid.SampledFrom(oddGroups), 1, 4, rapid.ID[int]).Draw(t, "groups")
	// Pairs come from a few per schedule, so that groups repeat them and rounds share endpoints.
	pairs := rapid.IntRange(1, 6).Draw(t, "pairs")
	type pair struct{ src, dst int }
	var ps []pair
	for range pairs {
		ps = append(ps, pair{rapid.IntRange(0, ports-1).Draw(t, "src"), rapid.IntRange(0, ports-1).Draw(t, "dst")})
	}
	circuits := rapid.IntRange(0, 40).Draw(t, "circuits")
	for range circuits {
		p := rapid.SampledFrom(ps).Draw(t, "pair")
		c := Circuit{Src: p.src, Dst: p.dst, Bytes: rapid.Int64Range(1, 1000).Draw(t, "bytes"),
			Group: rapid.SampledFrom(groups).Draw(t, "group")}
		if fabric == Benes {
			c.Path = f.NewPath(c.Src, c.Dst, rapid.Uint32Range(0, uint32(n/2-1)).Draw(t, "choices"))
		}
		breakCircuit(t, s, &c)
		s.Circuits = append(s.Circuits, c)
	}
	if rapid.Bool().Draw(t, "in group order") {
		// Stable, so that circuits of one group keep their order: the verifier's fast path.
		for i := 1; i < len(s.Circuits); i++ {
			for j := i; j > 0 && s.Circuits[j].Group < s.Circuits[j-1].Group; j-- {
				s.Circuits[j], s.Circuits[j-1] = s.Circuits[j-1], s.Circuits[j]
			}
		}
	}
	for range rapid.IntRange(0, 5).Draw(t, "rounds") {
		s.Rounds = append(s.Rounds, Round{Group: rapid.SampledFrom(oddGroups).Draw(t, "round group"),
			PlannedDuration: rapid.SampledFrom([]float64{0, 1, 2.5}).Draw(t, "duration")})
	}
	switch rapid.IntRange(0, 19).Draw(t, "header") {
	case 0:
		s.Version = 2
	case 1:
		s.N = 6
	case 2:
		s.Ports = n + 1
	case 3:
		s.Rounds = append(s.Rounds, Round{Group: 0, PlannedDuration: -1})
	case 4:
		s.Fabric = "torus"
	}
	return s
}

// breakCircuit breaks one circuit now and then: endpoints out of range, bytes zero or negative,
// planned times reversed, and paths with a wrong wire, a lane or stage off the fabric, a hop
// repeated or missing, or a path where a crossbar has none.
func breakCircuit(t *rapid.T, s *Schedule, c *Circuit) {
	switch rapid.IntRange(0, 24).Draw(t, "break") {
	case 0:
		c.Src = rapid.SampledFrom(append([]int{s.Ports, s.N}, oddPorts...)).Draw(t, "bad src")
	case 1:
		c.Dst = rapid.SampledFrom(append([]int{s.Ports, s.N}, oddPorts...)).Draw(t, "bad dst")
	case 2:
		c.Bytes = rapid.SampledFrom([]int64{0, -1, -5}).Draw(t, "bad bytes")
	case 3:
		a, b := 2.0, 1.0
		c.PlannedStart, c.PlannedEnd = &a, &b
	case 4:
		a, b := 1.0, 2.0
		c.PlannedStart, c.PlannedEnd = &a, &b
	case 5, 6, 7, 8, 9:
		if c.Path.Len() == 0 {
			f, err := benes.New(s.N)
			if err != nil {
				return
			}
			c.Path = f.NewPath(0, 1, 0) // a crossbar circuit with a path
			return
		}
		hops := c.Path.Traversals()
		defer func() { c.Path = benes.PathOf(hops) }()
		h := rapid.IntRange(0, len(hops)-1).Draw(t, "hop")
		tr := &hops[h]
		switch rapid.IntRange(0, 7).Draw(t, "path break") {
		case 0:
			tr.Out ^= 1
		case 1:
			tr.In ^= 1
		case 2:
			tr.Switch ^= 1
		case 3: // off the fabric, to a switch that others may be sent to as well
			tr.Stage, tr.Switch = rapid.SampledFrom([]int{-1, 99, len(hops)}).Draw(t, "bad stage"), 0
			tr.In = rapid.IntRange(0, 1).Draw(t, "in")
		case 4:
			tr.Out = rapid.SampledFrom([]int{2, -1}).Draw(t, "bad lane")
		case 5:
			tr.Switch = rapid.SampledFrom([]int{-1, s.N, 1 << 40}).Draw(t, "bad switch")
		case 6:
			hops = append(hops, *tr)
		default:
			hops = hops[:h]
		}
	}
}

// genDemand draws the demand a schedule is checked against: none, its own bytes, or its bytes
// with one entry off (or the wrong size, or with the diagonal counted).
func genDemand(t *rapid.T, s *Schedule) *Demand {
	if rapid.IntRange(0, 3).Draw(t, "no demand") == 0 || s.Ports < 1 || s.Ports > 16 {
		return nil
	}
	n := s.Ports
	if rapid.IntRange(0, 9).Draw(t, "demand size") == 0 {
		n++
	}
	d := NewDemand(n)
	d.CountDiagonal = rapid.Bool().Draw(t, "diagonal")
	for _, c := range s.Circuits {
		if c.Src >= 0 && c.Src < n && c.Dst >= 0 && c.Dst < n {
			d.Bytes[c.Src][c.Dst] += c.Bytes
		}
	}
	if rapid.Bool().Draw(t, "demand off") {
		i, j := rapid.IntRange(0, n-1).Draw(t, "i"), rapid.IntRange(0, n-1).Draw(t, "j")
		d.Bytes[i][j] += rapid.SampledFrom([]int64{-1, 1, 1000}).Draw(t, "delta")
	}
	return d
}

// kindsSeen counts the violation kinds a property test met, and the inputs with none.
type kindsSeen map[ViolationKind]int

func (k kindsSeen) add(vs []Violation) {
	if len(vs) == 0 {
		k["valid"]++
	}
	for _, v := range vs {
		k[v.Kind]++
	}
}

func (k kindsSeen) require(t *testing.T, want ...ViolationKind) {
	t.Helper()
	t.Logf("inputs and violations by kind: %v", map[ViolationKind]int(k))
	for _, w := range append(want, "valid") {
		if k[w] == 0 {
			t.Errorf("the generator never produced %q: the property does not cover it", w)
		}
	}
}

func TestVerifyMatchesOracle(t *testing.T) {
	seen := kindsSeen{}
	rapid.Check(t, func(t *rapid.T) {
		s := genSchedule(t)
		d := genDemand(t, s)
		want := oracleVerify(s, d)
		got := Verify(s, d)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Verify differs from the oracle\n got: %#v\nwant: %#v", got, want)
		}
		// The instance for more than 2^31 − 1 circuits, which no test can build.
		if got := verifyOf[int](s, d); !reflect.DeepEqual(got, want) {
			t.Fatalf("verifyOf[int] differs from the oracle\n got: %#v\nwant: %#v", got, want)
		}
		if got := CheckStatic(s); !reflect.DeepEqual(got, oracleCheckStatic(s)) {
			t.Fatalf("CheckStatic differs from the oracle\n got: %#v\nwant: %#v", got, oracleCheckStatic(s))
		}
		seen.add(want)
	})
	seen.require(t, Header, BadEndpoint, BadPath, BytesMismatch, RoundEndpoint, RoundLane, RoundSwitchState, Duplicate)
}

// genTimeline draws an execution of s: the circuits one after another in a random order (so
// that some timelines are valid), each switch changed just before a circuit that needs it, at
// times where the overlap tolerance matters, then broken in every way VerifyTimeline checks.
func genTimeline(t *rapid.T, s *Schedule) *Timeline {
	tl := &Timeline{}
	base := rapid.SampledFrom([]float64{0, 1, 1e4, 11258.999068446241}).Draw(t, "base")
	now := base
	alpha := rapid.SampledFrom([]float64{0, 1, 1e-11}).Draw(t, "alpha")
	state := map[[2]int]benes.State{}
	order := rapid.Permutation(iota[int](len(s.Circuits))).Draw(t, "order")
	for _, i := range order {
		c := &s.Circuits[i]
		changed := false
		if s.Fabric == Benes {
			for _, tr := range c.Path.All() {
				k := [2]int{tr.Stage, tr.Switch}
				if state[k] != tr.State() {
					tl.SwitchChanges = append(tl.SwitchChanges, SwitchChange{Stage: int32(tr.Stage), Switch: int32(tr.Switch), From: state[k], To: tr.State(), Start: now, End: now + alpha})
					state[k] = tr.State()
					changed = true
				}
			}
		}
		ready := now
		if changed {
			now += alpha
		}
		dur := rapid.SampledFrom([]float64{0, 1, 2, 1e-11}).Draw(t, "duration")
		start := now
		switch rapid.IntRange(0, 9).Draw(t, "squeeze") {
		case 0: // start exactly at the overlap tolerance of the previous end: not an overlap
			start = now - overlapTolerance(now)
		case 1: // one ulp earlier: an overlap
			start = math.Nextafter(now-overlapTolerance(now), math.Inf(-1))
		case 2: // well inside the previous transfer
			start = now - 0.5
		}
		start = max(start, 0)
		tl.Circuits = append(tl.Circuits, CircuitTiming{Circuit: i, Ready: min(ready, start), PathReady: min(ready, start), ReconfigStart: min(ready, start), TransmitStart: start, End: start + dur})
		now = max(now, start+dur)
	}
	for range rapid.IntRange(0, 3).Draw(t, "timeline breaks") {
		breakTimeline(t, s, tl)
	}
	return tl
}

// breakTimeline breaks one thing about a timeline.
func breakTimeline(t *rapid.T, s *Schedule, tl *Timeline) {
	m := rapid.IntRange(0, 16).Draw(t, "timeline break")
	if m == 16 { // a change on a switch no circuit crosses, or on a crossbar
		tl.SwitchChanges = append(tl.SwitchChanges, SwitchChange{Stage: 0, Switch: int32(max(s.N/2-1, 0)), From: benes.Bar, To: benes.Cross,
			Start: rapid.SampledFrom([]float64{0, 1, 2}).Draw(t, "extra start"), End: 3})
		return
	}
	if m < 7 && len(tl.Circuits) == 0 || m >= 7 && len(tl.SwitchChanges) == 0 {
		return
	}
	var ct *CircuitTiming
	var ch *SwitchChange
	if m < 7 {
		ct = &tl.Circuits[rapid.IntRange(0, len(tl.Circuits)-1).Draw(t, "entry")]
	} else {
		ch = &tl.SwitchChanges[rapid.IntRange(0, len(tl.SwitchChanges)-1).Draw(t, "change")]
	}
	switch m {
	case 0: // missing
		k := rapid.IntRange(0, len(tl.Circuits)-1).Draw(t, "drop")
		tl.Circuits = append(tl.Circuits[:k], tl.Circuits[k+1:]...)
	case 1: // twice
		tl.Circuits = append(tl.Circuits, *ct)
	case 2: // names no circuit
		ct.Circuit = rapid.SampledFrom([]int{-1, len(s.Circuits)}).Draw(t, "bad circuit")
	case 3: // times out of order or not finite
		switch rapid.IntRange(0, 3).Draw(t, "bad time") {
		case 0:
			ct.End = ct.TransmitStart - 1
		case 1:
			ct.Ready = -1
		case 2:
			ct.PathReady = math.NaN()
		default:
			ct.End = math.Inf(1)
		}
	case 4, 5, 6: // moved onto another circuit
		o := tl.Circuits[rapid.IntRange(0, len(tl.Circuits)-1).Draw(t, "onto")]
		d := ct.End - ct.TransmitStart
		ct.TransmitStart = o.TransmitStart + rapid.SampledFrom([]float64{0, 0.5, -0.5}).Draw(t, "offset")
		ct.TransmitStart = max(ct.TransmitStart, 0)
		ct.Ready, ct.PathReady, ct.ReconfigStart = ct.TransmitStart, ct.TransmitStart, ct.TransmitStart
		ct.End = ct.TransmitStart + d
	case 7: // lost
		k := rapid.IntRange(0, len(tl.SwitchChanges)-1).Draw(t, "drop change")
		tl.SwitchChanges = append(tl.SwitchChanges[:k], tl.SwitchChanges[k+1:]...)
	case 8: // repeated
		tl.SwitchChanges = append(tl.SwitchChanges, *ch)
	case 9: // from or to the wrong state
		ch.From ^= 1
	case 10:
		ch.To ^= 1
	case 11: // moved under live circuits, or to end before it starts
		ch.Start += rapid.SampledFrom([]float64{0.5, 1, -0.5, 3}).Draw(t, "shift start")
		ch.End += rapid.SampledFrom([]float64{0.5, 1, -2, 0}).Draw(t, "shift end")
	case 12: // times that are no times (only an in-memory timeline has them)
		*rapid.SampledFrom([]*float64{&ch.Start, &ch.End}).Draw(t, "which") = rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), -1}).Draw(t, "odd")
	case 13: // off the fabric
		ch.Stage = rapid.SampledFrom([]int32{-1, 99}).Draw(t, "bad stage")
	case 14: // the list out of time order, ties included
		perm := rapid.Permutation(iota[int](len(tl.SwitchChanges))).Draw(t, "shuffle")
		out := make([]SwitchChange, len(perm))
		for i, p := range perm {
			out[i] = tl.SwitchChanges[p]
		}
		tl.SwitchChanges = out
	default: // a second change at the same time on the same switch
		tl.SwitchChanges = append(tl.SwitchChanges, SwitchChange{Stage: ch.Stage, Switch: ch.Switch, From: ch.To, To: ch.From, Start: ch.Start, End: ch.End})
	}
}

func TestVerifyTimelineMatchesOracle(t *testing.T) {
	seen := kindsSeen{}
	rapid.Check(t, func(t *rapid.T) {
		s := genSchedule(t)
		tl := genTimeline(t, s)
		if rapid.IntRange(0, 9).Draw(t, "schedule changed after the run") == 0 && len(s.Circuits) > 0 {
			breakCircuit(t, s, &s.Circuits[rapid.IntRange(0, len(s.Circuits)-1).Draw(t, "changed circuit")])
		}
		want := oracleVerifyTimeline(s, tl)
		got := VerifyTimeline(s, tl)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("VerifyTimeline differs from the oracle\n got: %#v\nwant: %#v", got, want)
		}
		if got := verifyTimelineOf[int](s, timelineView{tl: tl}); !reflect.DeepEqual(got, want) {
			t.Fatalf("verifyTimelineOf[int] differs from the oracle\n got: %#v\nwant: %#v", got, want)
		}
		seen.add(want)
	})
	seen.require(t, TimelineShape, EndpointOverlap, LaneOverlap, SwitchUnderLiveCircuit)
}

// Times no reader accepts but a timeline built in memory may hold (NaN or infinite ends and
// starts of switch changes) make the running maximum of a switch's ends non-monotone, where a
// binary search and a forward cursor disagree; the verifier must answer as the oracle does. Each
// case is one switch (n = 2) crossed by circuits at several times.
func TestVerifyTimelineOddChangeTimesMatchOracle(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	s := &Schedule{Version: FormatVersion, Algorithm: "hand", N: 2, Ports: 2, Fabric: Benes, Mode: Partial,
		Params: Params{BandwidthBytesPerSecond: 1}}
	tl0 := &Timeline{}
	for i, t0 := range []float64{0.5, 1.5, 2.5, 3.5, 5, 9} {
		src := i % 2
		s.Circuits = append(s.Circuits, Circuit{Src: src, Dst: 1 - src, Bytes: 1, Group: i,
			Path: benes.PathOf([]benes.Traversal{{Stage: 0, Switch: 0, In: src, Out: 1 - src}})})
		tl0.Circuits = append(tl0.Circuits, CircuitTiming{Circuit: i, Ready: t0, PathReady: t0, ReconfigStart: t0, TransmitStart: t0, End: t0 + 0.1})
	}
	ch := func(from, to benes.State, start, end float64) SwitchChange {
		return SwitchChange{Stage: 0, Switch: 0, From: from, To: to, Start: start, End: end}
	}
	bar, cross := benes.Bar, benes.Cross
	for _, c := range []struct {
		name    string
		changes []SwitchChange
	}{
		{"NaN end in the middle", []SwitchChange{ch(bar, cross, 0, 1), ch(cross, bar, 1, 2), ch(bar, cross, 2, nan), ch(cross, bar, 3, 4)}},
		{"NaN end first", []SwitchChange{ch(bar, cross, 0, nan), ch(cross, bar, 1, 2), ch(bar, cross, 2, 3)}},
		{"NaN start", []SwitchChange{ch(bar, cross, 0, 1), ch(cross, bar, nan, 2), ch(bar, cross, 2, 3), ch(cross, bar, 1, 1.2)}},
		{"infinite end", []SwitchChange{ch(bar, cross, 0, 1), ch(cross, bar, 1, inf), ch(bar, cross, 2, 3)}},
		{"out of order, equal starts", []SwitchChange{ch(cross, bar, 3, 4), ch(bar, cross, 0, 1), ch(cross, bar, 3, 3.2), ch(bar, cross, 0, 0.2)}},
		{"end before start", []SwitchChange{ch(bar, cross, 1, 0), ch(cross, bar, 2, 1.9), ch(bar, cross, 3, 3.1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl := &Timeline{Circuits: tl0.Circuits, SwitchChanges: c.changes}
			want := oracleVerifyTimeline(s, tl)
			if got := VerifyTimeline(s, tl); !reflect.DeepEqual(got, want) {
				t.Fatalf("VerifyTimeline differs from the oracle\n got: %v\nwant: %v", ViolationsError(got), ViolationsError(want))
			}
			t.Logf("%d violations", len(want))
		})
	}
}
