package emulator

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// Walker is the execution rules of an Order as a state machine, with no clock of its own: the
// emulator drives it in virtual time, the live runner in real time, so that prediction and
// measurement differ only in their timings, never in code.
//
// A driver loop:
//
//  1. Start: the circuits that may transmit at t = 0. Start them.
//  2. Whenever Pending reports a command due at or before now (and, in virtual time, before the
//     next event), Flush it: that is one reconfiguration command, every switch change it lists
//     sent together. Send it; when it has settled (from start to end), report Settled.
//  3. When a circuit completes, report Completed.
//  4. Every report returns the circuits that became ready at that instant: start them.
//  5. Stop when Done. Timeline and Counts then describe the run; Summarize turns them into a
//     Result.
//
// Grouping: everything requested since the last Flush is one command. The emulator flushes when
// virtual time is about to advance past the requests (so simultaneous completions share one
// command); a live runner flushes after handling the completions it has been told of. In barrier
// mode a command is a whole round's changes, due when the previous round has ended and lasted its
// planned duration; a round without changes is a command with no epochs that settles at once
// (report Settled with start = end = its request time).
//
// Times are seconds from the start of the run. Slices returned by the walker stay valid until the
// next call that returns one (Command.Epochs for the walker's lifetime). A Walker is not safe for
// concurrent use.
type Walker struct {
	o *Order
	c []walkCirc // partial mode
	// epPend counts down, per epoch, the circuits it still requires; then come Order.stride
	// sentinels (see Order.trigEp), which count down without end. (Apart from the epochs' lists
	// of users, Order.use, which only Settled reads: each loop's records are then half as
	// large, and twice as many of them fit in the cache.)
	epPend []int32
	// chg holds, in partial mode, the switch change (Order.use) of each epoch sent, in the
	// order of cmdEps: Settled copies it from where it looks up the epoch's users, so that the
	// timeline reads the changes in order rather than each epoch's record again (a cache miss
	// each, a tenth of an emulation's time at 128 ports). On a crossbar (no switch changes) it
	// is copied all the same, so that Settled needs no test for it, and never read.
	chg     []int32
	gbuf    *[gatherMax + gatherRun]int32 // Settled's list of a command's users (gather)
	gmax    int                           // where that list is full: gatherMax (less in a test)
	cmds    []walkCmd
	cmdEps  []int32 // the epochs of every command, in order of Flush
	pendLo  int32   // cmdEps[pendLo:] is the command being gathered (partial mode)
	reqT    float64 // when it was requested
	ready   []int32
	started bool
	// small says the walk is small enough for a branch predictor to learn its outcomes when it
	// is walked again and again (benchmarks, a sweep over timing models): Completed then
	// counts its epochs down with a branch, cheaper than the stores that replace it above
	// smallWalk trigger slots, where about every other countdown would be mispredicted.
	small    bool
	done     int // circuits completed
	events   int
	reconfig int // commands with at least one change

	// Barrier mode: the round under way (−1 before Start), how many of its circuits are still
	// transmitting, the earliest it may end, whether it has started transmitting (its command
	// settled), and whether the next round is due.
	round    int
	left     int
	roundEnd float64
	live     bool
	due      bool
	// Barrier mode keeps per circuit only its end and whether it has completed: a round's
	// circuits share their ready, reconfiguration and start times (per round, in rw), unless a
	// driver reports its own start times (tx, made on the first Started).
	bend    []float64
	ownEnds bool // bend is not the scratch's
	bdone   []uint64
	btx     []float64
	rw      []roundWalk
	// tx holds, in partial mode, the start times a driver reported (Started), NaN for none: made
	// on the first Started, as a driver in virtual time reports none.
	tx []float64
}

// roundWalk is what a barrier round's circuits share: when its command was requested, when the
// reconfiguration they waited for started (the request, for a round without changes) and when it
// ended (they transmit from then).
type roundWalk struct {
	req, rcStart, end float64
}

