package schedules

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// ViolationKind classifies what a schedule or timeline got wrong.
type ViolationKind string

const (
	// Header: the schedule's own fields are inconsistent (version, fabric, mode, n, ports, rounds).
	Header ViolationKind = "header"
	// BadEndpoint: a circuit's src or dst is not a real port, or it carries no bytes.
	BadEndpoint ViolationKind = "endpoint"
	// BadPath: a path is not a physical path of the fabric from src to dst (or a crossbar circuit has one).
	BadPath ViolationKind = "path"
	// BytesMismatch: the bytes scheduled for a (src, dst) pair differ from the demand.
	BytesMismatch ViolationKind = "bytes"
	// RoundEndpoint: a barrier round uses a transmitter or receiver twice.
	RoundEndpoint ViolationKind = "round-endpoint"
	// RoundLane: a barrier round uses a switch lane twice.
	RoundLane ViolationKind = "round-lane"
	// RoundSwitchState: a barrier round needs a switch in both states.
	RoundSwitchState ViolationKind = "round-switch-state"
	// TimelineShape: a timeline does not match its schedule (missing circuits, reversed intervals).
	TimelineShape ViolationKind = "timeline"
	// EndpointOverlap: a transmitter or receiver carries two circuits at once.
	EndpointOverlap ViolationKind = "endpoint-overlap"
	// LaneOverlap: a switch lane carries two circuits at once.
	LaneOverlap ViolationKind = "lane-overlap"
	// SwitchUnderLiveCircuit: a switch is reconfiguring, or in the wrong state, while a circuit through it is live.
	SwitchUnderLiveCircuit ViolationKind = "switch-live"
	// Duplicate: a partial-mode planning group (a matching) holds the same (src, dst) pair twice.
	Duplicate ViolationKind = "duplicate"
)

// Violation is one thing wrong with a schedule or a timeline. Circuit is the index of the circuit
// concerned, or −1.
type Violation struct {
	Kind    ViolationKind `json:"kind"`
	Circuit int           `json:"circuit"`
	Message string        `json:"message"`
}

func (v Violation) String() string {
	if v.Circuit >= 0 {
		return fmt.Sprintf("%s: circuit %d: %s", v.Kind, v.Circuit, v.Message)
	}
	return fmt.Sprintf("%s: %s", v.Kind, v.Message)
}

// ViolationsError joins violations into one error (nil when there are none).
func ViolationsError(vs []Violation) error {
	if len(vs) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d violation(s):", len(vs))
	for i, v := range vs {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(vs)-20)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(v.String())
	}
	return errors.New(b.String())
}

// Verify checks a schedule against the demand it claims to serve: every path is a physical path of
// the fabric from its src to its dst under the wiring convention; the bytes per (src, dst) add up
// exactly to the demand (every byte delivered exactly once, none invented); and, in barrier mode,
// no round uses an endpoint or a switch lane twice or a switch in two states. It returns every
// violation found: header, endpoint and path problems in circuit order, then byte mismatches by
// (src, dst), then round conflicts in circuit order. Checks of execution (overlaps in time, switches changing under
// live circuits) need a timeline: see VerifyTimeline.
//
// Its memory is the demand's size, the fabric's lanes and the violations, plus at most one
// 4-byte index per circuit (to visit rounds or planning groups that the schedule interleaves);
// its time is linear in the circuits and their paths when groups never decrease along the
// schedule, as every scheduler writes them, and O(c log c) otherwise.
func Verify(s *Schedule, d *Demand) []Violation {
	if fitsIndex32(len(s.Circuits), len(s.Rounds)) {
		return verifyOf[int32](s, d)
	}
	return verifyOf[int](s, d)
}

// verifyOf is Verify with per-circuit indices of type I.
func verifyOf[I index](s *Schedule, d *Demand) []Violation {
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
	// sent is indexed src·ports + dst: the demand is that size already.
	var sent []int64
	if d != nil {
		sent = make([]int64, s.Ports*s.Ports)
	}
	var dups []duplicate[I]
	if s.Mode == Partial {
		dups = partialDuplicates[I](s)
	}
	for i := range s.Circuits {
		c := &s.Circuits[i]
		if !checkCircuit(add, s, fab, i, c) {
			continue
		}
		if sent != nil {
			sent[c.Src*s.Ports+c.Dst] += c.Bytes
		}
		// Barrier rounds report the same thing as a transmitter used twice (verifyRounds).
		if len(dups) > 0 && int(dups[0].repeat) == i {
			add(Duplicate, i, "%d→%d repeats circuit %d in group %d (a planning group is a matching)", c.Src, c.Dst, dups[0].first, c.Group)
			dups = dups[1:]
		}
		checkPath(add, fab, i, c)
	}
	if d != nil {
		checkDelivered(add, d, sent, s.Ports)
	}
	if s.Mode == Barrier {
		vs = append(vs, verifyRounds[I](s, fab)...)
	}
	return vs
}

// violationAdder records one violation.
type violationAdder func(k ViolationKind, c int, format string, a ...any)

// checkCircuit checks circuit i's endpoints, bytes and group; it returns false when its
// endpoints are not real ports (nothing else about it is checked then).
func checkCircuit(add violationAdder, s *Schedule, fab *benes.Fabric, i int, c *Circuit) bool {
	if c.Src < 0 || c.Src >= s.Ports || c.Dst < 0 || c.Dst >= s.Ports {
		add(BadEndpoint, i, "src %d, dst %d: not both real ports in [0, %d)", c.Src, c.Dst, s.Ports)
		return false
	}
	if c.Bytes <= 0 {
		add(BadEndpoint, i, "%d→%d carries %d bytes (a circuit must carry at least one)", c.Src, c.Dst, c.Bytes)
	}
	if c.Group < 0 {
		add(Header, i, "group %d is negative", c.Group)
	}
	return true
}

