package emulator

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Epoch is a reconfiguration that a schedule implies, independent of timing.
//
// On a Beneš fabric it is a run of consecutive users of one switch (in schedule order) that need
// the same state, when that state differs from the switch's previous one (every switch starts in
// Bar, so a first run that needs Bar is no epoch). On a crossbar it is a transmitter re-pointing
// to a new receiver (every transmitter points nowhere at t = 0).
type Epoch struct {
	// Stage and Switch name the Beneš switch; on a crossbar Stage is −1 and Switch is the
	// transmitter's port.
	Stage, Switch int
	// From and To are the switch states (Beneš only).
	From, To benes.State
	// Dst is the receiver a crossbar transmitter points to (−1 on Beneš).
	Dst int
}

// Round is one barrier round in execution order.
type Round struct {
	Group int
	// Circuits are the round's circuits in schedule order.
	Circuits []int
	// Changes are the epochs (switch changes) that all happen together at the round's start.
	Changes []int
	// PlannedDuration is the minimum length of the round's transmission phase (0 if none given).
	PlannedDuration float64
}

// Order is the dependency order of a schedule on its fabric, derived once and walked by the
// emulator in virtual time and by the live runner in real time, so that prediction and
// measurement differ only in their timings.
//
// Partial mode: a circuit may transmit once each of its predecessors (the previous circuit, in
// schedule order, on its transmitter, its receiver and every switch lane of its path) has
// completed and each epoch it waits on has been reconfigured; an epoch may be reconfigured once
// every circuit it requires has completed (every user of the switch's previous run: its previous
// epoch, or its first users in Bar; on a crossbar the transmitter's and the receiver's previous
// circuits). Every dependency points to an
// earlier circuit, so the order is acyclic.
//
// Barrier mode: rounds run one after another; a round's epochs are reconfigured together at its
// start, and all its circuits wait for them.
type Order struct {
	mode   schedules.Mode
	fabric schedules.FabricKind
	n      int
	// eps holds, on a crossbar, two int32s per epoch: the transmitter and its new receiver (8
	// bytes an epoch instead of an Epoch's 40 keeps the hot loop in cache). A Beneš order keeps
	// its epochs in rc in barrier mode and in use (each epoch's change) in partial mode.
	// epochs, the exported form, is built only for an Order handed out by NewOrder.
	eps    []int32
	epochs []Epoch
	// rc holds the epochs instead of eps in barrier mode on Beneš: by round, 8 bytes each in
	// blocks that are never copied, and handed as they are to the timeline by round
	// (schedules.RoundTimeline) that RunChecked checks. Such a schedule may have tens of
	// millions of changes.
	rc *schedules.RoundChanges

	nc int // circuits
	// res is the number of resources a circuit holds: its transmitter, its receiver and, on
	// Beneš, the input lanes of its hops after the first (the first is the transmitter's wire).
	res int
	// Partial mode, what the walk reads per circuit: next holds res entries per circuit, the
	// next users of its resources, each once, at the front of the row, and after them nc
	// (none), so that a completion visits its successors without a list built by inverting the
	// predecessors. One more row (circuit nc) is scratch for the pass that fills them. pend is
	// how many distinct predecessors and epochs it waits for.
	next, pend []int32
	// Partial mode, what a completion counts down: stride slots per circuit, each an epoch
	// that requires it or for none the sentinel epoch NumEpochs+j of slot j (one per slot, so
	// that one completion's updates of sentinels do not wait for each other), so that the list
	// has no ends to find and no test. On Beneš a slot is the circuit's hop on one switch, and
	// its epoch the one that follows the hop's run (consecutive users of the switch in one
	// state); on a crossbar the slots are the next re-pointings of its transmitter and its
	// receiver.
	stride int
	trigEp []int32
	// Per circuit, in CSR form: predecessors, epochs waited on, successors (circuits whose
	// predecessor it is) and triggers (epochs whose requirement it is). The walk reads none of
	// them (it reads trigEp instead of the triggers); all but the waits are built only for an
	// Order handed out by NewOrder.
	predIdx, pred  []int32
	waitIdx, wait  []int32
	succIdx, succ  []int32
	trigIdx, trig  []int32
	txPred, rxPred []int32
	// Per epoch: how many circuits it requires, and the circuits waiting on it: use holds two
	// int32s per epoch, where its users start in user and, on Beneš, its switch change (dense
	// switch id << 1 | new state), then the end of the last one's users. Settled reads both
	// (the change for the timeline) in one cache line where the epoch's users are looked up.
	reqCount  []int32
	use, user []int32
	rounds    []Round // exported form of rds, built for NewOrder
	// Barrier mode: the rounds, one more record than there are for the last ranges' ends; with
	// groups out of schedule order, the circuits in round order (rcirc) and each one's round.
	rds            []roundRec
	rcirc, roundOf []int32
	alloc          *scratch // where the lists above live; nil for the heap
}

// ints returns n int32s for the order's own lists (contents undefined).
func (o *Order) ints(n int) []int32 {
	if o.alloc != nil {
		return o.alloc.ints(n)
	}
	return make([]int32, n)
}

// own returns x as the order's own list: x itself when the order lives in the scratch, else an
// exact-size copy on the heap.
func (o *Order) own(x []int32) []int32 {
	if o.alloc != nil {
		return x
	}
	return append(make([]int32, 0, len(x)), x...)
}

// zeros returns n zero int32s for the order's own lists.
func (o *Order) zeros(n int) []int32 {
	b := o.ints(n)
	clear(b)
	return b
}

// NewOrder checks that every circuit of s fits its fabric (ports in range, paths physical, no
// path on a crossbar; in barrier mode, no switch asked for two states in one round) and derives
// the dependency order.
func NewOrder(s *schedules.Schedule) (*Order, error) {
	sc := getScratch()
	defer sc.release()
	return newOrder(s, sc, false, false)
}