// walkCirc is the walk's state of one circuit in partial mode, kept in one record of 32 bytes so
// that releasing or completing a circuit touches one cache line, and half as many of them as
// when the record held every time of the circuit's timeline entry.
type walkCirc struct {
	// pathRdy is the latest of the circuit's predecessors' ends and its epochs' requests; rcEnd is
	// the end of the latest-ending reconfiguration it waits on (−1 for none), and rcCmd that
	// command (−1 for none; the first to settle of those that end latest); end is when its
	// transmission ended.
	//
	// Its transmission's start is not kept: it is the instant it became ready, the latest of
	// the times its waits ended, that is max(pathRdy, rcEnd), since every command ends after it
	// was requested (drive checks the reconfiguration model for that). A driver that reports
	// its own start times (Started) has them kept apart, in Walker.tx.
	pathRdy, rcEnd, end float64
	// pending counts the predecessors and epochs it still waits for; 0 once ready (transmitting),
	// −1 once completed.
	pending, rcCmd int32
}

// walkCmd is one command: requested at req, the epochs cmdEps[lo:hi], settled over start..end.
type walkCmd struct {
	req, start, end float64
	lo, hi          int32
	settled         bool
}

// Command is one reconfiguration command: every switch change in it is sent together.
type Command struct {
	// ID names the command in Settled; commands are numbered from 0 in order of Flush.
	ID int
	// Requested is when the changes were requested (the command may not start earlier).
	Requested float64
	// Epochs are the changes, as indices into the Order (Order.Epoch describes each), in order of
	// request.
	Epochs []int32
}

// Counts are what a walk counted, for Summarize.
type Counts struct {
	// Rounds is the number of barrier rounds (0 in partial mode).
	Rounds int
	// StateChanges is the number of epochs (switch changes; on a crossbar, re-pointings).
	StateChanges int
	// ReconfigEvents is the number of commands with at least one change.
	ReconfigEvents int
	// Events is circuit completions plus single switch (or transmitter) changes settled.
	Events int
}

// smallWalk is the most trigger slots (Order.trigEp) of a walk that Completed counts down with a
// branch (Walker.small). Measured on the benchmarks' random permutations, one core: with the
// branch a walk at n = 8 (320 slots) takes 10.3 µs against 11.4 µs, an emulation at n = 16
// (1,792 slots) 81 µs against 88 µs; without it one at n = 32 (9,216 slots) 458 µs against
// 470 µs and at n = 64 2.34 ms against 2.47 ms.
const smallWalk = 4096

// NewWalker prepares a walk of o.
func NewWalker(o *Order) *Walker { return newWalker(o, nil) }

// newWalker prepares a walk of o with its memory from sc (nil: the heap).
func newWalker(o *Order, sc *scratch) *Walker {
	nc, ne := o.Len(), o.numEpochs()
	w := &Walker{o: o, round: -1, gmax: gatherMax}
	if sc != nil {
		w.cmds, w.cmdEps, w.ready = sc.cmds[:0], sc.cmdEps[:0], sc.ready[:0]
	}
	if o.mode == schedules.Barrier {
		// Command.Epochs of a barrier round is made only by Flush (the emulator's loop needs
		// just the count), so no room is reserved for it.
		if sc != nil && nc <= keepMax {
			w.bend = sc.ends(nc)
		} else {
			// Its own (a scratch would not keep one this large): a timeline by round then
			// takes it as it is.
			w.bend, w.ownEnds = make([]float64, nc), true
		}
		w.bdone = make([]uint64, (nc+63)/64)
		w.rw = make([]roundWalk, o.numRounds())
		return w
	}
	if sc != nil {
		w.c = sc.circuits(nc)
	} else {
		w.c = make([]walkCirc, nc)
	}
	// Every epoch is sent once: with room for all, Command.Epochs never moves (one more, for
	// Completed's store past the end).
	w.cmdEps = slices.Grow(w.cmdEps, ne+1)
	w.small = nc*o.stride <= smallWalk
	// Settled stores a circuit into ready before it knows whether it is ready, at most one
	// past the ready ones: room for every circuit and one.
	w.ready = slices.Grow(w.ready, nc+1)
	for i, n := range o.pend[:nc] {
		w.c[i] = walkCirc{rcEnd: -1, pending: n, rcCmd: -1}
	}
	if o.mode == schedules.Partial {
		if sc != nil {
			w.epPend = sc.ints(ne + o.stride)
		} else {
			w.epPend = make([]int32, ne+o.stride)
		}
		copy(w.epPend, o.reqCount[:ne])
		clear(w.epPend[ne:])
		// Beneš: the changes sent, in order (partialTimeline); a crossbar's re-pointings are
		// no switch changes, but Settled copies the epochs' records there all the same.
		if sc != nil {
			w.chg = sc.ints(ne)
		} else {
			w.chg = make([]int32, ne)
		}
	}
	return w
}