// checkPath checks circuit i's path on fab (none on a crossbar) and its planned times.
func checkPath(add violationAdder, fab *benes.Fabric, i int, c *Circuit) {
	p := c.Path
	switch {
	case fab == nil && p.Len() != 0:
		add(BadPath, i, "a crossbar circuit has no internal path, got %d traversals", p.Len())
	case fab != nil:
		if err := fab.CheckPath(c.Src, c.Dst, p); err != nil {
			add(BadPath, i, "%d→%d: %v", c.Src, c.Dst, err)
		}
	}
	if c.PlannedStart != nil && c.PlannedEnd != nil && !(*c.PlannedEnd >= *c.PlannedStart) {
		add(Header, i, "planned end %g is before planned start %g", *c.PlannedEnd, *c.PlannedStart)
	}
}

// checkDelivered compares the bytes sent per pair (indexed src·ports + dst) with the demand.
func checkDelivered(add violationAdder, d *Demand, sent []int64, ports int) {
	for i := 0; i < d.N(); i++ {
		for j := 0; j < d.N(); j++ {
			want, got := d.At(i, j), sent[i*ports+j]
			if want != got {
				add(BytesMismatch, -1, "%d→%d: schedule carries %d bytes, demand is %d", i, j, got, want)
			}
		}
	}
}

// CheckStatic is Verify without a demand: every check that needs only the schedule file (header
// and limits, endpoints, non-empty circuits, planned end after start, duplicates, physical paths,
// barrier round conflicts). Every command that executes a schedule runs it, so that nothing
// verify would reject on the file alone is executed.
func CheckStatic(s *Schedule) []Violation { return Verify(s, nil) }

// index is the integer type of the verifier's per-circuit (and per-change) arrays: int32, four
// bytes a circuit, whenever the counts fit; int beyond that, so that no input is refused.
type index interface{ ~int32 | ~int }

// fitsIndex32 says whether counts up to these (and one more, for the 1-based stamps) fit an int32.
func fitsIndex32(counts ...int) bool {
	for _, n := range counts {
		if n >= math.MaxInt32 {
			return false
		}
	}
	return true
}

// iota returns 0, 1, ..., n−1.
func iota[I index](n int) []I {
	p := make([]I, n)
	for i := range p {
		p[i] = I(i)
	}
	return p
}

// pageBits sets the page size of a table: 1024 entries.
const pageBits = 10

// table is an array indexed by a dense id (a port, a lane, a switch) whose pages are allocated,
// zeroed, on first use: a schedule on a 2^20-port fabric costs only the pages its circuits touch,
// while a dense schedule touches them all and gets a flat array's speed. The zero entry means
// unused.
type table[T any] struct{ pages []*[1 << pageBits]T }

func newTable[T any](n int) table[T] {
	return table[T]{make([]*[1 << pageBits]T, (n+1<<pageBits-1)>>pageBits)}
}

func (t *table[T]) at(id int) *T {
	pg := t.pages[id>>pageBits]
	if pg == nil {
		pg = new([1 << pageBits]T)
		t.pages[id>>pageBits] = pg
	}
	return &pg[id&(1<<pageBits-1)]
}

// space numbers the ports, input (or output) lanes and switches of a schedule's fabric densely.
// A key outside it (a port out of range, a traversal off the fabric, a header that describes no
// fabric) has no id: the checks keep such keys in maps, which only broken input reaches.
type space struct {
	ports        int // dense port ids [0, ports); 0 when s.N is not a fabric size
	stages, half int // Beneš stages and switches per stage; 0 on a crossbar or a bad size
}

func spaceOf(s *Schedule) space {
	var sp space
	if s.N >= 1 && s.N <= MaxFabricPorts {
		sp.ports = s.N
	}
	if s.Fabric == Benes {
		if f, err := benes.New(s.N); err == nil {
			sp.stages, sp.half = f.Stages(), f.SwitchesPerStage()
		}
	}
	return sp
}

func (sp space) port(p int) (int, bool) { return p, p >= 0 && p < sp.ports }

func (sp space) switches() int { return sp.stages * sp.half }

func (sp space) switchID(stage, sw int) (int, bool) {
	return stage*sp.half + sw, stage >= 0 && stage < sp.stages && sw >= 0 && sw < sp.half
}

func (sp space) lane(stage, sw, lane int) (int, bool) {
	id, ok := sp.switchID(stage, sw)
	return 2*id + lane, ok && lane >= 0 && lane < 2
}

// duplicate is an entry, repeat, whose key the earlier entry first has: a partial-mode circuit
// and its group and (src, dst), or a rounds entry and its group.
type duplicate[I index] struct{ repeat, first I }

// repeats sorts perm, entry indices, by (key, index), where compare orders the entries' keys, and
// returns in index order every entry whose key an earlier entry has, with the first entry of
// that key.
func repeats[I index](perm []I, compare func(a, b I) int) []duplicate[I] {
	slices.SortFunc(perm, func(a, b I) int { return cmp.Or(compare(a, b), cmp.Compare(a, b)) })
	var dups []duplicate[I]
	for k, head := 1, 0; k < len(perm); k++ {
		if compare(perm[head], perm[k]) == 0 {
			dups = append(dups, duplicate[I]{perm[k], perm[head]})
		} else {
			head = k
		}
	}
	slices.SortFunc(dups, func(a, b duplicate[I]) int { return cmp.Compare(a.repeat, b.repeat) })
	return dups
}

// partialDuplicates lists, in circuit order, every circuit with real endpoints whose (src, dst)
// an earlier circuit of the same group has, naming the first such circuit. A group in which no
// transmitter repeats has none: when groups never decrease along the schedule and that holds for
// all of them (a planning group is a matching), one pass over a per-port table decides it;
// otherwise the circuits are sorted by (group, src, dst, index).
func partialDuplicates[I index](s *Schedule) []duplicate[I] {
	real := func(c *Circuit) bool { return c.Src >= 0 && c.Src < s.Ports && c.Dst >= 0 && c.Dst < s.Ports }
	if groupsAscend(s) {
		seen := newTable[I](s.Ports) // per transmitter: the group run that last used it, from 1
		run, repeat := I(0), false
		for i := range s.Circuits {
			c := &s.Circuits[i]
			if i == 0 || c.Group != s.Circuits[i-1].Group {
				run++
			}
			if !real(c) {
				continue
			}
			if e := seen.at(c.Src); *e != run {
				*e = run
			} else {
				repeat = true
				break
			}
		}
		if !repeat {
			return nil
		}
	}
	perm := make([]I, 0, len(s.Circuits))
	for i := range s.Circuits {
		if real(&s.Circuits[i]) {
			perm = append(perm, I(i))
		}
	}
	return repeats(perm, func(a, b I) int {
		ca, cb := &s.Circuits[a], &s.Circuits[b]
		return cmp.Or(cmp.Compare(ca.Group, cb.Group), cmp.Compare(ca.Src, cb.Src), cmp.Compare(ca.Dst, cb.Dst))
	})
}