// newOrder derives the order with temporaries from sc; with pooled, the order's own lists come
// from sc too, and the order must not be used after sc is released. With pathsChecked the paths
// are taken as checked already (Config.PathsChecked): everything else is still checked.
func newOrder(s *schedules.Schedule, sc *scratch, pooled, pathsChecked bool) (*Order, error) {
	if s == nil {
		return nil, fmt.Errorf("emulator: no schedule")
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("emulator: schedule %q: %w", s.Algorithm, err)
	}
	f, err := s.BenesFabric()
	if err != nil {
		return nil, fmt.Errorf("emulator: schedule %q: %w", s.Algorithm, err)
	}
	o := &Order{mode: s.Mode, fabric: s.Fabric, n: s.N}
	if pooled {
		o.alloc = sc
		// A bound on what the lists below and the walk take in this mode (partial mode on
		// Beneš: 8 int32s per hop, 5 in newRunTracker, 1 in benesPartial's next and 2 for the
		// walk's epoch countdowns and changes; barrier mode: nothing per circuit when its groups
		// are in order), so that a first run on a large schedule allocates its scratch once.
		nc, need := len(s.Circuits), 2*s.N+64
		switch {
		case s.Mode == schedules.Barrier:
			if f != nil {
				need += 3 * f.NumSwitches()
			}
		case f != nil:
			need += 8*nc*f.Stages() + 4*nc + 2*f.NumLanes()
		default:
			need += 12 * nc
		}
		sc.reserve(need)
	}
	var rt *runTracker
	if f != nil && s.Mode == schedules.Partial {
		rt = o.newRunTracker(f, len(s.Circuits), sc)
	}
	if err := o.buildPreds(s, f, rt, sc, pathsChecked); err != nil {
		return nil, err
	}
	if s.Mode == schedules.Barrier {
		if err := o.buildRounds(s, f, sc); err != nil {
			return nil, err
		}
	} else {
		o.buildEpochs(s, f, rt, sc)
	}
	if !pooled {
		o.invert(len(s.Circuits))
	}
	// Epochs() has always been nil for a barrier or crossbar order without epochs, and empty
	// but not nil for a Beneš partial one; JSON written from it keeps that difference.
	if !pooled && (o.numEpochs() > 0 || s.Mode == schedules.Partial && f != nil) {
		o.epochs = make([]Epoch, o.numEpochs())
		for i := range o.epochs {
			o.epochs[i] = o.Epoch(i)
		}
	}
	return o, nil
}

// numEpochs is the number of epochs.
func (o *Order) numEpochs() int {
	switch {
	case o.rc != nil:
		return o.rc.Len()
	case o.fabric == schedules.Benes && o.mode == schedules.Partial:
		return max(len(o.use)-1, 0) / 2
	}
	return len(o.eps) / 2
}

// addEpoch records a crossbar epoch: the transmitter and its new receiver.
func (o *Order) addEpoch(who, to int32) {
	if len(o.eps)+2 > cap(o.eps) {
		// Doubling, not append's growth by a quarter for large slices: a barrier schedule's
		// millions of epochs then allocate twice their size in all, not five times.
		o.eps = slices.Grow(o.eps, max(cap(o.eps), 64))
	}
	o.eps = append(o.eps, who, to)
}

// NumEpochs is the number of epochs (reconfigurations) the schedule implies.
func (o *Order) NumEpochs() int { return o.numEpochs() }

// Epoch describes epoch i (0 ≤ i < NumEpochs): the switch and the state it changes to, or on a
// crossbar the transmitter and the receiver it re-points to. Beneš switches have two states, so
// an epoch's From is the other one.
func (o *Order) Epoch(i int) Epoch {
	if o.rc != nil {
		_, stage, sw, to := o.rc.At(i)
		return Epoch{Stage: stage, Switch: sw, From: to ^ 1, To: to, Dst: -1}
	}
	if o.fabric == schedules.Crossbar {
		return Epoch{Stage: -1, Switch: int(o.eps[2*i]), Dst: int(o.eps[2*i+1])}
	}
	v := o.use[2*i+1] // dense switch id << 1 | new state
	who, to := int(v>>1), v&1
	half := o.n / 2
	return Epoch{Stage: who / half, Switch: who % half, From: benes.State(to ^ 1), To: benes.State(to), Dst: -1}
}