// keep hands the walker's growable buffers back to sc for the next walk.
func (w *Walker) keep(sc *scratch) {
	sc.cmds, sc.cmdEps, sc.ready = w.cmds[:0], w.cmdEps[:0], w.ready[:0]
}

// Order is the order being walked.
func (w *Walker) Order() *Order { return w.o }

// Start begins the walk at t = 0 and returns the circuits that may transmit at once. The epochs
// that require nothing are requested at t = 0 (see Pending).
func (w *Walker) Start() ([]int32, error) {
	if w.started {
		return nil, fmt.Errorf("emulator: walker: Start called twice")
	}
	w.started = true
	w.ready = w.ready[:0]
	if w.o.mode == schedules.Barrier {
		w.nextRound(0)
		return w.ready, nil
	}
	for ep, n := range w.epPend[:w.o.numEpochs()] {
		if n == 0 {
			w.request(int32(ep))
		}
	}
	for c := range w.o.Len() {
		if w.c[c].pending == 0 {
			w.ready = append(w.ready, int32(c))
		}
	}
	return w.ready, nil
}

// request adds epoch ep to the command being gathered.
func (w *Walker) request(ep int32) { w.cmdEps = append(w.cmdEps, ep) }

// nextRound makes barrier round r due at t, or finishes the walk after the last round.
func (w *Walker) nextRound(t float64) {
	w.round++
	w.live = false
	if w.round < w.o.numRounds() {
		w.due, w.reqT = true, t
	}
}

// Pending says whether a command is due, and when: in partial mode, the changes requested since
// the last Flush (due at once; t is when they were requested); in barrier mode, the next round,
// due when the previous one has ended and lasted its planned duration.
func (w *Walker) Pending() (t float64, ok bool) {
	if w.o.mode == schedules.Barrier {
		return w.reqT, w.due
	}
	return w.reqT, int(w.pendLo) < len(w.cmdEps)
}

// Flush returns the command that Pending announced, to send now; ok is false when none is due.
func (w *Walker) Flush() (cmd Command, ok bool) {
	id, ok := w.flush()
	if !ok {
		return Command{}, false
	}
	b := &w.cmds[id]
	if w.o.mode == schedules.Partial {
		return Command{ID: id, Requested: b.req, Epochs: w.cmdEps[b.lo:b.hi:b.hi]}, true
	}
	// A barrier round's changes are a range of epochs; the list is made here, where a driver
	// asks for it (and kept: Command.Epochs stays valid for the walker's lifetime).
	lo := len(w.cmdEps)
	for e := b.lo; e < b.hi; e++ {
		w.cmdEps = append(w.cmdEps, e)
	}
	return Command{ID: id, Requested: b.req, Epochs: w.cmdEps[lo:len(w.cmdEps):len(w.cmdEps)]}, true
}

// flush is Flush without Command.Epochs: it records the command and returns its id. Its epochs
// are cmdEps[lo:hi] in partial mode and the epochs lo to hi−1 in barrier mode.
func (w *Walker) flush() (id int, ok bool) {
	t, ok := w.Pending()
	if !ok {
		return 0, false
	}
	lo, hi := w.pendLo, int32(len(w.cmdEps))
	if w.o.mode == schedules.Barrier {
		w.due = false
		lo, hi = w.o.rds[w.round].chLo, w.o.rds[w.round+1].chLo
	} else {
		w.pendLo = hi
	}
	id = len(w.cmds)
	w.cmds = append(w.cmds, walkCmd{req: t, lo: lo, hi: hi})
	if hi > lo {
		w.reconfig++
	}
	return id, true
}