// groupsAscend says whether groups never decrease along the schedule, so that each group's
// circuits are one run, in circuit order.
func groupsAscend(s *Schedule) bool {
	for i := 1; i < len(s.Circuits); i++ {
		if s.Circuits[i].Group < s.Circuits[i-1].Group {
			return false
		}
	}
	return true
}

// byGroup returns the circuits grouped by group, each group in circuit order, as a permutation;
// nil when the schedule already is (groupsAscend).
func byGroup[I index](s *Schedule) []I {
	if groupsAscend(s) {
		return nil
	}
	perm := iota[I](len(s.Circuits))
	slices.SortFunc(perm, func(a, b I) int {
		return cmp.Or(cmp.Compare(s.Circuits[a].Group, s.Circuits[b].Group), cmp.Compare(a, b))
	})
	return perm
}

// claim is the circuit that last used a port or lane in the round numbered stamp (from 1).
type claim[I index] struct{ stamp, circuit I }

// claims records, per port or lane, the circuit of the current round that last used it.
type claims[I index, K comparable] struct {
	dense  table[claim[I]]
	sparse map[K]I // keys without a dense id, for the current round
}

// take records circuit as the user of a dense entry in round seq, and returns the circuit of
// round seq that used it before, if any.
func take[I index](e *claim[I], seq, circuit I) (prev I, dup bool) {
	prev, dup = e.circuit, e.stamp == seq
	*e = claim[I]{seq, circuit}
	return prev, dup
}

// useSparse is take for a key without a dense id.
func (c *claims[I, K]) useSparse(key K, circuit I) (prev I, dup bool) {
	if c.sparse == nil {
		c.sparse = map[K]I{}
	}
	prev, dup = c.sparse[key]
	c.sparse[key] = circuit
	return prev, dup
}

// reset forgets the sparse keys of the round that ended (dense entries expire by their stamp).
func (c *claims[I, K]) reset() {
	if len(c.sparse) > 0 {
		clear(c.sparse)
	}
}

// stateClaim is the state the round numbered stamp needs of a switch, and the circuit that first needed it.
type stateClaim[I index] struct {
	stamp, by I
	state     benes.State
}

// verifyRounds checks that each barrier round is a set of circuits that can be live together.
// It visits the rounds one at a time, with tables per port, lane and switch stamped by round
// rather than maps per round; the violations come out in circuit order.
func verifyRounds[I index](s *Schedule, fab *benes.Fabric) []Violation {
	vs := roundsListed[I](s)
	rc := newRoundChecker[I](spaceOf(s), fab)
	order := byGroup[I](s)
	at := func(p int) int {
		if order == nil {
			return p
		}
		return int(order[p])
	}
	for lo := 0; lo < len(s.Circuits); {
		g := s.Circuits[at(lo)].Group
		rc.begin()
		hi := lo
		for ; hi < len(s.Circuits) && s.Circuits[at(hi)].Group == g; hi++ {
			i := at(hi)
			rc.check(i, &s.Circuits[i])
		}
		lo = hi
	}
	if order != nil {
		sortByCircuit(rc.vs)
	}
	return append(vs, rc.vs...)
}

// roundChecker finds the conflicts within barrier rounds, one round at a time (begin, then check
// for each of its circuits): a transmitter, receiver or switch lane used twice, a switch needed
// in both states. Its violations gather in vs.
type roundChecker[I index] struct {
	sp          space
	fab         *benes.Fabric
	tx, rx      claims[I, int]
	in, out     claims[I, [3]int]
	state       table[stateClaim[I]]
	sparseState map[[2]int]stateClaim[I]
	seq         I
	vs          []Violation
}

func newRoundChecker[I index](sp space, fab *benes.Fabric) *roundChecker[I] {
	rc := &roundChecker[I]{sp: sp, fab: fab,
		tx: claims[I, int]{dense: newTable[claim[I]](sp.ports)},
		rx: claims[I, int]{dense: newTable[claim[I]](sp.ports)}}
	if fab != nil {
		rc.in.dense = newTable[claim[I]](2 * sp.switches())
		rc.out.dense = newTable[claim[I]](2 * sp.switches())
		rc.state = newTable[stateClaim[I]](sp.switches())
	}
	return rc
}

// begin starts the next round.
func (rc *roundChecker[I]) begin() {
	rc.seq++
	rc.tx.reset()
	rc.rx.reset()
	rc.in.reset()
	rc.out.reset()
	if len(rc.sparseState) > 0 {
		clear(rc.sparseState)
	}
}

// check adds circuit i (c) to the round under way.
func (rc *roundChecker[I]) check(i int, c *Circuit) {
	sp, seq := rc.sp, rc.seq
	var j I
	var dup bool
	if id, ok := sp.port(c.Src); ok {
		j, dup = take(rc.tx.dense.at(id), seq, I(i))
	} else {
		j, dup = rc.tx.useSparse(c.Src, I(i))
	}
	if dup {
		rc.vs = append(rc.vs, Violation{RoundEndpoint, i, fmt.Sprintf("round %d uses transmitter %d twice (also circuit %d)", c.Group, c.Src, j)})
	}
	if id, ok := sp.port(c.Dst); ok {
		j, dup = take(rc.rx.dense.at(id), seq, I(i))
	} else {
		j, dup = rc.rx.useSparse(c.Dst, I(i))
	}
	if dup {
		rc.vs = append(rc.vs, Violation{RoundEndpoint, i, fmt.Sprintf("round %d uses receiver %d twice (also circuit %d)", c.Group, c.Dst, j)})
	}
	if rc.fab == nil {
		return
	}
	for _, t := range c.Path.All() {
		rc.hop(i, c, t)
	}
}