// buildPreds checks each circuit and finds, in partial mode, what it waits for on its
// resources and, with rt (partial mode on Beneš), the switches' runs: one pass over the paths,
// each read while it is in cache, checked hop by hop as it is read (benesPartial on Beneš). The
// predecessor lists (exported) are built only for an Order handed out by NewOrder, by the
// general pass below; a barrier walk needs none of this.
func (o *Order) buildPreds(s *schedules.Schedule, f *benes.Fabric, rt *runTracker, sc *scratch, pathsChecked bool) error {
	var hb [benes.MaxStages]benes.Traversal // room for a path (hops)
	nc := len(s.Circuits)
	o.nc = nc
	lanes, stages := 0, 0
	var wr wiring
	if f != nil {
		lanes, stages = f.NumLanes(), f.Stages()
		wr = newWiring(f)
	}
	o.res = 2 + max(stages-1, 0)
	exported, partial := o.alloc == nil, o.mode == schedules.Partial
	if !exported && !partial {
		for i := range s.Circuits {
			if err := checkCircuit(s, f, wr, i, pathsChecked, hb[:0]); err != nil {
				return err
			}
		}
		return nil
	}
	if rt != nil {
		if err := o.benesPartial(s, f, wr, rt, sc, pathsChecked); err != nil || !exported {
			return err
		}
		// The walk's lists are built; the pass below adds the exported ones (and finds the
		// same previous users of the ports again).
		partial = false
	}
	// Resources: transmitters, receivers and switch input lanes. A valid path's other lanes are
	// the same wires under other names: the input lane of stage 0 is the transmitter, the output
	// lane of stage s < last feeds exactly one input lane of stage s+1, and the last stage's
	// output lane is the receiver. last holds each resource's latest user plus one.
	last := sc.ints(2*s.N + lanes)
	clear(last)
	res := o.res
	txPred, rxPred := o.ints(nc), o.ints(nc)
	o.txPred, o.rxPred = txPred, rxPred
	var next, pend []int32
	if partial {
		next, pend = o.ints((nc+1)*res), o.ints(nc)
		fillInt32(next, int32(nc))
		o.next, o.pend = next, pend
	}
	stamp := sc.ints(nc) // stamp[p] = c+1: p is already linked to c
	clear(stamp)
	if exported {
		o.predIdx = make([]int32, 1, nc+1)
		if f != nil {
			// A circuit has at most one predecessor per resource. (On a crossbar the list
			// starts nil, as it always has: an order without predecessors returns nil lists.)
			o.pred = make([]int32, 0, nc*(stages+1))
		}
	}
	var r [2 + 2*20]int32 // every resource of one circuit (Beneš paths have ≤ 2·20−1 hops)
	half, laneBase := s.N/2, 2*s.N
	for i := range s.Circuits {
		c := &s.Circuits[i]
		p := hops(c, hb[:0])
		if uint(c.Src) >= uint(s.N) || uint(c.Dst) >= uint(s.N) || c.Bytes < 0 || c.Group < 0 || len(p) != stages {
			return circuitError(s, f, wr, i, pathsChecked)
		}
		ci := int32(i)
		r[0], r[1] = int32(c.Src), int32(s.N+c.Dst)
		nr := 2
		esw, ein := c.Src>>1, c.Src&1 // where the wiring leads
		for h := range p {
			t := &p[h]
			stage, tsw, in := t.Stage, t.Switch, t.In
			if !pathsChecked {
				var ok bool
				if esw, ein, ok = wr.step(h, t, esw, ein, c.Dst); !ok {
					return circuitError(s, f, wr, i, pathsChecked)
				}
			}
			sw := stage*half + tsw // Fabric.SwitchID
			if h > 0 {
				r[nr] = int32(laneBase + 2*sw + in) // Fabric.LaneID, after the ports
				nr++
			}
		}
		n := int32(0)
		txPred[i], rxPred[i] = last[r[0]]-1, last[r[1]]-1
		for k, x := range r[:nr] {
			q := last[x]
			last[x] = ci + 1
			if q == 0 {
				continue
			}
			if stamp[q-1] == ci+1 {
				continue // linked already through another resource
			}
			stamp[q-1] = ci + 1
			n++
			if partial {
				next[int(q-1)*res+k] = ci
			}
			if exported {
				o.pred = append(o.pred, q-1)
			}
		}
		if partial {
			pend[i] = n
		}
		if exported {
			o.predIdx = append(o.predIdx, int32(len(o.pred)))
		}
	}
	if partial {
		compactRows(next[:nc*res], res, int32(nc))
	}
	return nil
}

// benesPartial is buildPreds for Run in partial mode on Beneš, the emulator's hot case: the
// same pass without the exported lists and the branches for other modes, so that the loop's
// values fit in registers (the general loop spills most of them on every hop). Circuit by
// circuit it decodes the path into the circuit's row of hw, links the circuit to the previous
// users of its resources, and follows the switches of its hops (runs), each while the row is
// in the first-level cache; runPass then resolves what only later hops tell.
//
// Its tests are written without branches where the outcome is data (whether a lane's previous
// user is linked already, whether a switch changes state): with random paths either way is
// about as likely, so a branch would be mispredicted on every other hop. A resource without a
// previous user names circuit nc, whose row of next and link record are scratch, so that "no
// predecessor" takes the same stores as any other.
func (o *Order) benesPartial(s *schedules.Schedule, f *benes.Fabric, wr wiring, rt *runTracker, sc *scratch, pathsChecked bool) error {
	nc, stages, res := len(s.Circuits), f.Stages(), o.res
	none := int32(nc)
	// Each resource's latest user (none: nobody yet): receivers from N, switch input lanes
	// from 2N (the transmitters are the first stage's input lanes, see link).
	last := sc.ints(2*s.N + f.NumLanes())
	fillInt32(last, none)
	txPred, rxPred := o.ints(nc), o.ints(nc)
	next, pend := o.ints((nc+1)*res), o.ints(nc)
	fillInt32(next, none)
	o.txPred, o.rxPred, o.next, o.pend = txPred, rxPred, next, pend
	// Circuit 0 has no predecessor, so a zero stamp links nobody twice.
	lt := &linker{last: last, lk: sc.linkRecs(nc + 1), next: next, txPred: txPred, rxPred: rxPred,
		none: none, laneBase: int32(2 * s.N)}
	for q := range lt.lk {
		lt.lk[q] = linkRec{pos: int32(q * res)}
	}
	k, half := wr.k, s.N/2
	// The hops of every circuit, as switch id << 2 | input lane << 1 | state: runs replaces
	// each with the hop's run, runPass that with the hop's trigger slot.
	hw := rt.runOf
	for i := range s.Circuits {
		c := &s.Circuits[i]
		if uint(c.Src) >= uint(s.N) || uint(c.Dst) >= uint(s.N) || c.Bytes < 0 || c.Group < 0 {
			return circuitError(s, f, wr, i, pathsChecked)
		}
		row := hw[i*stages : (i+1)*stages]
		if psrc, pdst, ch, pk, ok := c.Path.Compact(); ok {
			// A compact path is physical by construction (benes.Path keeps every physical
			// path compact): it fits when it is this fabric's and joins the circuit's ports.
			if pk != k || !pathsChecked && (psrc != c.Src || pdst != c.Dst) {
				return circuitError(s, f, wr, i, pathsChecked)
			}
			compactHops(k, half, psrc, pdst, int(ch), row)
		} else if err := rawHops(s, f, wr, i, pathsChecked, row); err != nil {
			return err
		}
		// Every hop waits on the epoch that starts its run but those in a switch's first run
		// (runPass takes those off).
		pend[i] = lt.link(int32(i), s.N+c.Dst, row) + int32(stages)
		rt.runs(row)
	}
	lt.ends(res)
	o.runPass(rt, hw, stages, half, pend)
	return nil
}