// Settled reports that command id began to change its switches at start and had them all
// settled at end, and returns the circuits that became ready at end.
func (w *Walker) Settled(id int, start, end float64) ([]int32, error) {
	if id < 0 || id >= len(w.cmds) || w.cmds[id].settled {
		return nil, fmt.Errorf("emulator: walker: command %d settled, but %d commands were sent and it is not outstanding", id, len(w.cmds))
	}
	b := &w.cmds[id]
	b.settled, b.start, b.end = true, start, end
	// Each switch's change is an event of its own; a command only makes them simultaneous.
	w.events += int(b.hi - b.lo)
	if w.o.mode == schedules.Barrier {
		w.ready = w.ready[:0]
		o := w.o
		a, z := o.rds[w.round], o.rds[w.round+1]
		rcStart := start
		if b.hi == b.lo {
			rcStart = b.req
		}
		w.rw[w.round] = roundWalk{req: b.req, rcStart: rcStart, end: end}
		w.left, w.roundEnd, w.live = int(z.lo-a.lo), end+a.planned, true
		for j := a.lo; j < z.lo; j++ {
			w.ready = append(w.ready, o.roundCircuit(j))
		}
		if w.left == 0 {
			w.nextRound(w.roundEnd)
		}
		return w.ready, nil
	}
	// Locals, so that the loop keeps them in registers across its stores. The list of ready
	// circuits is not stored back into the walker: its buffer, with room for every circuit,
	// never moves (in partial mode), and a slice stored into the heap costs a write barrier
	// while the garbage collector runs.
	cs, use, user, ready, req, cmd := w.c, w.o.use, w.o.user, w.ready[:cap(w.ready)], b.req, int32(id)
	eps := w.cmdEps[b.lo:b.hi]
	if w.small {
		if w.chg != nil {
			chg := w.chg[b.lo:b.hi]
			for i, ep := range eps {
				chg[i] = use[2*ep+1]
			}
		}
		// With branches, which the predictor learns on a small walk (see smallWalk).
		ready = ready[:0]
		for _, ep := range eps {
			for _, x := range user[use[2*ep]:use[2*ep+2]] {
				p := &cs[x]
				if req > p.pathRdy {
					p.pathRdy = req
				}
				if end > p.rcEnd {
					p.rcEnd, p.rcCmd = end, cmd
				}
				if p.pending--; p.pending == 0 {
					ready = append(ready, x)
				}
			}
		}
		return ready, nil
	}
	// The users of all the command's epochs are gathered, in order, into one list, and settle
	// visits them in one loop: an epoch has one user or a few (a run of a switch), and a loop
	// per epoch had its end mispredicted about once an epoch (a third of an emulation's
	// mispredictions at 128 ports, in cachegrind's model). An epoch of at most gatherRun users
	// is copied as gatherRun of them, and only those it has are counted, so that gathering
	// has no loop of its own; a longer one, rare, is visited where it lies, after what was
	// gathered before it, as is the rest once the list is full.
	chg := w.chg[b.lo:b.hi] // on a crossbar, a list of its own (its epochs have no switch)
	full := user[:cap(user)]
	buf := w.gather()
	k := 0
	for i := 0; ; i++ {
		d, n := gatherUsers(eps[i:], use, full, buf, chg[i:], w.gmax)
		k = settle(cs, buf[:n], ready, k, req, end, cmd)
		if i += d; i == len(eps) {
			return ready[:k], nil
		}
		// Epoch i did not fit (gatherUsers copied its change): longer than gatherRun, or
		// the list is full.
		ep := eps[i]
		k = settle(cs, user[use[2*ep]:use[2*ep+2]], ready, k, req, end, cmd)
	}
}

// gatherRun is the most users of an epoch that Settled gathers without a loop, and gatherMax
// where its list is full (Walker.gather).
const gatherRun, gatherMax = 4, 1024