// hop adds traversal t of circuit i (c) to the round under way.
func (rc *roundChecker[I]) hop(i int, c *Circuit, t benes.Traversal) {
	sp, seq := rc.sp, rc.seq
	var j I
	var dup bool
	if id, ok := sp.lane(t.Stage, t.Switch, t.In); ok {
		j, dup = take(rc.in.dense.at(id), seq, I(i))
	} else {
		j, dup = rc.in.useSparse([3]int{t.Stage, t.Switch, t.In}, I(i))
	}
	if dup {
		rc.vs = append(rc.vs, Violation{RoundLane, i, fmt.Sprintf("round %d uses input lane %d of switch (%d,%d) twice (also circuit %d)", c.Group, t.In, t.Stage, t.Switch, j)})
	}
	if id, ok := sp.lane(t.Stage, t.Switch, t.Out); ok {
		j, dup = take(rc.out.dense.at(id), seq, I(i))
	} else {
		j, dup = rc.out.useSparse([3]int{t.Stage, t.Switch, t.Out}, I(i))
	}
	if dup {
		rc.vs = append(rc.vs, Violation{RoundLane, i, fmt.Sprintf("round %d uses output lane %d of switch (%d,%d) twice (also circuit %d)", c.Group, t.Out, t.Stage, t.Switch, j)})
	}
	want := t.State()
	conflict := func(st benes.State, by I) {
		rc.vs = append(rc.vs, Violation{RoundSwitchState, i, fmt.Sprintf("round %d needs switch (%d,%d) both %s (circuit %d) and %s", c.Group, t.Stage, t.Switch, st, by, want)})
	}
	if id, ok := sp.switchID(t.Stage, t.Switch); ok {
		if e := rc.state.at(id); e.stamp != seq {
			*e = stateClaim[I]{seq, I(i), want}
		} else if e.state != want {
			conflict(e.state, e.by)
		}
		return
	}
	k := [2]int{t.Stage, t.Switch}
	if rc.sparseState == nil {
		rc.sparseState = map[[2]int]stateClaim[I]{}
	}
	if e, seen := rc.sparseState[k]; !seen {
		rc.sparseState[k] = stateClaim[I]{seq, I(i), want}
	} else if e.state != want {
		conflict(e.state, e.by)
	}
}

// sortByCircuit puts violations that a sweep out of circuit order found in circuit order. Each
// circuit's violations came out together and in order, so a stable sort by circuit suffices.
func sortByCircuit(vs []Violation) {
	slices.SortStableFunc(vs, func(a, b Violation) int { return cmp.Compare(a.Circuit, b.Circuit) })
}

// roundsListed checks the rounds list: no group listed twice. (Every planned duration is a time
// already: Validate refuses one that is not, and verifyOf stops there.)
func roundsListed[I index](s *Schedule) []Violation {
	var vs []Violation
	// dups are the entries whose group an earlier entry has, in list order; a list in strictly
	// ascending group order (as schedulers write it) has none.
	var dups []duplicate[I]
	for k := 1; k < len(s.Rounds); k++ {
		if s.Rounds[k].Group <= s.Rounds[k-1].Group {
			dups = repeats(iota[I](len(s.Rounds)), func(a, b I) int { return cmp.Compare(s.Rounds[a].Group, s.Rounds[b].Group) })
			break
		}
	}
	for k, r := range s.Rounds {
		if len(dups) > 0 && int(dups[0].repeat) == k {
			vs = append(vs, Violation{Header, -1, fmt.Sprintf("round %d is listed twice in rounds", r.Group)})
			dups = dups[1:]
		}
	}
	return vs
}

// overlapTolerance absorbs float rounding when one circuit starts exactly as another ends.
func overlapTolerance(t float64) float64 { return 1e-12 * max(1e-9, math.Abs(t)) }

// VerifyTimeline checks an execution of s: every circuit ran exactly once with ordered times; no
// transmitter, receiver or switch lane carried two circuits at once; and no switch was
// reconfiguring, or in a state other than the one a circuit's traversal needs, while that circuit
// was transmitting. All switches are Bar at t = 0.
//
// Its memory is the fabric's ports, lanes and switches and the violations, plus at most two
// 4-byte indices per circuit (its timeline entry, and its place in transmit-start order when the
// timeline is not in that order already) and one per switch change (the changes grouped by
// switch). Its time is linear in the circuits, their paths and the changes when circuits in
// schedule order start in time order and the changes are listed by start, as the emulator
// writes barrier timelines, and O(c log c) otherwise.
func VerifyTimeline(s *Schedule, tl *Timeline) []Violation {
	return verifyView(s, timelineView{tl: tl})
}

// VerifyRoundTimeline is VerifyTimeline for a timeline stored by round: it returns exactly the
// violations VerifyTimeline(s, tl.Expand()) returns, without the per-circuit records (its own
// memory is VerifyTimeline's).
func VerifyRoundTimeline(s *Schedule, tl *RoundTimeline) []Violation {
	return verifyView(s, timelineView{rt: tl})
}

func verifyView(s *Schedule, v timelineView) []Violation {
	if fitsIndex32(len(s.Circuits), v.numCircuits(), v.numChanges()) {
		return verifyTimelineOf[int32](s, v)
	}
	return verifyTimelineOf[int](s, v)
}

// timelineView is how the timeline checks read a timeline: a Timeline's records, or a
// RoundTimeline's entries as its expansion would hold them (exactly one of tl and rt is set).
// Entries are read by value, one at a time, so that a RoundTimeline is never expanded.
type timelineView struct {
	tl *Timeline
	rt *RoundTimeline
}

func (v timelineView) numCircuits() int {
	if v.rt != nil {
		return v.rt.Len()
	}
	return len(v.tl.Circuits)
}

func (v timelineView) numChanges() int {
	if v.rt != nil {
		return v.rt.NumSwitchChanges()
	}
	return len(v.tl.SwitchChanges)
}

func (v timelineView) circuit(i int) CircuitTiming {
	if v.rt != nil {
		return v.rt.Circuit(i)
	}
	return v.tl.Circuits[i]
}

func (v timelineView) change(k int) SwitchChange {
	if v.rt != nil {
		return v.roundChange(k)
	}
	return v.tl.SwitchChanges[k]
}