// compactRows moves the successors in each row of next (res slots, "none" being any value from
// none up) to its front, in order, and sets the rest to none, so that a completion stops at its
// first none: it visits only its successors, and its loop ends where the predictor can guess.
func compactRows(next []int32, res int, none int32) {
	for c := 0; c+res <= len(next); c += res {
		row := next[c : c+res]
		k := 0
		for _, x := range row {
			row[k] = x
			k += int(b2i(x < none))
		}
		for j := k; j < len(row); j++ {
			row[j] = none
		}
	}
}

// linker links each circuit to the previous users of its resources (benesPartial); a method
// of its own so that its loop's values stay in registers.
type linker struct {
	last           []int32 // each resource's latest user (none: nobody yet)
	lk             []linkRec
	next           []int32
	txPred, rxPred []int32
	none, laneBase int32 // laneBase: the first switch lane's resource, after the ports
}

// link links circuit ci, with the receiver resource rx and the hops of row (switch id << 2 |
// input lane << 1 | state), and returns how many distinct predecessors it has. A
// predecessor that holds several of them links to it once (its stamp), appended to its row of
// next (at its pos). Every resource stores ci at the predecessor's pos and advances it only for
// a new link, so that the store's address does not wait for the test: a duplicate leaves ci
// in the slot after the row's successors, which the next link overwrites or ends clears.
func (lt *linker) link(ci int32, rx int, row []int32) int32 {
	last, lk, next := lt.last, lt.lk, lt.next
	none, laneBase := lt.none, lt.laneBase
	lk[none].stamp = ci // nobody to link: as if linked already
	// The receiver first, then the hops' input lanes: the first hop's is the transmitter's
	// wire (its lane id is the transmitter's port), so that the loop takes it too.
	q := last[laneBase+row[0]>>1]
	lt.txPred[ci] = sel(b2i(q != none), q, -1)
	q = last[rx]
	lt.rxPred[ci] = sel(b2i(q != none), q, -1)
	l := &lk[q]
	n := b2i(l.stamp != ci)
	next[l.pos], l.stamp, l.pos = ci, ci, l.pos+n
	last[rx] = ci
	for _, v := range row {
		x := laneBase + v>>1 // Fabric.LaneID of the hop's input lane, after the ports
		q := last[x]
		l := &lk[q]
		d := b2i(l.stamp != ci)
		next[l.pos], l.stamp, l.pos = ci, ci, l.pos+d
		n += d
		last[x] = ci
	}
	return n
}

// ends ends each circuit's row of next (res slots) after its successors with none, over what
// a duplicate link may have left there.
func (lt *linker) ends(res int) {
	for q, l := range lt.lk[:lt.none] {
		if int(l.pos) < (q+1)*res {
			lt.next[l.pos] = lt.none
		}
	}
}

// linkRec is what benesPartial keeps per circuit while it links successors: the last circuit
// linked to it (its stamp) and where the next one goes in next (its row's start plus how many
// it has).
type linkRec struct{ stamp, pos int32 }

// runRec is one run of a switch (from runs to runPass).
type runRec struct {
	// next is the run that follows it (−1 while none does); runPass makes it the trigger slot
	// of the run's hops: the epoch that follows, or a sentinel where none does.
	next int32
	// users is how many circuits the run has; runPass makes it where the next one goes in
	// Order.user.
	users int32
	// hop is the run's first hop (switch id << 2 | lane | state; for a switch's first run, the
	// switch in Bar).
	hop int32
	// req is what the epoch that starts the run requires: the users of the switch's run
	// before it.
	req int32
}

// runs follows the switches of one circuit's hops (row: switch id << 2 | lane | state), the
// circuits taken in schedule order, and replaces each hop with its run. Each switch starts in
// a run of its own in Bar (runs nh to nh + the number of switches, without users until it has
// one); every other run starts with a change of state, so that it is an epoch, numbered as the
// epochs are (run e is epoch e), and a switch's first user needs no test of its own. A
// switch's current run is updated in place, and when it ends the new run takes its users as
// the new epoch's requirement. Its few values stay in registers: the rest is read from the
// runs later (runPass).
//
// Without branches on the data: whether a switch changes state is as likely as not on random
// paths (the ifs below compile to conditional moves). The record of a new run is written
// whether or not there is one (in the slot the next would take), and counted only when there
// is.
func (rt *runTracker) runs(row []int32) {
	rt.nRun = runs(row, rt.sws, rt.rs, rt.nRun)
}

// runs is runTracker.runs without the tracker: a function of its values, so that none of its
// registers holds the tracker during the loop. It returns the new count of runs.
func runs(row, sws []int32, rs []runRec, nRun int32) int32 {
	for h, v := range row {
		w := &sws[v>>2]
		cur := *w
		x := &rs[cur]
		chg := (x.hop ^ v) & 1 // the state changes: a new run, an epoch
		next, run := int32(-1), cur
		if chg != 0 {
			next, run = nRun, nRun
		}
		x.next = next
		rs[nRun] = runRec{next: -1, users: 1, hop: v, req: x.users}
		x.users += chg ^ 1
		nRun += chg
		*w = run
		row[h] = run
	}
	return nRun
}

// runPass completes what runs found: the order's epochs and their users (in circuit order),
// the hops that wait on no epoch (taken off pend) and, in hw, each hop's trigger slot: the
// epoch that follows its run, or the hop's sentinel epoch when none does. For NewOrder it also
// lists each circuit's waits.
func (o *Order) runPass(rt *runTracker, hw []int32, stages int, half int, pend []int32) {
	nh := int32(len(hw))
	if o.alloc == nil {
		o.waitLists(hw, stages, nh)
	}
	nu := rt.epochs(bits.TrailingZeros(uint(half)), nh)
	o.reqCount, o.use = rt.req, o.own(rt.cnt)
	user := rt.fill[:len(hw)]
	place(hw, stages, user, rt.rs)
	// The users of the switches' first runs, at the top of user: the hops that wait on none.
	for _, c := range user[nu:] {
		pend[c]--
	}
	o.user = o.own(user[:nu])
}