// gather returns the room for Settled's list of the users of a command.
func (w *Walker) gather() *[gatherMax + gatherRun]int32 {
	if w.gbuf == nil {
		w.gbuf = new([gatherMax + gatherRun]int32)
	}
	return w.gbuf
}

// gatherUsers lists into buf, in order, the users of epochs eps (whose lists lie in full, as
// Order.use says) and copies each one's switch change into chg, up to the first epoch of more
// than gatherRun users or past most (at most gatherMax) listed (whose change it copies too); it returns how many epochs it listed and the
// list's length. An epoch is copied as gatherRun users and only those it has are counted, so
// that gathering has no loop per epoch (full's room past the users keeps the reads in
// bounds). A function of its values, as settle.
func gatherUsers(eps, use, full []int32, buf *[gatherMax + gatherRun]int32, chg []int32, most int) (done, n int) {
	chg = chg[:len(eps)]
	for i, ep := range eps {
		e := 2 * int(uint32(ep)) // an index the compiler knows is not negative
		u := use[e : e+3 : e+3]  // one bounds check for the three reads
		lo, c, hi := u[0], u[1], u[2]
		chg[i] = c
		cnt := int(hi - lo)
		if cnt > gatherRun || uint(n) > uint(most) || int(lo) > len(full)-gatherRun {
			return i, n
		}
		*(*[gatherRun]int32)(buf[n:]) = *(*[gatherRun]int32)(full[lo:])
		n += cnt
	}
	return len(eps), n
}

// settle is the users' loop of Settled on a large walk: each user xs of the command (requested
// at req, settled at end) takes the request and the end as its latest waits, and counts the
// epoch down; those that became ready are listed in ready from k on (room for every circuit
// and one), and it returns where the list ends. A function of its values, so that its registers
// hold nothing else (in Settled the loop reloaded half of them from the stack on every user).
//
// Without branches (and without max, which also orders NaNs and signed zeros, which times
// never are): a circuit often waits on several epochs of one command, and then only the first
// visit finds a later request or end. And without a branch on whether it becomes ready: the
// reconfiguration is often a circuit's last wait, so that is hard to predict. Every user is
// stored into ready and counted only when it is ready.
func settle(cs []walkCirc, xs, ready []int32, k int, req, end float64, cmd int32) int {
	for _, x := range xs {
		p := &cs[x]
		p.pathRdy = selFloat(req > p.pathRdy, req, p.pathRdy)
		later := end > p.rcEnd
		p.rcEnd = selFloat(later, end, p.rcEnd)
		c := p.rcCmd
		if later {
			c = cmd
		}
		p.rcCmd = c
		n := p.pending - 1
		p.pending = n
		ready[k] = x
		k += int(b2i(n == 0))
	}
	return k
}

// Started reports that circuit c, ready, actually began to transmit at t. A driver that starts
// circuits the instant they are ready (the emulator) need not call it: the walker takes the
// latest of the times its waits ended (in partial mode the latest end of its predecessors and of
// the commands it waited on; in barrier mode its round's command's end), which is the instant it
// reported the circuit ready when reports come in order of time.
func (w *Walker) Started(c int, t float64) error {
	if !w.transmitting(c) {
		return fmt.Errorf("emulator: walker: circuit %d started, but it is not ready", c)
	}
	if w.o.mode == schedules.Barrier {
		if w.btx == nil {
			w.btx = make([]float64, w.o.Len())
			for i := range w.btx {
				w.btx[i] = math.NaN() // its round's start
			}
		}
		w.btx[c] = t
		return nil
	}
	if w.tx == nil {
		w.tx = make([]float64, w.o.Len())
		for i := range w.tx {
			w.tx[i] = math.NaN() // the instant it became ready
		}
	}
	w.tx[c] = t
	return nil
}