// roundChange is change for a timeline by round, kept out of line so that change stays small
// enough to inline into the replay's loop over every change.
//
//go:noinline
func (v timelineView) roundChange(k int) SwitchChange { return v.rt.SwitchChange(k) }

// The accessors below read one part of an entry, for the loops that visit every circuit or
// change: a whole entry by value costs them about half again their time.

// span is circuit entry i's transmission.
func (v timelineView) span(i int) (start, end float64) {
	if v.rt != nil {
		return v.rt.span(i)
	}
	ct := &v.tl.Circuits[i]
	return ct.TransmitStart, ct.End
}

// changeSwitch is change k's switch.
func (v timelineView) changeSwitch(k int) (stage, sw int) {
	if v.rt != nil {
		return v.rt.changeSwitch(k)
	}
	ch := &v.tl.SwitchChanges[k]
	return int(ch.Stage), int(ch.Switch)
}

// changeSpan is change k's start and end.
func (v timelineView) changeSpan(k int) (start, end float64) {
	if v.rt != nil {
		return v.rt.changeSpan(k)
	}
	ch := &v.tl.SwitchChanges[k]
	return ch.Start, ch.End
}

// changeTo is the state change k leaves its switch in.
func (v timelineView) changeTo(k int) benes.State {
	if v.rt != nil {
		return v.rt.changeTo(k)
	}
	return v.tl.SwitchChanges[k].To
}

// verifyTimelineOf is VerifyTimeline with per-circuit indices of type I.
func verifyTimelineOf[I index](s *Schedule, tl timelineView) []Violation {
	var vs []Violation
	add := func(k ViolationKind, c int, format string, a ...any) {
		vs = append(vs, Violation{k, c, fmt.Sprintf(format, a...)})
	}
	// timing[i] is 1 + the index of circuit i's entry in tl.Circuits, 0 while it has none.
	timing := make([]I, len(s.Circuits))
	for i := range tl.numCircuits() {
		ct := tl.circuit(i)
		if ct.Circuit < 0 || ct.Circuit >= len(s.Circuits) {
			add(TimelineShape, -1, "timeline entry %d names circuit %d, the schedule has %d", i, ct.Circuit, len(s.Circuits))
			continue
		}
		if timing[ct.Circuit] != 0 {
			add(TimelineShape, ct.Circuit, "appears twice in the timeline")
			continue
		}
		timing[ct.Circuit] = I(i + 1)
		if v, bad := timesOutOfOrder(&ct); bad {
			vs = append(vs, v)
		}
	}
	for i, t := range timing {
		if t == 0 {
			add(TimelineShape, i, "missing from the timeline")
		}
	}
	if len(vs) > 0 {
		return vs
	}
	// From here on every circuit has exactly one entry, with finite times in order. Both checks
	// sweep the circuits in (transmit start, index) order, together, so that each circuit and
	// its path are read in the same pass.
	order := startOrder(s, tl, timing)
	ov := newOverlaps[I](s)
	var st *switchStates[I]
	if s.Fabric == Benes {
		st = newSwitchStates[I](s, tl)
	}
	for p := range s.Circuits {
		i := p
		if order != nil {
			i = int(order[p])
		}
		c := &s.Circuits[i]
		t0, t1 := tl.span(int(timing[i] - 1))
		ov.circuit(I(i), c, t0, t1)
		if st != nil {
			st.circuit(i, c, t0, t1)
		}
	}
	vs = append(vs, ov.violations()...)
	if st == nil {
		if n := tl.numChanges(); n > 0 {
			vs = append(vs, Violation{TimelineShape, -1, fmt.Sprintf("a crossbar has no internal switches, the timeline changes %d", n)})
		}
		return vs
	}
	return append(vs, st.violations(order != nil)...)
}