// epochs reads the epochs from the runs (run e is epoch e, see runs). It sets req and cnt (the
// users' starts with each epoch's change, Order.use) to the order's lists, makes the trigger slot of each switch's last
// run the stage's sentinel (a switch's stage is its dense id >> shift), sets each run's users
// to where the first goes in the users' list (nh long), and returns how many wait on epochs.
// The users of a switch's first run (no epoch) go to the top of the list, down from its end,
// out of the way of the epochs' users.
func (rt *runTracker) epochs(shift int, nh int32) int32 {
	ne, rs := rt.nRun, rt.rs
	for sw, r := range rt.sws {
		rs[r].next = ne + int32(sw>>shift)
	}
	top := nh
	for r := range rs[nh:] {
		x := &rs[int(nh)+r]
		top -= x.users
		x.users = top
	}
	req, use, pos := rt.req[:ne], rt.cnt[:2*ne+1], int32(0)
	for e := range rs[:ne] {
		x := &rs[e]
		u := use[2*e : 2*e+2]
		req[e] = x.req
		u[0], u[1], x.users, pos = pos, x.hop>>2<<1|x.hop&1, pos, pos+x.users
	}
	use[2*ne] = pos
	rt.req, rt.cnt = req, use
	return pos
}

// place replaces each hop of hw (its run in rs) with its trigger slot and lists each circuit
// (of stages hops) in user where its run's next user goes. A function of its values (no
// tracker in a register), and not inlined: in its caller the loop's values would share the
// registers with the caller's.
//
//go:noinline
func place(hw []int32, stages int, user []int32, rs []runRec) {
	for ci := int32(0); len(hw) >= stages; ci++ {
		row := hw[:stages]
		hw = hw[stages:]
		for h, r := range row {
			x := &rs[r]
			row[h] = x.next
			p := x.users
			user[p] = ci
			x.users = p + 1
		}
	}
}

// waitLists lists each circuit's waits (the exported Waits) from the runs of its hops in hw,
// hop by hop: the epochs that start them (run e is epoch e, those from nh on are the switches'
// first runs, see runs).
func (o *Order) waitLists(hw []int32, stages int, nh int32) {
	nc := len(hw) / max(stages, 1)
	o.waitIdx = o.zeros(nc + 1)
	o.wait = make([]int32, 0, len(hw))
	for c := range nc {
		for _, r := range hw[c*stages : (c+1)*stages] {
			if r < nh {
				o.wait = append(o.wait, r)
			}
		}
		o.waitIdx[c+1] = int32(len(o.wait))
	}
	o.wait = slices.Clip(o.wait)
}

// circuitError is checkCircuit's error for a circuit that the pass over the paths found does
// not fit (the pass checks with fewer instructions; checkCircuit says why, in the order it
// always has: ports, size, group, path).
func circuitError(s *schedules.Schedule, f *benes.Fabric, wr wiring, i int, pathsChecked bool) error {
	var hb [benes.MaxStages]benes.Traversal // room for a path (hops)
	if err := checkCircuit(s, f, wr, i, pathsChecked, hb[:0]); err != nil {
		return err
	}
	return fmt.Errorf("emulator: internal error: circuit %d: the pass over the paths and checkCircuit disagree", i)
}

// runTracker is what the order's pass over the paths needs to follow each switch's runs:
// maximal sequences of consecutive users in one state. A run whose state differs from the
// switch's previous one is an epoch (every switch starts in Bar, so a first run in Bar is not).
type runTracker struct {
	// sws is each switch's current run: all that a hop reads per switch besides the run. A
	// few kilobytes: the per-hop work stays in the first-level cache.
	sws []int32
	// rs is per run: from 0 the epochs' (see runs), from nh (the hops) each switch's first, in
	// Bar.
	rs []runRec
	// How many circuits each epoch requires, and where each one's users start with its change
	// (Order.use); bounds, one epoch a hop.
	req, cnt []int32
	fill     []int32 // runPass's users, one a hop at most
	runOf    []int32 // per circuit and hop, in order: first the hop, then its run, then its trigger slot
	nRun     int32   // runs so far
}

// newRunTracker prepares a run tracker for nc circuits on f.
func (o *Order) newRunTracker(f *benes.Fabric, nc int, sc *scratch) *runTracker {
	ns, nh := f.NumSwitches(), nc*f.Stages()
	// Every hop starts at most one run and one epoch: bounds for all the lists.
	rt := &runTracker{sws: sc.ints(ns), rs: sc.runRecs(nh + ns), req: sc.ints(nh),
		cnt: sc.ints(2*nh + 1), fill: sc.ints(nh), runOf: sc.ints(nh)}
	for sw := range ns {
		rt.sws[sw] = int32(nh + sw)
		rt.rs[nh+sw] = runRec{next: -1, hop: int32(sw) << 2} // in Bar
	}
	return rt
}