// transmitting says whether circuit c is ready and has not completed.
func (w *Walker) transmitting(c int) bool {
	if c < 0 || c >= w.o.Len() {
		return false
	}
	if w.o.mode == schedules.Partial {
		return w.c[c].pending == 0
	}
	if !w.live || w.completed(c) {
		return false
	}
	if w.o.roundOf != nil {
		return int(w.o.roundOf[c]) == w.round
	}
	return w.o.rds[w.round].lo <= int32(c) && int32(c) < w.o.rds[w.round+1].lo
}

// completed says whether barrier circuit c has completed.
func (w *Walker) completed(c int) bool { return w.bdone[c>>6]&(1<<(c&63)) != 0 }

// Completed reports that circuit c finished transmitting at t and returns the circuits that
// became ready at t. In partial mode the epochs it was the last requirement of are requested at t
// (see Pending).
func (w *Walker) Completed(c int, t float64) ([]int32, error) {
	if !w.transmitting(c) {
		return nil, fmt.Errorf("emulator: walker: circuit %d completed, but it is not transmitting", c)
	}
	w.done++
	w.events++
	o := w.o
	if o.mode == schedules.Barrier {
		w.ready = w.ready[:0]
		w.bend[c] = t
		w.bdone[c>>6] |= 1 << (c & 63)
		w.roundEnd = max(w.roundEnd, t)
		if w.left--; w.left == 0 {
			w.nextRound(w.roundEnd)
		}
		return w.ready, nil
	}
	cs := w.c
	p := &cs[c]
	p.end, p.pending = t, -1
	// Its resources' next users, each once (at the first resource it takes over), then none
	// (Order.next). Branches here are cheap: the loop ends once, and a completion is seldom a
	// circuit's last wait (its reconfigurations usually are, see Settled). The list of those
	// that became ready is sorted, as the successor lists were (a Beneš row is in circuit order
	// already; a crossbar's is by resource).
	//
	// The ready list is filled by index, not by append: its buffer has room for every circuit,
	// and append's call to grow it, though never made, had the compiler keep the loop's values
	// on the stack.
	res, ready, nc, k := o.res, w.ready[:cap(w.ready)], int32(o.nc), 0 // not stored back, as in Settled
	for _, x := range o.next[c*res : c*res+res] {
		if x >= nc {
			break
		}
		q := &cs[x]
		if t > q.pathRdy { // max; a branch, as a completion is nearly always the latest
			q.pathRdy = t
		}
		if q.pending--; q.pending == 0 {
			ready[k] = x
			k++
		}
	}
	ready = ready[:k]
	if k > 1 {
		sortSmall(ready)
	}
	// The epochs that require it count down; one it was the last requirement of is requested
	// (a slot's sentinel epoch stands for none).
	pend, slots := w.epPend, o.trigEp[c*o.stride:(c+1)*o.stride]
	if w.small {
		for _, ep := range slots {
			if pend[ep]--; pend[ep] == 0 {
				w.reqT = t
				w.request(ep)
			}
		}
	} else {
		// Without a branch on whether a countdown reached zero (it does about every other
		// time): every epoch is stored into cmdEps and counted only when it is requested.
		eps, n0 := w.cmdEps[:cap(w.cmdEps)], len(w.cmdEps)
		if n := countDown(pend, slots, eps, n0); n != n0 {
			w.reqT = t
			w.cmdEps = eps[:n]
		}
	}
	return ready, nil
}

// countDown is Completed's countdown of a large walk's epochs: slots in pend, without a branch
// on whether one reached zero, every epoch stored into eps from n on and counted only when it is
// requested. It returns where the list of requests ends. A function of its values, not inlined:
// in Completed the loop reloaded four of them from the stack on every slot (1.4 M instructions
// of 80 M in an emulation at 128 ports).
//
//go:noinline
func countDown(pend, slots, eps []int32, n int) int {
	for _, ep := range slots {
		left := pend[ep] - 1
		pend[ep] = left
		eps[n] = ep
		n += int(b2i(left == 0))
	}
	return n
}

// Done says whether every circuit has completed and nothing is left to send.
func (w *Walker) Done() bool {
	_, pending := w.Pending()
	return w.started && w.done == w.o.Len() && !pending
}