// timesOutOfOrder is the violation of a circuit entry whose times are not finite or not in
// order (ready ≤ path ready ≤ transmit start ≤ end, reconfiguration start ≤ transmit start).
func timesOutOfOrder(ct *CircuitTiming) (Violation, bool) {
	ok := ct.Ready >= 0 && ct.PathReady >= ct.Ready-overlapTolerance(ct.Ready) &&
		ct.ReconfigStart <= ct.TransmitStart+overlapTolerance(ct.TransmitStart) &&
		ct.TransmitStart >= ct.PathReady-overlapTolerance(ct.PathReady) && ct.End >= ct.TransmitStart
	for _, v := range []float64{ct.Ready, ct.PathReady, ct.ReconfigStart, ct.TransmitStart, ct.End} {
		ok = ok && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	if ok {
		return Violation{}, false
	}
	return Violation{TimelineShape, ct.Circuit, fmt.Sprintf("times out of order: ready %g, path ready %g, reconfig start %g, transmit %g..%g",
		ct.Ready, ct.PathReady, ct.ReconfigStart, ct.TransmitStart, ct.End)}, true
}

// resource names a transmitter (kind 0, port a), a receiver (kind 1, port a), or an input
// (kind 2) or output (kind 3) lane c of switch b of stage a. Overlaps are reported in this
// order of resources.
type resource struct{ kind, a, b, c int }

func (r resource) compare(o resource) int {
	return cmp.Or(cmp.Compare(r.kind, o.kind), cmp.Compare(r.a, o.a), cmp.Compare(r.b, o.b), cmp.Compare(r.c, o.c))
}

// holder is the circuit (from 1; 0 for none) that used a resource last in transmit-start order,
// and its transmission.
type holder[I index] struct {
	circuit    I
	start, end float64
}

// overlap is one resource carrying circuits prev and cur, transmitting over the two spans, at once.
type overlap[I index] struct {
	r         resource
	prev, cur I
	p0, p1    float64
	c0, c1    float64
}

// overlaps finds every resource that carries two circuits at once. Per resource, the circuits
// in (transmit start, index) order must each start no earlier than the one before it ends. One
// sweep over all circuits in that order visits each resource's circuits in its own order, so a
// table of the last holder per resource replaces a list of intervals per resource; the overlaps
// are then put in resource order.
type overlaps[I index] struct {
	sp     space
	ports  [2]table[holder[I]] // transmitters, receivers
	lanes  [2]table[holder[I]] // input lanes, output lanes
	sparse map[resource]holder[I]
	found  []overlap[I]
}

func newOverlaps[I index](s *Schedule) *overlaps[I] {
	sp := spaceOf(s)
	return &overlaps[I]{sp: sp,
		ports: [2]table[holder[I]]{newTable[holder[I]](sp.ports), newTable[holder[I]](sp.ports)},
		lanes: [2]table[holder[I]]{newTable[holder[I]](2 * sp.switches()), newTable[holder[I]](2 * sp.switches())}}
}

// take makes circuit cur, transmitting over [start, end), the last holder of a resource, and
// returns the one before if the two overlap.
func (h *holder[I]) take(cur I, start, end float64) (prev holder[I], overlap bool) {
	prev, overlap = *h, h.circuit != 0 && start < h.end-overlapTolerance(h.end)
	prev.circuit--
	*h = holder[I]{cur + 1, start, end}
	return prev, overlap
}

// overlapOf is the overlap of prev (as take returns it) and circuit cur over [start, end) on r.
func overlapOf[I index](r resource, prev holder[I], cur I, start, end float64) overlap[I] {
	return overlap[I]{r, prev.circuit, cur, prev.start, prev.end, start, end}
}

// takeSparse is take on resource r, which has no dense id.
func (o *overlaps[I]) takeSparse(r resource, cur I, start, end float64) {
	if o.sparse == nil {
		o.sparse = map[resource]holder[I]{}
	}
	h := o.sparse[r]
	if prev, ok := h.take(cur, start, end); ok {
		o.found = append(o.found, overlapOf(r, prev, cur, start, end))
	}
	o.sparse[r] = h
}

// circuit visits the resources of circuit i, which transmits over [start, end).
func (o *overlaps[I]) circuit(i I, c *Circuit, start, end float64) {
	if end <= start {
		return // a zero-length transfer occupies nothing
	}
	sp := &o.sp
	for kind, port := range [2]int{c.Src, c.Dst} {
		if id, ok := sp.port(port); !ok {
			o.takeSparse(resource{kind, port, 0, 0}, i, start, end)
		} else if prev, ok := o.ports[kind].at(id).take(i, start, end); ok {
			o.found = append(o.found, overlapOf(resource{kind, port, 0, 0}, prev, i, start, end))
		}
	}
	for _, tr := range c.Path.All() {
		for side, lane := range [2]int{tr.In, tr.Out} {
			if id, ok := sp.lane(tr.Stage, tr.Switch, lane); !ok {
				o.takeSparse(resource{2 + side, tr.Stage, tr.Switch, lane}, i, start, end)
			} else if prev, ok := o.lanes[side].at(id).take(i, start, end); ok {
				o.found = append(o.found, overlapOf(resource{2 + side, tr.Stage, tr.Switch, lane}, prev, i, start, end))
			}
		}
	}
}

// violations returns the overlaps in resource order, each resource's in its own order.
func (o *overlaps[I]) violations() []Violation {
	// Found in time order; each resource's overlaps are in its own order already.
	slices.SortStableFunc(o.found, func(a, b overlap[I]) int { return a.r.compare(b.r) })
	var vs []Violation
	for _, f := range o.found {
		var what ViolationKind
		var name string
		switch k := f.r; k.kind {
		case 0:
			what, name = EndpointOverlap, fmt.Sprintf("transmitter %d", k.a)
		case 1:
			what, name = EndpointOverlap, fmt.Sprintf("receiver %d", k.a)
		case 2:
			what, name = LaneOverlap, fmt.Sprintf("input lane %d of switch (%d,%d)", k.c, k.a, k.b)
		default:
			what, name = LaneOverlap, fmt.Sprintf("output lane %d of switch (%d,%d)", k.c, k.a, k.b)
		}
		vs = append(vs, Violation{what, int(f.cur), fmt.Sprintf("%s carries circuits %d (%g..%g) and %d (%g..%g) at once",
			name, f.prev, f.p0, f.p1, f.cur, f.c0, f.c1)})
	}
	o.found = o.found[:0]
	return vs
}

// startOrder returns the circuits in (transmit start, index) order as a permutation; nil when
// they are in that order already (barrier rounds executed one after another are).
func startOrder[I index](s *Schedule, tl timelineView, timing []I) []I {
	start := func(i I) float64 { t0, _ := tl.span(int(timing[i] - 1)); return t0 }
	sorted := true
	for i := 1; i < len(timing) && sorted; i++ {
		sorted = start(I(i-1)) <= start(I(i))
	}
	if sorted {
		return nil
	}
	perm := iota[I](len(s.Circuits))
	slices.SortFunc(perm, func(a, b I) int { return cmp.Or(cmp.Compare(start(a), start(b)), cmp.Compare(a, b)) })
	return perm
}

// switchStates replays each switch's reconfigurations and checks every traversal against the
// state in force over the circuit's transmission.
//
// The state in force at t0 is that of the last change before the first one that has not ended
// by t0, in the switch's changes by start time with their ends' running maximum. The sweep in
// transmit-start order asks each switch about ever later times, so a cursor per switch that only
// moves forward finds that change: O(circuits·path + changes) in all. Where the running maximum
// is not monotone (an end that is NaN, in a timeline built in memory) or the switch is off the
// fabric, a binary search over the materialised maxima answers as it always has.
type switchStates[I index] struct {
	tl     timelineView
	sp     space
	chg    *switchChanges[I]
	sws    table[switchSweep[I]]
	shapes []Violation // the replay's, in (stage, switch) order
	lives  []Violation // the traversals', in sweep order
}

// newSwitchStates groups the changes by switch and replays them (a Beneš schedule's timeline).
func newSwitchStates[I index](s *Schedule, tl timelineView) *switchStates[I] {
	return newSwitchStatesIn(s, tl, newTable[switchSweep[I]](spaceOf(s).switches()), true)
}

// newSwitchStatesIn is newSwitchStates with a table of per-switch sweeps to use, every entry
// zero (a check that makes many reuses one, clearing what it touched); report says to report
// the changes that do not follow from the ones before them (a check of part of a timeline,
// which replays the changes itself, does not).
func newSwitchStatesIn[I index](s *Schedule, tl timelineView, sws table[switchSweep[I]], report bool) *switchStates[I] {
	sp := spaceOf(s)
	chg := newSwitchChanges[I](sp, tl)
	type shape struct {
		stage, sw int
		v         Violation
	}
	var shapes []shape
	step := func(r *switchSweep[I], stage, sw int, ch *SwitchChange) {
		if v, bad := r.replay(stage, sw, ch, report); bad {
			shapes = append(shapes, shape{stage, sw, v})
		}
	}
	if !chg.resorted {
		// Every switch's changes are in timeline order: replay them all in one pass over the
		// timeline, which reads it in the order it lies in memory.
		for x := range tl.numChanges() {
			stage, sw := tl.changeSwitch(x)
			if id, ok := sp.switchID(stage, sw); ok {
				ch := tl.change(x)
				step(sws.at(id), stage, sw, &ch)
			}
		}
	}
	chg.each(func(stage, sw int, seg []I) {
		id, dense := sp.switchID(stage, sw)
		r := &switchSweep[I]{}
		if dense {
			r = sws.at(id)
		}
		if !dense || chg.resorted {
			for _, x := range seg {
				ch := tl.change(int(x))
				step(r, stage, sw, &ch)
			}
		}
		if !dense || math.IsNaN(r.maxEnd) {
			ends := make([]float64, len(seg))
			for i, x := range seg {
				_, ends[i] = tl.changeSpan(int(x))
				if i > 0 {
					ends[i] = max(ends[i], ends[i-1])
				}
			}
			if chg.search == nil {
				chg.search = map[[2]int][]float64{}
			}
			chg.search[[2]int{stage, sw}] = ends
			r.search = true
		}
	})
	// Found switch by switch in table order; reported in (stage, switch) order.
	slices.SortStableFunc(shapes, func(a, b shape) int { return cmp.Or(cmp.Compare(a.stage, b.stage), cmp.Compare(a.sw, b.sw)) })
	st := &switchStates[I]{tl: tl, sp: sp, chg: chg, sws: sws}
	for _, sh := range shapes {
		st.shapes = append(st.shapes, sh.v)
	}
	return st
}

// circuit checks the traversals of circuit i, which transmits over [t0, t1).
func (st *switchStates[I]) circuit(i int, c *Circuit, t0, t1 float64) {
	tl, sp, chg, sws := st.tl, &st.sp, st.chg, &st.sws
	ended, begun := t0+overlapTolerance(t0), t1-overlapTolerance(t1)
	for _, tr := range c.Path.All() {
		// next is the first change that has not ended by t0: every earlier one is in force;
		// upcoming is when next starts.
		var seg []I
		var next int
		state, upcoming := benes.Bar, 0.0
		id, ok := sp.switchID(tr.Stage, tr.Switch)
		var r *switchSweep[I]
		if ok {
			seg, r = chg.perm[chg.off[id]:chg.off[id+1]], sws.at(id)
		} else {
			seg = chg.offFabric(tr.Stage, tr.Switch)
		}
		if r != nil && !r.search {
			if r.used && ended >= r.at && (int(r.next) == len(seg) || r.head > ended) {
				r.at = ended // the cursor stays (most traversals): seek inlined
			} else {
				r.seek(seg, tl, ended)
			}
			next, state, upcoming = int(r.next), r.inForce, r.upcoming
		} else {
			if len(seg) > 0 {
				ends := chg.search[[2]int{tr.Stage, tr.Switch}]
				next = sort.Search(len(ends), func(j int) bool { return ends[j] > ended })
			}
			if next > 0 {
				state = tl.changeTo(int(seg[next-1]))
			}
			if next < len(seg) {
				upcoming, _ = tl.changeSpan(int(seg[next]))
			}
		}
		// A change that ended within the tolerance of t0 may also have begun within it of t1:
		// for a circuit and changes shorter than the timeline's resolution (a 1-byte transfer
		// at 10^4 s, α_r = 0) "before" and "after" cannot be told apart, so either order is
		// accepted. Such runs are a change or two long; the walk back stays short.
		for j := next - 1; state != tr.State() && j >= 0; j-- {
			if t, _ := tl.changeSpan(int(seg[j])); !(t >= begun) {
				break
			}
			if j == 0 {
				state = benes.Bar
			} else {
				state = tl.changeTo(int(seg[j-1]))
			}
		}
		if next < len(seg) && upcoming < begun && t1 > t0 {
			ch := tl.change(int(seg[next]))
			st.lives = append(st.lives, Violation{SwitchUnderLiveCircuit, i, fmt.Sprintf("switch (%d,%d) reconfigures %s→%s over %g..%g while the circuit transmits over %g..%g",
				tr.Stage, tr.Switch, ch.From, ch.To, ch.Start, ch.End, t0, t1)})
		}
		if state != tr.State() {
			st.lives = append(st.lives, Violation{SwitchUnderLiveCircuit, i, fmt.Sprintf("switch (%d,%d) is %s when the circuit starts at %g, its traversal needs %s",
				tr.Stage, tr.Switch, state, t0, tr.State())})
		}
	}
}

// violations returns the replay's violations, then the traversals' in circuit order; reorder
// says the sweep did not visit circuits in that order.
func (st *switchStates[I]) violations(reorder bool) []Violation {
	if reorder {
		sortByCircuit(st.lives)
	}
	return append(st.shapes, st.lives...)
}

// switchSweep is one switch's state in switchStates: the replay of its changes (how many
// were seen, the state they leave, the end of the last, the running maximum of ends), then its
// cursor for the sweep: next is the first change whose running maximum of ends exceeds the last
// time asked about, head that maximum, upcoming when next starts, and inForce the state the
// changes before next leave (kept, so that a question that does not move the cursor reads no
// change). search marks a switch whose maxima are not monotone: a binary search answers for it,
// as for a switch off the fabric.
type switchSweep[I index] struct {
	seen               int
	state              benes.State
	lastEnd, maxEnd    float64
	next               I
	head, at, upcoming float64
	inForce            benes.State
	used, search       bool
}

// replay takes change ch of switch (stage, sw), the switch's next in time order, and returns
// the violation if it does not follow from the changes before it: it must start from the state
// they leave, no earlier than the last of them ended, and end no earlier than it starts.
// The violation is made only where report is set.
func (c *switchSweep[I]) replay(stage, sw int, ch *SwitchChange, report bool) (Violation, bool) {
	if c.seen == 0 {
		c.maxEnd = math.Inf(-1)
	}
	bad := ch.End < ch.Start || ch.From != c.state || (c.seen > 0 && ch.Start < c.lastEnd-overlapTolerance(c.lastEnd))
	var v Violation
	if bad && report {
		v = Violation{TimelineShape, -1, fmt.Sprintf("switch (%d,%d): change %d (%s→%s over %g..%g) does not follow from state %s",
			stage, sw, c.seen, ch.From, ch.To, ch.Start, ch.End, c.state)}
	}
	c.state, c.lastEnd, c.maxEnd = ch.To, ch.End, max(c.maxEnd, ch.End)
	c.seen++
	return v, bad && report
}

// seek moves next to the first change of seg whose running maximum of ends exceeds t (what a
// binary search over the maxima returns) by moving forward from the last answer, and keeps
// head, upcoming and inForce with it. Asked about an
// earlier time than before (which the sweep never does), it starts again from the first change.
func (c *switchSweep[I]) seek(seg []I, chs timelineView, t float64) {
	if !c.used || t < c.at {
		c.next, c.used, c.inForce = 0, true, benes.Bar
		if len(seg) > 0 {
			c.upcoming, c.head = chs.changeSpan(int(seg[0]))
		}
	}
	c.at = t
	for int(c.next) < len(seg) && !(c.head > t) {
		c.inForce = chs.changeTo(int(seg[c.next]))
		c.next++
		if int(c.next) < len(seg) {
			start, end := chs.changeSpan(int(seg[c.next]))
			c.head, c.upcoming = max(c.head, end), start
		}
	}
}

// switchChanges holds a timeline's changes grouped by switch, each switch's in time order (stable:
// changes that start together stay in timeline order), as one permutation of change indices. A
// switch of the fabric finds its changes through an offset table; one off the fabric (only
// broken timelines name such) through a map.
type switchChanges[I index] struct {
	sp     space
	perm   []I
	off    []I // switch id → its first position in perm; off[switches] = the dense part's end
	sparse map[[2]int][2]I
	// search holds the running maxima of ends of the switches that are searched, not swept.
	search map[[2]int][]float64
	// resorted says some switch's changes are not in timeline order (they did not ascend).
	resorted bool
}

func newSwitchChanges[I index](sp space, chs timelineView) *switchChanges[I] {
	nch := chs.numChanges()
	c := &switchChanges[I]{sp: sp, perm: make([]I, nch), off: make([]I, sp.switches()+1)}
	// A counting sort by switch id, which keeps timeline order within a switch; the changes of
	// switches off the fabric follow, sorted by (stage, switch, index).
	for x := range nch {
		if id, ok := sp.switchID(chs.changeSwitch(x)); ok {
			c.off[id+1]++
		}
	}
	for id := 1; id < len(c.off); id++ {
		c.off[id] += c.off[id-1]
	}
	dense := int(c.off[len(c.off)-1])
	rest := dense
	// Each change goes to its switch's next free place, c.off[id], which then moves on: at the
	// end c.off[id] is where switch id+1 starts, and a shift by one entry restores the table. (A
	// second table of cursors would double the per-switch memory, which on a large fabric is
	// most of the verifier's.)
	for x := range nch {
		if id, ok := sp.switchID(chs.changeSwitch(x)); ok {
			c.perm[c.off[id]] = I(x)
			c.off[id]++
		} else {
			c.perm[rest] = I(x)
			rest++
		}
	}
	copy(c.off[1:], c.off[:len(c.off)-1])
	c.off[0] = 0
	key := func(x I) [2]int { stage, sw := chs.changeSwitch(int(x)); return [2]int{stage, sw} }
	tail := c.perm[dense:]
	slices.SortFunc(tail, func(a, b I) int {
		ka, kb := key(a), key(b)
		return cmp.Or(cmp.Compare(ka[0], kb[0]), cmp.Compare(ka[1], kb[1]), cmp.Compare(a, b))
	})
	for lo := 0; lo < len(tail); {
		hi := lo + 1
		for hi < len(tail) && key(tail[hi]) == key(tail[lo]) {
			hi++
		}
		if c.sparse == nil {
			c.sparse = map[[2]int][2]I{}
		}
		c.sparse[key(tail[lo])] = [2]I{I(dense + lo), I(dense + hi)}
		lo = hi
	}
	// Each switch's changes by start time, stably. Changes that already ascend (as an executor
	// writes them) stay as they are; anything else, NaN starts included, goes through the same
	// stable sort as ever, so that the order is the same for every input.
	start := func(x I) float64 { t, _ := chs.changeSpan(int(x)); return t }
	c.each(func(_, _ int, seg []I) {
		if len(seg) == 0 {
			return
		}
		prev := start(seg[0])
		for j := 1; j < len(seg); j++ {
			cur := start(seg[j])
			if !(prev <= cur) {
				sort.SliceStable(seg, func(x, y int) bool { return start(seg[x]) < start(seg[y]) })
				c.resorted = true
				return
			}
			prev = cur
		}
	})
	return c
}

// each calls f with the changes of every switch that has any, in no particular order of switches.
func (c *switchChanges[I]) each(f func(stage, sw int, seg []I)) {
	for id := 0; id+1 < len(c.off); id++ {
		if lo, hi := c.off[id], c.off[id+1]; lo < hi {
			f(id/c.sp.half, id%c.sp.half, c.perm[lo:hi])
		}
	}
	for k, r := range c.sparse {
		f(k[0], k[1], c.perm[r[0]:r[1]])
	}
}

// offFabric returns the changes of switch sw of stage stage, a switch off the fabric (one of the
// fabric finds its changes through off).
func (c *switchChanges[I]) offFabric(stage, sw int) []I {
	r := c.sparse[[2]int{stage, sw}]
	return c.perm[r[0]:r[1]]
}