// checkCircuit checks that circuit i of s fits the fabric f (nil for a crossbar; wr is its
// wiring; hb is room for its path, see hops); with pathChecked, a Beneš path only for its
// length, so that reading it stays in bounds.
func checkCircuit(s *schedules.Schedule, f *benes.Fabric, wr wiring, i int, pathChecked bool, hb []benes.Traversal) error {
	c := &s.Circuits[i]
	if c.Src < 0 || c.Src >= s.N || c.Dst < 0 || c.Dst >= s.N {
		return fmt.Errorf("emulator: circuit %d: ports (%d, %d) outside the %d-port fabric", i, c.Src, c.Dst, s.N)
	}
	if c.Bytes < 0 {
		return fmt.Errorf("emulator: circuit %d: negative size %d bytes", i, c.Bytes)
	}
	if c.Group < 0 {
		return fmt.Errorf("emulator: circuit %d: negative group %d", i, c.Group)
	}
	p := hops(c, hb)
	if f == nil {
		if len(p) != 0 {
			return fmt.Errorf("emulator: circuit %d: a crossbar circuit has no path, got %d traversals", i, len(p))
		}
	} else if pathChecked && len(p) != f.Stages() {
		return fmt.Errorf("emulator: circuit %d (%d→%d): path has %d traversals, the fabric %d stages", i, c.Src, c.Dst, len(p), f.Stages())
	} else if pathChecked && isCompact(c.Path) {
		// Checked already, and physical: benes.Path keeps every physical path compact. A hop
		// list kept as read is not physical, whatever the caller says: it is checked below.
	} else if !wr.physical(c.Src, c.Dst, p) {
		// CheckPath says why (physical accepts exactly what it accepts).
		err := f.CheckPath(c.Src, c.Dst, c.Path)
		if err == nil {
			return fmt.Errorf("emulator: internal error: circuit %d (%d→%d): the path check and benes.Fabric.CheckPath disagree", i, c.Src, c.Dst)
		}
		return fmt.Errorf("emulator: circuit %d (%d→%d): %w", i, c.Src, c.Dst, err)
	}
	return nil
}

// buildEpochs derives the partial-mode epochs, what each waits for and whom it holds up; on
// Beneš it completes what rt gathered during buildPreds.
func (o *Order) buildEpochs(s *schedules.Schedule, f *benes.Fabric, rt *runTracker, sc *scratch) {
	nc := len(s.Circuits)
	if f == nil {
		// A crossbar re-pointing requires the transmitter's and the receiver's previous circuits.
		o.waitIdx = o.zeros(nc + 1)[:1]
		var reqIdx, req []int32
		reqIdx = append(reqIdx, 0)
		dst := make([]int, s.N)
		for i := range dst {
			dst[i] = -1
		}
		for i, c := range s.Circuits {
			if dst[c.Src] != c.Dst {
				dst[c.Src] = c.Dst
				e := int32(o.numEpochs())
				o.addEpoch(int32(c.Src), int32(c.Dst))
				for _, p := range [2]int32{o.txPred[i], o.rxPred[i]} {
					if p >= 0 {
						req = append(req, p)
					}
				}
				reqIdx = append(reqIdx, int32(len(req)))
				o.reqCount = append(o.reqCount, reqIdx[e+1]-reqIdx[e])
				o.wait = append(o.wait, e)
				o.pend[i]++
			}
			o.waitIdx = append(o.waitIdx, int32(len(o.wait)))
		}
		if o.alloc == nil {
			o.trigIdx, o.trig = csrInvert(nc, reqIdx, req, o.ints)
		}
		// The walk's form: each circuit has two slots, the epochs of the next circuits on its
		// transmitter and on its receiver that re-point (a sentinel epoch if none), in
		// increasing order as Triggers lists them.
		ne := int32(o.numEpochs())
		o.stride, o.trigEp = 2, o.ints(2*nc)
		fillRows(o.trigEp, 2, ne)
		e := int32(0)
		for i := range nc {
			if o.waitIdx[i+1] == o.waitIdx[i] {
				continue
			}
			if p := o.txPred[i]; p >= 0 {
				o.trigEp[2*p] = e
			}
			if p := o.rxPred[i]; p >= 0 {
				o.trigEp[2*p+1] = e
			}
			e++
		}
		for c := range nc {
			if a, b := o.trigEp[2*c], o.trigEp[2*c+1]; a > b {
				o.trigEp[2*c], o.trigEp[2*c+1] = b, a
			}
		}
	} else {
		// A circuit counts down, for each switch on its path, the epoch that follows its run
		// there (runPass left them in place of the hops): the walk requests it when the run's
		// last user completes.
		o.reqCount = o.own(o.reqCount)
		o.stride, o.trigEp = f.Stages(), o.own(rt.runOf)
		if o.alloc == nil {
			// The exported form: a circuit triggers the epochs that follow its runs.
			ne := int32(o.numEpochs())
			o.trigIdx = o.zeros(nc + 1)[:1]
			var trig []int32
			for c := range nc {
				for _, e := range o.trigEp[c*o.stride : (c+1)*o.stride] {
					if e < ne { // not a sentinel
						trig = append(trig, e)
					}
				}
				o.trigIdx = append(o.trigIdx, int32(len(trig)))
			}
			o.trig = append(make([]int32, 0, len(trig)), trig...)
		}
		return // runPass found the users
	}
	var userIdx []int32
	userIdx, o.user = csrInvert(o.numEpochs(), o.waitIdx, o.wait, o.ints)
	// A crossbar's re-pointings are not switch changes: only the users' starts.
	o.use = o.zeros(2*len(userIdx) - 1)
	for e, lo := range userIdx {
		o.use[2*e] = lo
	}
}