// Counts is what the walk counted so far.
func (w *Walker) Counts() Counts {
	return Counts{Rounds: w.o.numRounds(), StateChanges: w.o.numEpochs(), ReconfigEvents: w.reconfig, Events: w.events}
}

// Timeline is the walk's timeline: every circuit's Ready, PathReady, ReconfigStart,
// TransmitStart and End (see the package comment), and on Beneš every switch change in order of
// start. Call it once the walk is Done.
func (w *Walker) Timeline() (*schedules.Timeline, error) {
	if err := w.finished(); err != nil {
		return nil, err
	}
	if w.o.mode == schedules.Barrier {
		// One definition of a barrier timeline: the one by round, expanded.
		rt, err := w.roundTimeline()
		if err != nil {
			return nil, err
		}
		return rt.Expand(), nil
	}
	return w.partialTimeline(nil, nil), nil
}

// finished says why the walk is not over, or nil when it is.
func (w *Walker) finished() error {
	if !w.Done() {
		for c := range w.o.Len() {
			if w.o.mode == schedules.Barrier && !w.completed(c) || w.o.mode == schedules.Partial && w.c[c].pending != -1 {
				return fmt.Errorf("emulator: walker: circuit %d has not completed (%d of %d have)", c, w.done, w.o.Len())
			}
		}
		return fmt.Errorf("emulator: walker: a command is still to be sent")
	}
	for id := range w.cmds {
		if !w.cmds[id].settled {
			return fmt.Errorf("emulator: walker: command %d has not settled", id)
		}
	}
	return nil
}

// timing writes circuit c's entry of the timeline in partial mode into ct (the walk must be
// over): what Timeline lists, and what a result-only run summarises without building the list.
// Barrier mode has eachBarrierTiming.
func (w *Walker) timing(c int, ct *schedules.CircuitTiming) {
	cs := w.c
	p := &cs[c]
	ct.Circuit, ct.PathReady, ct.End = c, p.pathRdy, p.end
	ct.TransmitStart = max(p.pathRdy, p.rcEnd)
	if w.tx != nil && !math.IsNaN(w.tx[c]) {
		ct.TransmitStart = w.tx[c]
	}
	ct.Ready = 0
	if q := w.o.txPred[c]; q >= 0 {
		ct.Ready = cs[q].end
	}
	if q := w.o.rxPred[c]; q >= 0 {
		ct.Ready = max(ct.Ready, cs[q].end)
	}
	// A reconfiguration it waited for is one still under way when its path was free.
	ct.ReconfigStart = ct.TransmitStart
	if p.rcEnd > ct.PathReady {
		ct.ReconfigStart = w.cmds[p.rcCmd].start
	}
}

// partialTimeline is the walk's timeline in partial mode; with r not nil it also adds each
// circuit's entry to r (for schedule s) as it is made, in circuit order as Summarize does,
// while the entry is in cache.
func (w *Walker) partialTimeline(s *schedules.Schedule, r *summary) *schedules.Timeline {
	o := w.o
	cmds := w.cmds
	tl := &schedules.Timeline{Circuits: make([]schedules.CircuitTiming, o.Len()), SwitchChanges: []schedules.SwitchChange{}}
	for c := range tl.Circuits {
		ct := &tl.Circuits[c]
		w.timing(c, ct)
		if r != nil {
			r.add(s, c, ct)
		}
	}
	if o.fabric == schedules.Benes {
		// Every epoch is sent exactly once, and commands start in non-decreasing time, so
		// listing them in order sorts the changes by start; within one command they are in
		// order of request. Commands' epochs lie in cmdEps one after another, in order, and
		// chg holds their changes in the same order.
		out := make([]schedules.SwitchChange, len(w.cmdEps))
		shift := uint(bits.TrailingZeros(uint(o.n/2))) & 31 // a switch id is stage·(n/2) + switch
		mask := int32(o.n/2 - 1)
		chg := w.chg
		for i := range cmds {
			b := &cmds[i]
			for k := b.lo; k < b.hi; k++ {
				v := chg[k]
				sw, to := v>>1, benes.State(v&1)
				// Field by field: a composite literal is built on the stack and copied.
				x := &out[k]
				x.Stage, x.Switch = sw>>shift, sw&mask
				x.From, x.To = to^1, to
				x.Start, x.End = b.start, b.end
			}
		}
		tl.SwitchChanges = out
	}
	return tl
}

