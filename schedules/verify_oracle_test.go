package schedules

// The verifier as it was before it was rewritten for linear memory (main at 3e8e065), copied
// verbatim but for the names and for reading paths through hops (so that a change of the path
// type touches hops alone): the oracle that the property tests in verify_equiv_test.go hold the
// rewrite to, violation for violation. It keeps maps per round and interval lists per resource,
// so it is only fit for small inputs.

import (
	"fmt"
	"math"
	"sort"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// oracleVerify checks a schedule against the demand it claims to serve: every path is a physical path of
// the fabric from its src to its dst under the wiring convention; the bytes per (src, dst) add up
// exactly to the demand (every byte delivered exactly once, none invented); and, in barrier mode,
// no round uses an endpoint or a switch lane twice or a switch in two states. It returns every
// violation found: header, endpoint and path problems in circuit order, then byte mismatches by
// (src, dst), then round conflicts in circuit order. Checks of execution (overlaps in time, switches changing under
// live circuits) need a timeline: see VerifyTimeline.
func oracleVerify(s *Schedule, d *Demand) []Violation {
	var vs []Violation
	add := func(k ViolationKind, c int, format string, a ...any) {
		vs = append(vs, Violation{k, c, fmt.Sprintf(format, a...)})
	}
	if err := s.Validate(); err != nil {
		add(Header, -1, "%v", err)
		return vs
	}
	if d != nil && d.N() != s.Ports {
		add(Header, -1, "schedule has %d ports, demand has %d", s.Ports, d.N())
		return vs
	}
	fab, _ := s.BenesFabric()
	sent := map[[2]int]int64{}
	type pairInGroup struct{ src, dst, group int }
	first := map[pairInGroup]int{}
	for i, c := range s.Circuits {
		if c.Src < 0 || c.Src >= s.Ports || c.Dst < 0 || c.Dst >= s.Ports {
			add(BadEndpoint, i, "src %d, dst %d: not both real ports in [0, %d)", c.Src, c.Dst, s.Ports)
			continue
		}
		if c.Bytes <= 0 {
			add(BadEndpoint, i, "%d→%d carries %d bytes (a circuit must carry at least one)", c.Src, c.Dst, c.Bytes)
		}
		if c.Group < 0 {
			add(Header, i, "group %d is negative", c.Group)
		}
		sent[[2]int{c.Src, c.Dst}] += c.Bytes
		if s.Mode == Partial {
			// Barrier rounds report the same thing as a transmitter used twice (verifyRounds).
			k := pairInGroup{c.Src, c.Dst, c.Group}
			if j, dup := first[k]; dup {
				add(Duplicate, i, "%d→%d repeats circuit %d in group %d (a planning group is a matching)", c.Src, c.Dst, j, c.Group)
			} else {
				first[k] = i
			}
		}
		switch {
		case fab == nil && len(hops(&c)) != 0:
			add(BadPath, i, "a crossbar circuit has no internal path, got %d traversals", len(hops(&c)))
		case fab != nil:
			if err := fab.CheckPath(c.Src, c.Dst, c.Path); err != nil {
				add(BadPath, i, "%d→%d: %v", c.Src, c.Dst, err)
			}
		}
		if c.PlannedStart != nil && c.PlannedEnd != nil && !(*c.PlannedEnd >= *c.PlannedStart) {
			add(Header, i, "planned end %g is before planned start %g", *c.PlannedEnd, *c.PlannedStart)
		}
	}
	if d != nil {
		for i := 0; i < d.N(); i++ {
			for j := 0; j < d.N(); j++ {
				want, got := d.At(i, j), sent[[2]int{i, j}]
				if want != got {
					add(BytesMismatch, -1, "%d→%d: schedule carries %d bytes, demand is %d", i, j, got, want)
				}
			}
		}
	}
	if s.Mode == Barrier {
		vs = append(vs, oracleVerifyRounds(s, fab)...)
	}
	return vs
}

// oracleCheckStatic is Verify without a demand: every check that needs only the schedule file (header
// and limits, endpoints, non-empty circuits, planned end after start, duplicates, physical paths,
// barrier round conflicts). Every command that executes a schedule runs it, so that nothing
// verify would reject on the file alone is executed.
func oracleCheckStatic(s *Schedule) []Violation { return oracleVerify(s, nil) }

// oracleVerifyRounds checks that each barrier round is a set of circuits that can be live together.
func oracleVerifyRounds(s *Schedule, fab *benes.Fabric) []Violation {
	var vs []Violation
	type laneKey struct{ stage, sw, lane int }
	type swKey struct{ stage, sw int }
	type roundUse struct {
		tx, rx  map[int]int
		in, out map[laneKey]int
		state   map[swKey]benes.State
		stateBy map[swKey]int
	}
	rounds := map[int]*roundUse{}
	seenRound := map[int]bool{}
	for _, r := range s.Rounds {
		if seenRound[r.Group] {
			vs = append(vs, Violation{Header, -1, fmt.Sprintf("round %d is listed twice in rounds", r.Group)})
		}
		seenRound[r.Group] = true
		if !(r.PlannedDuration >= 0) || math.IsInf(r.PlannedDuration, 0) {
			vs = append(vs, Violation{Header, -1, fmt.Sprintf("round %d has planned duration %g", r.Group, r.PlannedDuration)})
		}
	}
	for i, c := range s.Circuits {
		ru := rounds[c.Group]
		if ru == nil {
			ru = &roundUse{map[int]int{}, map[int]int{}, map[laneKey]int{}, map[laneKey]int{}, map[swKey]benes.State{}, map[swKey]int{}}
			rounds[c.Group] = ru
		}
		if j, dup := ru.tx[c.Src]; dup {
			vs = append(vs, Violation{RoundEndpoint, i, fmt.Sprintf("round %d uses transmitter %d twice (also circuit %d)", c.Group, c.Src, j)})
		}
		if j, dup := ru.rx[c.Dst]; dup {
			vs = append(vs, Violation{RoundEndpoint, i, fmt.Sprintf("round %d uses receiver %d twice (also circuit %d)", c.Group, c.Dst, j)})
		}
		ru.tx[c.Src], ru.rx[c.Dst] = i, i
		if fab == nil {
			continue
		}
		for _, t := range hops(&c) {
			in, out := laneKey{t.Stage, t.Switch, t.In}, laneKey{t.Stage, t.Switch, t.Out}
			if j, dup := ru.in[in]; dup {
				vs = append(vs, Violation{RoundLane, i, fmt.Sprintf("round %d uses input lane %d of switch (%d,%d) twice (also circuit %d)", c.Group, t.In, t.Stage, t.Switch, j)})
			}
			if j, dup := ru.out[out]; dup {
				vs = append(vs, Violation{RoundLane, i, fmt.Sprintf("round %d uses output lane %d of switch (%d,%d) twice (also circuit %d)", c.Group, t.Out, t.Stage, t.Switch, j)})
			}
			ru.in[in], ru.out[out] = i, i
			sk := swKey{t.Stage, t.Switch}
			if st, ok := ru.state[sk]; ok && st != t.State() {
				vs = append(vs, Violation{RoundSwitchState, i, fmt.Sprintf("round %d needs switch (%d,%d) both %s (circuit %d) and %s", c.Group, t.Stage, t.Switch, st, ru.stateBy[sk], t.State())})
			} else if !ok {
				ru.state[sk], ru.stateBy[sk] = t.State(), i
			}
		}
	}
	return vs
}

// oracleInterval is one circuit's occupancy of a resource.
type oracleInterval struct {
	start, end float64
	circuit    int
}

// oracleOverlapTolerance absorbs float rounding when one circuit starts exactly as another ends.
func oracleOverlapTolerance(t float64) float64 { return 1e-12 * max(1e-9, math.Abs(t)) }

// oracleVerifyTimeline checks an execution of s: every circuit ran exactly once with ordered times; no
// transmitter, receiver or switch lane carried two circuits at once; and no switch was
// reconfiguring, or in a state other than the one a circuit's traversal needs, while that circuit
// was transmitting. All switches are Bar at t = 0.
func oracleVerifyTimeline(s *Schedule, tl *Timeline) []Violation {
	var vs []Violation
	add := func(k ViolationKind, c int, format string, a ...any) {
		vs = append(vs, Violation{k, c, fmt.Sprintf(format, a...)})
	}
	timing := make([]*CircuitTiming, len(s.Circuits))
	for i := range tl.Circuits {
		ct := &tl.Circuits[i]
		if ct.Circuit < 0 || ct.Circuit >= len(s.Circuits) {
			add(TimelineShape, -1, "timeline entry %d names circuit %d, the schedule has %d", i, ct.Circuit, len(s.Circuits))
			continue
		}
		if timing[ct.Circuit] != nil {
			add(TimelineShape, ct.Circuit, "appears twice in the timeline")
			continue
		}
		timing[ct.Circuit] = ct
		ok := ct.Ready >= 0 && ct.PathReady >= ct.Ready-oracleOverlapTolerance(ct.Ready) &&
			ct.ReconfigStart <= ct.TransmitStart+oracleOverlapTolerance(ct.TransmitStart) &&
			ct.TransmitStart >= ct.PathReady-oracleOverlapTolerance(ct.PathReady) && ct.End >= ct.TransmitStart
		for _, v := range []float64{ct.Ready, ct.PathReady, ct.ReconfigStart, ct.TransmitStart, ct.End} {
			ok = ok && !math.IsNaN(v) && !math.IsInf(v, 0)
		}
		if !ok {
			add(TimelineShape, ct.Circuit, "times out of order: ready %g, path ready %g, reconfig start %g, transmit %g..%g",
				ct.Ready, ct.PathReady, ct.ReconfigStart, ct.TransmitStart, ct.End)
		}
	}
	for i, t := range timing {
		if t == nil {
			add(TimelineShape, i, "missing from the timeline")
		}
	}
	if len(vs) > 0 {
		return vs
	}
	type key struct{ kind, a, b, c int }
	uses := map[key][]oracleInterval{}
	for i, c := range s.Circuits {
		iv := oracleInterval{timing[i].TransmitStart, timing[i].End, i}
		if iv.end <= iv.start {
			continue // a zero-length transfer occupies nothing
		}
		uses[key{0, c.Src, 0, 0}] = append(uses[key{0, c.Src, 0, 0}], iv)
		uses[key{1, c.Dst, 0, 0}] = append(uses[key{1, c.Dst, 0, 0}], iv)
		for _, t := range hops(&c) {
			uses[key{2, t.Stage, t.Switch, t.In}] = append(uses[key{2, t.Stage, t.Switch, t.In}], iv)
			uses[key{3, t.Stage, t.Switch, t.Out}] = append(uses[key{3, t.Stage, t.Switch, t.Out}], iv)
		}
	}
	keys := make([]key, 0, len(uses))
	for k := range uses {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.a != b.a {
			return a.a < b.a
		}
		if a.b != b.b {
			return a.b < b.b
		}
		return a.c < b.c
	})
	for _, k := range keys {
		ivs := uses[k]
		sort.Slice(ivs, func(i, j int) bool {
			return ivs[i].start < ivs[j].start || ivs[i].start == ivs[j].start && ivs[i].circuit < ivs[j].circuit
		})
		for i := 1; i < len(ivs); i++ {
			prev, cur := ivs[i-1], ivs[i]
			if cur.start < prev.end-oracleOverlapTolerance(prev.end) {
				var what ViolationKind
				var name string
				switch k.kind {
				case 0:
					what, name = EndpointOverlap, fmt.Sprintf("transmitter %d", k.a)
				case 1:
					what, name = EndpointOverlap, fmt.Sprintf("receiver %d", k.a)
				case 2:
					what, name = LaneOverlap, fmt.Sprintf("input lane %d of switch (%d,%d)", k.c, k.a, k.b)
				default:
					what, name = LaneOverlap, fmt.Sprintf("output lane %d of switch (%d,%d)", k.c, k.a, k.b)
				}
				add(what, cur.circuit, "%s carries circuits %d (%g..%g) and %d (%g..%g) at once",
					name, prev.circuit, prev.start, prev.end, cur.circuit, cur.start, cur.end)
			}
		}
	}
	vs = append(vs, oracleVerifySwitchStates(s, tl, timing)...)
	return vs
}