// buildRounds groups circuits into barrier rounds and finds each round's switch changes. Groups
// are found by sorting, not hashing: schedulers write circuits round by round, so one pass
// usually finds them in order, and then each round is a range of circuits and needs no list.
// Epochs are numbered round by round, so each round's changes are a range of epochs too. What
// it keeps per circuit is nothing when the groups are in order, else its round and its place in
// the rounds' list (4 bytes each): a barrier schedule of millions of circuits costs the walk
// little more than the schedule itself. The exported Rounds are built for NewOrder only.
func (o *Order) buildRounds(s *schedules.Schedule, f *benes.Fabric, sc *scratch) error {
	var hb [benes.MaxStages]benes.Traversal // room for a path (hops)
	nc := len(s.Circuits)
	groups := make([]int, 0, len(s.Rounds)+16)
	sorted := true
	for i := range s.Circuits {
		g := s.Circuits[i].Group
		if i == 0 || g != groups[len(groups)-1] {
			if i > 0 && g < groups[len(groups)-1] {
				sorted = false
			}
			groups = append(groups, g)
		}
	}
	for _, rd := range s.Rounds {
		if !(rd.PlannedDuration >= 0) {
			return fmt.Errorf("emulator: round %d: planned duration %g is negative", rd.Group, rd.PlannedDuration)
		}
		groups = append(groups, rd.Group)
	}
	slices.Sort(groups)
	groups = slices.Compact(groups)
	nr := len(groups)
	o.rds = make([]roundRec, nr+1)
	for _, rd := range s.Rounds {
		k, _ := slices.BinarySearch(groups, rd.Group)
		o.rds[k].planned = max(o.rds[k].planned, rd.PlannedDuration)
	}
	// Each round's first circuit in the rounds' list (schedule order within a round): the
	// circuits themselves when the groups are in order.
	k := 0
	var roundOf []int32
	if !sorted {
		roundOf = o.ints(nc)
	}
	for i := range s.Circuits {
		g := s.Circuits[i].Group
		if sorted {
			for groups[k] != g {
				k++
			}
		} else {
			k, _ = slices.BinarySearch(groups, g)
			roundOf[i] = int32(k)
		}
		o.rds[k+1].lo++
	}
	for k := range nr {
		o.rds[k+1].lo += o.rds[k].lo
	}
	if !sorted {
		o.roundOf = roundOf
		o.rcirc = o.ints(nc)
		fill := sc.ints(nr)
		for k := range nr {
			fill[k] = o.rds[k].lo
		}
		for i, k := range roundOf {
			o.rcirc[fill[k]] = int32(i)
			fill[k]++
		}
	}
	var state, set, want []int32 // set: which round last asked for this switch, and for which state
	if f != nil {
		o.rc = schedules.NewRoundChanges(s.N)
		ns := f.NumSwitches()
		state, set, want = sc.ints(ns), sc.ints(ns), sc.ints(ns)
		clear(state)
		clear(set)
	}
	dst := sc.ints(s.N)
	for i := range dst {
		dst[i] = -1
	}
	half := s.N / 2
	for ri := range nr {
		o.rds[ri].chLo = int32(o.numEpochs())
		for j := o.rds[ri].lo; j < o.rds[ri+1].lo; j++ {
			ci := j
			if !sorted {
				ci = o.rcirc[j]
			}
			c := &s.Circuits[ci]
			if f == nil {
				if dst[c.Src] != int32(c.Dst) {
					o.addEpoch(int32(c.Src), int32(c.Dst))
					dst[c.Src] = int32(c.Dst)
				}
				continue
			}
			for _, t := range hops(c, hb[:0]) {
				sw := t.Stage*half + t.Switch // Fabric.SwitchID
				st := int32(t.State())
				if set[sw] == int32(ri+1) {
					if want[sw] != st {
						return fmt.Errorf("emulator: round %d: switch (stage %d, %d) needed both bar and cross (circuit %d)", groups[ri], t.Stage, t.Switch, ci)
					}
					continue
				}
				set[sw], want[sw] = int32(ri+1), st
				if st != state[sw] {
					if err := o.rc.Add(ri, t.Stage, t.Switch, benes.State(st)); err != nil {
						return fmt.Errorf("emulator: circuit %d: %w", ci, err)
					}
					state[sw] = st
				}
			}
		}
	}
	o.rds[nr].chLo = int32(o.numEpochs())
	if o.alloc == nil {
		o.exportRounds(groups)
	}
	return nil
}

// roundRec is one barrier round: its planned duration, and where its circuits (Order.rcirc, or
// the circuits themselves) and its changes (epochs) start; the next record's lo and chLo end
// them.
type roundRec struct {
	planned  float64
	lo, chLo int32
}

// numRounds is the number of barrier rounds (0 in partial mode).
func (o *Order) numRounds() int { return max(len(o.rds)-1, 0) }

// roundCircuit is the j-th circuit in the rounds' list.
func (o *Order) roundCircuit(j int32) int32 {
	if o.rcirc != nil {
		return o.rcirc[j]
	}
	return j
}

// exportRounds builds Rounds, and the per-circuit and per-epoch lists that are empty in barrier
// mode, for an Order handed out by NewOrder.
func (o *Order) exportRounds(groups []int) {
	nr, nc := o.numRounds(), o.nc
	o.rounds = make([]Round, nr)
	all := make([]int, nc)
	for j := range all {
		all[j] = int(o.roundCircuit(int32(j)))
	}
	for k := range o.rounds {
		r, a, b := &o.rounds[k], o.rds[k], o.rds[k+1]
		r.Group, r.PlannedDuration = groups[k], a.planned
		if b.lo > a.lo {
			r.Circuits = all[a.lo:b.lo:b.lo]
		}
		for e := a.chLo; e < b.chLo; e++ {
			r.Changes = append(r.Changes, int(e))
		}
	}
	o.use = make([]int32, 2*o.numEpochs()+1)
	o.reqCount = make([]int32, o.numEpochs())
	o.waitIdx = make([]int32, nc+1)
	o.trigIdx = make([]int32, nc+1)
}

// invert builds the successor lists from the predecessor lists.
func (o *Order) invert(nc int) {
	o.succIdx, o.succ = csrInvert(nc, o.predIdx, o.pred, o.ints)
}

// csrInvert turns "row r lists columns" into "column c lists rows", rows in increasing order;
// alloc provides the memory (contents undefined).
func csrInvert(ncols int, idx, vals []int32, alloc func(int) []int32) ([]int32, []int32) {
	outIdx := alloc(ncols + 1)
	clear(outIdx)
	for _, v := range vals {
		outIdx[v+1]++
	}
	return outIdx, csrFill(outIdx, idx, vals, alloc)
}

// csrFill is csrInvert once the columns are counted: outIdx[c+1] holds how many rows list
// column c (outIdx[0] is 0), and becomes the columns' starts. It returns the rows.
func csrFill(outIdx, idx, vals []int32, alloc func(int) []int32) []int32 {
	ncols := len(outIdx) - 1
	for i := 0; i < ncols; i++ {
		outIdx[i+1] += outIdx[i]
	}
	out := alloc(len(vals))
	fill := alloc(ncols)
	copy(fill, outIdx[:ncols])
	for r := 0; r+1 < len(idx); r++ {
		for _, v := range vals[idx[r]:idx[r+1]] {
			out[fill[v]] = int32(r)
			fill[v]++
		}
	}
	return out
}