// barrierTiming is the timeline entry of barrier circuit c of round r.
func (w *Walker) barrierTiming(c int, r int32) schedules.CircuitTiming {
	rw := &w.rw[r]
	tx := rw.end
	if w.btx != nil && !math.IsNaN(w.btx[c]) {
		tx = w.btx[c]
	}
	return schedules.CircuitTiming{Circuit: c, Ready: rw.req, PathReady: rw.req,
		ReconfigStart: rw.rcStart, TransmitStart: tx, End: w.bend[c]}
}

// eachBarrierTiming calls f with every circuit's timeline entry, in circuit order (sums over
// them are then the same, bit for bit, whoever adds them up).
// (The entry is passed by value: a pointer to it would move every entry to the heap.)
func (w *Walker) eachBarrierTiming(f func(c int, ct schedules.CircuitTiming)) {
	o := w.o
	if o.roundOf != nil {
		for c, r := range o.roundOf {
			f(c, w.barrierTiming(c, r))
		}
		return
	}
	// Groups in order: round r holds the circuits rds[r].lo to rds[r+1].lo−1.
	for r := range o.numRounds() {
		for c := o.rds[r].lo; c < o.rds[r+1].lo; c++ {
			f(int(c), w.barrierTiming(int(c), int32(r)))
		}
	}
}

// roundTimeline is the walk's barrier timeline stored by round (Timeline is its expansion), in a
// quarter of the memory of the expansion. Call it once the walk is Done; it copies what it
// keeps of the scratch, so the walker's scratch may be reused.
func (w *Walker) roundTimeline() (*schedules.RoundTimeline, error) {
	if err := w.finished(); err != nil {
		return nil, err
	}
	o := w.o
	nr := o.numRounds()
	if o.mode != schedules.Barrier || len(w.cmds) != nr {
		return nil, fmt.Errorf("emulator: walker: a timeline by round needs a barrier walk with one command per round (%d commands, %d rounds)", len(w.cmds), nr)
	}
	rounds := make([]schedules.RoundTiming, nr)
	for r := range rounds {
		// Command r is round r's: a round is due only once the one before it has ended.
		b, rw := &w.cmds[r], &w.rw[r]
		rounds[r] = schedules.RoundTiming{Ready: rw.req, ReconfigStart: rw.rcStart, ChangeStart: b.start, ChangeEnd: b.end}
	}
	roundOf := make([]int32, o.Len())
	if o.roundOf != nil {
		copy(roundOf, o.roundOf)
	} else {
		for r := range nr {
			for c := o.rds[r].lo; c < o.rds[r+1].lo; c++ {
				roundOf[c] = int32(r)
			}
		}
	}
	ends := w.bend
	if !w.ownEnds {
		ends = slices.Clone(ends) // the scratch's: reused by the next walk
	}
	// Command r lists round r's epochs, numbered round by round in the order of request, so the
	// order's changes by round are the timeline's as they are (a crossbar's re-pointings are
	// not switch changes).
	rt, err := schedules.NewRoundTimeline(rounds, roundOf, ends, w.btx, o.rc)
	if err != nil {
		return nil, fmt.Errorf("emulator: internal error: %w", err)
	}
	return rt, nil
}

// sortSmall sorts the few circuits that one completion made ready (insertion sort: at most one
// per resource).
func sortSmall(a []int32) {
	for i := 1; i < len(a); i++ {
		v, j := a[i], i
		for ; j > 0 && a[j-1] > v; j-- {
			a[j] = a[j-1]
		}
		a[j] = v
	}
}

// selFloat is a if c, else b, without a branch (a conditional move on the bits).
func selFloat(c bool, a, b float64) float64 {
	ai, bi := math.Float64bits(a), math.Float64bits(b)
	if c {
		bi = ai
	}
	return math.Float64frombits(bi)
}