// oracleVerifySwitchStates replays each switch's reconfigurations and checks every traversal against
// the state in force over the circuit's transmission.
func oracleVerifySwitchStates(s *Schedule, tl *Timeline, timing []*CircuitTiming) []Violation {
	if s.Fabric != Benes {
		if len(tl.SwitchChanges) > 0 {
			return []Violation{{TimelineShape, -1, fmt.Sprintf("a crossbar has no internal switches, the timeline changes %d", len(tl.SwitchChanges))}}
		}
		return nil
	}
	var vs []Violation
	type swKey struct{ stage, sw int }
	changes := map[swKey][]SwitchChange{}
	for _, ch := range tl.SwitchChanges {
		k := swKey{int(ch.Stage), int(ch.Switch)}
		changes[k] = append(changes[k], ch)
	}
	// Per switch, its changes in time order, and the running maximum of their ends: the first
	// change still in progress (or to come) at time t is then a binary search, so that the check
	// is O((circuits·path + changes)·log changes), not a walk from t = 0 for every traversal.
	keys := make([]swKey, 0, len(changes))
	for k := range changes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].stage < keys[j].stage || keys[i].stage == keys[j].stage && keys[i].sw < keys[j].sw
	})
	maxEnd := make(map[swKey][]float64, len(changes))
	for _, k := range keys {
		chs := changes[k]
		sort.SliceStable(chs, func(i, j int) bool { return chs[i].Start < chs[j].Start })
		ends := make([]float64, len(chs))
		state := benes.Bar
		for i, ch := range chs {
			if ch.End < ch.Start || ch.From != state || (i > 0 && ch.Start < chs[i-1].End-oracleOverlapTolerance(chs[i-1].End)) {
				vs = append(vs, Violation{TimelineShape, -1, fmt.Sprintf("switch (%d,%d): change %d (%s→%s over %g..%g) does not follow from state %s",
					k.stage, k.sw, i, ch.From, ch.To, ch.Start, ch.End, state)})
			}
			state = ch.To
			ends[i] = ch.End
			if i > 0 {
				ends[i] = max(ends[i], ends[i-1])
			}
		}
		maxEnd[k] = ends
	}
	for i, c := range s.Circuits {
		t0, t1 := timing[i].TransmitStart, timing[i].End
		for _, tr := range hops(&c) {
			k := swKey{tr.Stage, tr.Switch}
			chs, ends := changes[k], maxEnd[k]
			// The first change that has not ended by t0: every earlier one is in force.
			next := sort.Search(len(ends), func(j int) bool { return ends[j] > t0+oracleOverlapTolerance(t0) })
			state := benes.Bar
			if next > 0 {
				state = chs[next-1].To
			}
			// A change that ended within the tolerance of t0 may also have begun within it of t1:
			// for a circuit and changes shorter than the timeline's resolution (a 1-byte transfer
			// at 10^4 s, α_r = 0) "before" and "after" cannot be told apart, so either order is
			// accepted. Such runs are a change or two long; the walk back stays short.
			for j := next - 1; state != tr.State() && j >= 0 && chs[j].Start >= t1-oracleOverlapTolerance(t1); j-- {
				if j == 0 {
					state = benes.Bar
				} else {
					state = chs[j-1].To
				}
			}
			if next < len(chs) {
				if ch := chs[next]; ch.Start < t1-oracleOverlapTolerance(t1) && t1 > t0 {
					vs = append(vs, Violation{SwitchUnderLiveCircuit, i, fmt.Sprintf("switch (%d,%d) reconfigures %s→%s over %g..%g while the circuit transmits over %g..%g",
						tr.Stage, tr.Switch, ch.From, ch.To, ch.Start, ch.End, t0, t1)})
				}
			}
			if state != tr.State() {
				vs = append(vs, Violation{SwitchUnderLiveCircuit, i, fmt.Sprintf("switch (%d,%d) is %s when the circuit starts at %g, its traversal needs %s",
					tr.Stage, tr.Switch, state, t0, tr.State())})
			}
		}
	}
	return vs
}

// hops is the path of c as its list of traversals, for the oracles.
func hops(c *Circuit) []benes.Traversal { return c.Path.Traversals() }