// Len is the number of circuits.
func (o *Order) Len() int { return o.nc }

// Fabric is the fabric the schedule runs on.
func (o *Order) Fabric() schedules.FabricKind { return o.fabric }

// Mode is the schedule's execution mode.
func (o *Order) Mode() schedules.Mode { return o.mode }

// Epochs lists the reconfigurations the schedule implies (partial mode: in order of creation;
// barrier mode: round by round).
func (o *Order) Epochs() []Epoch { return o.epochs }

// Predecessors are the circuits that must complete before circuit c may transmit.
func (o *Order) Predecessors(c int) []int32 { return o.pred[o.predIdx[c]:o.predIdx[c+1]] }

// Waits are the epochs whose reconfiguration circuit c must wait for (partial mode).
func (o *Order) Waits(c int) []int32 { return o.wait[o.waitIdx[c]:o.waitIdx[c+1]] }

// Successors are the circuits that have circuit c among their predecessors.
func (o *Order) Successors(c int) []int32 { return o.succ[o.succIdx[c]:o.succIdx[c+1]] }

// Triggers are the epochs that require circuit c: each may be reconfigured once all the
// circuits it requires have completed (partial mode).
func (o *Order) Triggers(c int) []int32 { return o.trig[o.trigIdx[c]:o.trigIdx[c+1]] }

// RequireCount is the number of circuits epoch e requires (partial mode; zero for an epoch that
// may start at once).
func (o *Order) RequireCount(e int) int { return int(o.reqCount[e]) }

// Users are the circuits that wait on epoch e (partial mode).
func (o *Order) Users(e int) []int32 { return o.user[o.use[2*e]:o.use[2*e+2]] }

// Rounds are the barrier rounds in execution order (nil in partial mode).
func (o *Order) Rounds() []Round { return o.rounds }

// fillRows sets b, rows of n elements, to base, base+1, ..., base+n−1 in every row.
func fillRows(b []int32, n int, base int32) {
	if len(b) < n {
		return
	}
	for j := range n {
		b[j] = base + int32(j)
	}
	for k := n; k < len(b); k *= 2 {
		copy(b[k:], b[:k]) // doubling: memmove, not a store per element
	}
}

// fillInt32 sets every element of b to v.
func fillInt32(b []int32, v int32) {
	if len(b) == 0 {
		return
	}
	b[0] = v
	for k := 1; k < len(b); k *= 2 {
		copy(b[k:], b[:k]) // doubling: memmove, not a store per element
	}
}

// b2i is 1 for true and 0 for false, without a branch.
func b2i(b bool) int32 {
	var x int32
	if b {
		x = 1
	}
	return x
}

// compactHops writes the hops of the compact path from src to dst with choices ch on the
// fabric of 2^k ports (half = 2^(k−1) switches a stage) into row, each as its switch id << 2 |
// input lane << 1 | state. At recursion level s the path is in block b_s (b_0 = 0, b_{s+1} =
// 2·b_s + choice s) on the way in, at stage s, and in the same block on the way out, at stage
// 2k−2−s, so both hops of a level come from one step: switch stage·half + b_s·2^(k−1−s) +
// (local port >> 1), the local port being src >> s going in and dst >> s coming out.
func compactHops(k, half, src, dst, ch int, row []int32) {
	last := 2*k - 2
	row = row[:last+1]
	// In units of hops (switch id << 2): the first switch of stage s (lo; j·half4 for stage
	// j = last−s), the block's offset and 2^(k−2−s). A hop's switch << 2 | input lane << 1 is,
	// going in, the local port << 1 (the local switch is its upper bits), so the sums below
	// need no masks.
	half4 := half << 2
	lo, blk, step := 0, 0, half<<1
	in, out := src, dst // the local ports, src >> s and dst >> s
	for s, j := 0, last; s < j; s, j = s+1, j-1 {
		c := ch & 1
		row[s] = int32(lo + blk + in<<1 | (in^c)&1)
		row[j] = int32(j*half4 + blk + (out>>1)<<2 | c<<1 | (c^out)&1)
		blk += step & -c
		step >>= 1
		lo += half4
		in >>= 1
		out >>= 1
		ch >>= 1
	}
	row[k-1] = int32(lo + blk + in<<1 | (in^out)&1)
}

// rawHops is compactHops for a path kept as given (not a physical one: with pathsChecked it is
// read as it is, else it fails the check hop by hop, as circuitError then says).
func rawHops(s *schedules.Schedule, f *benes.Fabric, wr wiring, i int, pathsChecked bool, row []int32) error {
	var hb [benes.MaxStages]benes.Traversal // room for a path (hops)
	c := &s.Circuits[i]
	p := hops(c, hb[:0])
	if len(p) != f.Stages() {
		return circuitError(s, f, wr, i, pathsChecked)
	}
	half := s.N / 2
	esw, ein := c.Src>>1, c.Src&1 // where the wiring leads
	for h := range p {
		tr := &p[h]
		stage, tsw, in, out := tr.Stage, tr.Switch, tr.In, tr.Out
		// Checked hop by hop even with pathsChecked: a hop list kept as read is not a physical
		// path (benes.Path keeps every physical one compact), and its switch ids index tables.
		var ok bool
		if esw, ein, ok = wr.step(h, tr, esw, ein, c.Dst); !ok {
			return circuitError(s, f, wr, i, false)
		}
		sw := stage*half + tsw // Fabric.SwitchID
		row[h] = int32(sw)<<2 | int32(in)<<1 | int32(benes.StateOf(in, out))
	}
	return nil
}

// isCompact says p is held in its compact form (a physical path of some fabric).
func isCompact(p benes.Path) bool {
	_, _, _, _, ok := p.Compact()
	return ok
}

// sel is a if c is 1, b if c is 0, without a branch.
func sel(c, a, b int32) int32 { return b ^ (a^b)&-c }
