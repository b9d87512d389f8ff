package holo

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/tetris-hil/tetris-hil/internal/ctlmodel"
	"github.com/tetris-hil/tetris-hil/internal/units"
)

// Errors the simulator reports; each is wrapped with the node, the time and the senders involved.
var (
	// ErrCollision: two transmissions reached one receiver at overlapping times (garbled data).
	ErrCollision = errors.New("collision")
	// ErrDuplicate: a node received the broadcast message a second time.
	ErrDuplicate = errors.New("received twice")
	// ErrUnreached: the run ended with nodes that never received the message.
	ErrUnreached = errors.New("never received")
	// ErrDarkLink: a node transmitted on a link that points nowhere.
	ErrDarkLink = errors.New("transmit on a dark link")
	// ErrStuck: a node's planned sends could not all be carried out.
	ErrStuck = errors.New("plan stuck")
)

// Send is one planned transmission by a node: configure the link to To if it does not already
// point there, wait until it has settled, then transmit. FromApp sends the message down the
// software stack (S·T_b); otherwise the FU forwards the packet it retained (S·T_f). TTL is the
// hops the packet travels: each FU takes one off. With the broadcast bit every node on the way
// delivers it and forwards it while TTL is left (both); without it, a node forwards it while
// TTL is left (forward only) and delivers it where TTL runs out (deliver only).
type Send struct {
	To int `json:"to"`
	// Also are further destinations of a multicast configuration (at most m − 1 of them).
	Also      []int `json:"also,omitempty"`
	TTL       int   `json:"ttl"`
	FromApp   bool  `json:"from_app"`
	Broadcast bool  `json:"broadcast"`
}

// SetLink is a CSet(Node, To) requested at t = 0; Also are further destinations of a multicast
// configuration.
type SetLink struct {
	Node int   `json:"node"`
	To   int   `json:"to"`
	Also []int `json:"also,omitempty"`
}

// dests is a configuration entry a_i: the nodes a packet from node i reaches, nil for a dark link.
type dests []int

func destsOf(to int, also []int) dests { return append(dests{to}, also...) }

func (d dests) equal(e dests) bool {
	if len(d) != len(e) {
		return false
	}
	for i := range d {
		if d[i] != e[i] {
			return false
		}
	}
	return true
}

// Plan is an event schedule for broadcasting node 0's message: the CSets requested at t = 0 (in
// this order at the control station) and, per node, the sends its software makes once it has the
// message (node 0 from t = 0, any other node once the header of its packet has reached its
// software), one after another. Forwarding of packets whose TTL is left is done by the FUs and is
// not listed.
type Plan struct {
	Algorithm string    `json:"algorithm"`
	Nodes     int       `json:"nodes"`
	Setup     []SetLink `json:"setup"`
	Sends     [][]Send  `json:"sends"`
	// Stages is the number of stages the planner used (0 where the notion does not apply).
	Stages int `json:"stages"`
	// Reached is, for the tree-in-ring planners, the nodes that have the message after each
	// planned stage.
	Reached []int `json:"reached_per_stage,omitempty"`
	// K is the overlap k of the tree-in-ring planners (0 for the others).
	K int `json:"k,omitempty"`
}

// Result is what one run of a plan did.
type Result struct {
	Algorithm string  `json:"algorithm"`
	Nodes     int     `json:"nodes"`
	Seconds   float64 `json:"simulated_seconds"`
	// Arrived[i] is when node i had the whole packet (its FU or NIC); Delivered[i] when it was in
	// node i's application. Node 0 is the source: both 0.
	Arrived   []float64 `json:"-"`
	Delivered []float64 `json:"-"`
	// From[i] is the node that sent node i its copy (−1 for the source).
	From []int `json:"-"`
	// ConfigChanges counts settled CSets, AppSends sends down the stack, Forwards FU
	// transmissions; Passed those of them an FU forwarded without delivering (no broadcast
	// bit, TTL left).
	ConfigChanges int `json:"config_changes"`
	AppSends      int `json:"app_sends"`
	Forwards      int `json:"forwards"`
	Passed        int `json:"passed,omitempty"`
	Stages        int `json:"stages"`
	K             int `json:"k,omitempty"`
}

type evKind uint8

const (
	evSettle evKind = iota // a node's CSet has settled
	evTxEnd                // a transmission's last byte has reached its receiver
	evHeader               // the header of a received packet has reached the node's software
)

type event struct {
	t    float64
	seq  uint64
	kind evKind
	node int
	tx   *transmission
}

// eventQueue is a binary min-heap on (t, seq), typed to avoid boxing every event.
type eventQueue []event

func (q eventQueue) less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].seq < q[j].seq
}

func (q *eventQueue) push(e event) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (q *eventQueue) pop() event {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h.less(l, small) {
			small = l
		}
		if r < len(h) && h.less(r, small) {
			small = r
		}
		if small == i {
			break
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
	*q = h
	return top
}

type packet struct {
	ttl       int
	broadcast bool
	fromApp   bool
	planned   bool // a planned send (its end advances the sender's program)
}

type transmission struct {
	from       int
	to         dests
	start, end float64
	pkt        packet
}

type node struct {
	dest, pending dests // settled destinations and those being set (nil: none)
	busy          *transmission
	fuQueue       []packet // the FU's outgoing buffer: priority over the NIC
	nicQueue      []packet
	soft          bool // the software has the message
	retained      bool // the FU holds the message
	next          int  // next planned send
	inSend        bool // planned send next is under way
	incoming      *transmission
}

type sim struct {
	p       Params
	plan    *Plan
	nodes   []node
	q       eventQueue
	seq     uint64
	now     float64
	station *ctlmodel.Station // the control station: the one controller model, one change a CSet
	res     *Result
	err     error
}

// Run executes plan on the fabric described by p and returns what happened. It fails with a
// wrapped ErrCollision, ErrDuplicate, ErrUnreached, ErrDarkLink or ErrStuck when the plan does not
// make a correct broadcast, and with ctx's error when ctx is cancelled.
func Run(ctx context.Context, p Params, plan *Plan) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := plan.check(p.Nodes, p.M()); err != nil {
		return nil, err
	}
	n := p.Nodes
	s := &sim{p: p, plan: plan, nodes: make([]node, n), station: ctlmodel.Model{TR: p.TR, TW: p.TW, Batch: 1}.NewStation()}
	s.res = &Result{
		Algorithm: plan.Algorithm, Nodes: n, Stages: plan.Stages, K: plan.K,
		Arrived: make([]float64, n), Delivered: make([]float64, n), From: make([]int, n),
	}
	for i := range s.nodes {
		s.res.Arrived[i], s.res.Delivered[i], s.res.From[i] = math.NaN(), math.NaN(), -2
	}
	s.res.Arrived[0], s.res.Delivered[0], s.res.From[0] = 0, 0, -1
	s.nodes[0].soft = true
	for _, l := range plan.Setup {
		s.requestCSet(l.Node, destsOf(l.To, l.Also))
	}
	s.advance(0)
	for steps := 0; len(s.q) > 0 && s.err == nil; steps++ {
		if steps&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		e := s.q.pop()
		s.now = e.t
		switch e.kind {
		case evSettle:
			nd := &s.nodes[e.node]
			nd.dest, nd.pending = nd.pending, nil
			s.res.ConfigChanges++
			s.tryStart(e.node)
			s.advance(e.node)
		case evTxEnd:
			s.arrive(e.tx)
		case evHeader:
			s.nodes[e.node].soft = true
			s.advance(e.node)
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	var missing []int
	for i := range s.nodes {
		if math.IsNaN(s.res.Delivered[i]) {
			missing = append(missing, i)
		} else {
			s.res.Seconds = math.Max(s.res.Seconds, s.res.Delivered[i])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s, N = %d: %w: %d node(s), first %s", plan.Algorithm, n, ErrUnreached, len(missing), listNodes(missing, 8))
	}
	for i := range s.nodes {
		if nd := &s.nodes[i]; nd.next < len(plan.Sends[i]) {
			return nil, fmt.Errorf("%s, N = %d: %w: node %d made %d of its %d planned sends (does it ever get the message?)",
				plan.Algorithm, n, ErrStuck, i, nd.next, len(plan.Sends[i]))
		}
	}
	return s.res, nil
}

func listNodes(ns []int, most int) string {
	s := ""
	for i, v := range ns {
		if i == most {
			return s + ", ..."
		}
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(v)
	}
	return s
}

// check validates the plan's shape against N.
func (plan *Plan) check(n, m int) error {
	if plan.Nodes != n || len(plan.Sends) != n {
		return fmt.Errorf("plan %s: built for %d nodes (%d send lists), run with %d", plan.Algorithm, plan.Nodes, len(plan.Sends), n)
	}
	// entry checks a configuration entry of node i: other nodes, distinct, at most m of them.
	entry := func(i int, d dests) error {
		if len(d) > m {
			return fmt.Errorf("%d destinations, above the multicast size m = %d", len(d), m)
		}
		for j, v := range d {
			if v < 0 || v >= n || v == i {
				return fmt.Errorf("destination %d is not another node of 0..%d", v, n-1)
			}
			for _, w := range d[:j] {
				if v == w {
					return fmt.Errorf("destination %d twice", v)
				}
			}
		}
		return nil
	}
	for j, l := range plan.Setup {
		if l.Node < 0 || l.Node >= n {
			return fmt.Errorf("plan %s: setup[%d]: node %d is not one of 0..%d", plan.Algorithm, j, l.Node, n-1)
		}
		if err := entry(l.Node, destsOf(l.To, l.Also)); err != nil {
			return fmt.Errorf("plan %s: setup[%d]: CSet(%d, %v): %w", plan.Algorithm, j, l.Node, destsOf(l.To, l.Also), err)
		}
	}
	for i, sends := range plan.Sends {
		for j, snd := range sends {
			if err := entry(i, destsOf(snd.To, snd.Also)); err != nil {
				return fmt.Errorf("plan %s: node %d send %d: %w", plan.Algorithm, i, j, err)
			}
			if snd.TTL < 1 {
				return fmt.Errorf("plan %s: node %d send %d: ttl %d, want ≥ 1", plan.Algorithm, i, j, snd.TTL)
			}
		}
	}
	return nil
}

func (s *sim) push(t float64, kind evKind, node int, tx *transmission) {
	s.seq++
	s.q.push(event{t: t, seq: s.seq, kind: kind, node: node, tx: tx})
}

func (s *sim) fail(err error) {
	if s.err == nil {
		s.err = fmt.Errorf("%s, N = %d: %w", s.plan.Algorithm, s.p.Nodes, err)
	}
}

// requestCSet sends CSet(i, to) to the control station now: served after the requests before
// it (T_r each), then settling for T_w while later requests proceed.
func (s *sim) requestCSet(i int, to dests) {
	nd := &s.nodes[i]
	if nd.busy != nil {
		s.fail(fmt.Errorf("node %d: CSet(%d, %v) at %s while its link carries a packet to %v", i, i, to, units.FormatSeconds(s.now), nd.busy.to))
		return
	}
	_, _, settled := s.station.Command(s.now, 1)
	nd.pending = to
	s.push(settled, evSettle, i, nil)
}

// advance moves node i's software program on: its next planned send starts once it has the
// message and its link is idle with nothing queued (the link must not change under a packet).
func (s *sim) advance(i int) {
	nd := &s.nodes[i]
	if s.err != nil || !nd.soft || nd.inSend || nd.next >= len(s.plan.Sends[i]) {
		return
	}
	snd := s.plan.Sends[i][nd.next]
	to := destsOf(snd.To, snd.Also)
	if nd.busy != nil || len(nd.fuQueue) > 0 || len(nd.nicQueue) > 0 || nd.pending != nil && !nd.pending.equal(to) {
		return
	}
	nd.inSend = true
	pkt := packet{ttl: snd.TTL, broadcast: snd.Broadcast, fromApp: snd.FromApp, planned: true}
	if snd.FromApp {
		nd.nicQueue = append(nd.nicQueue, pkt)
	} else {
		if !nd.retained {
			s.fail(fmt.Errorf("node %d send %d: %w: forward again with no packet retained in its FU", i, nd.next, ErrStuck))
			return
		}
		nd.fuQueue = append(nd.fuQueue, pkt)
	}
	if nd.pending == nil && !nd.dest.equal(to) {
		s.requestCSet(i, to)
		return
	}
	s.tryStart(i)
}

// tryStart puts the next queued packet of node i on its link if the link is idle and settled:
// the FU's outgoing buffer first, then the NIC's.
func (s *sim) tryStart(i int) {
	nd := &s.nodes[i]
	if s.err != nil || nd.busy != nil || nd.pending != nil {
		return
	}
	var pkt packet
	switch {
	case len(nd.fuQueue) > 0:
		pkt, nd.fuQueue = nd.fuQueue[0], nd.fuQueue[1:]
	case len(nd.nicQueue) > 0:
		pkt, nd.nicQueue = nd.nicQueue[0], nd.nicQueue[1:]
	default:
		return
	}
	if nd.dest == nil {
		s.fail(fmt.Errorf("node %d at %s: %w", i, units.FormatSeconds(s.now), ErrDarkLink))
		return
	}
	dur := s.p.S() * s.p.TF
	if pkt.fromApp {
		dur = s.p.S() * s.p.TB
		s.res.AppSends++
	} else {
		s.res.Forwards++
	}
	tx := &transmission{from: i, to: nd.dest, start: s.now, end: s.now + dur, pkt: pkt}
	for _, j := range tx.to {
		rx := &s.nodes[j]
		if in := rx.incoming; in != nil && in.end > s.now {
			s.fail(fmt.Errorf("%w at node %d: node %d transmits from %s while node %d's packet arrives until %s",
				ErrCollision, j, i, units.FormatSeconds(s.now), in.from, units.FormatSeconds(in.end)))
			return
		}
		rx.incoming = tx
	}
	nd.busy = tx
	nd.retained = true // the FU keeps the last packet it sent out (§2.4)
	s.push(tx.end, evTxEnd, i, tx)
}

// arrive handles the last byte of tx reaching its receivers.
func (s *sim) arrive(tx *transmission) {
	snd := &s.nodes[tx.from]
	snd.busy = nil
	for _, j := range tx.to {
		if s.err != nil {
			return
		}
		s.receive(j, tx)
	}
	if tx.pkt.planned {
		snd.next++
		snd.inSend = false
	}
	s.tryStart(tx.from)
	s.advance(tx.from)
}

// receive handles tx's packet at node j's FU.
func (s *sim) receive(j int, tx *transmission) {
	rx := &s.nodes[j]
	ttl := tx.pkt.ttl - 1
	if !tx.pkt.broadcast && ttl > 0 {
		// Forward only: the packet is for a node further on, so the FU sends it back out
		// without the node seeing it (§2.4).
		rx.retained = true
		rx.fuQueue = append(rx.fuQueue, packet{ttl: ttl})
		s.res.Passed++
		s.tryStart(j)
		return
	}
	if !math.IsNaN(s.res.Arrived[j]) {
		first := "it is the source"
		if s.res.From[j] >= 0 {
			first = fmt.Sprintf("first from node %d at %s", s.res.From[j], units.FormatSeconds(s.res.Arrived[j]))
		}
		s.fail(fmt.Errorf("node %d %w: from node %d at %s, %s", j, ErrDuplicate, tx.from, units.FormatSeconds(s.now), first))
		return
	}
	s.res.Arrived[j], s.res.From[j] = s.now, tx.from
	if tx.pkt.broadcast {
		// Deliver and forward: taken whole into the FU, then up the stack, and forwarded at the
		// same time while TTL is left.
		s.res.Delivered[j] = s.now + s.p.S()*s.p.TD()
		rx.retained = true
		if ttl > 0 {
			rx.fuQueue = append(rx.fuQueue, packet{ttl: ttl, broadcast: true})
			s.tryStart(j)
		}
	} else {
		// Deliver only: passed straight to the NIC, up the stack as it arrives, never faster
		// than S·T_b.
		s.res.Delivered[j] = math.Max(s.now, tx.start+s.p.S()*s.p.TB)
	}
	s.push(s.now+s.p.HeaderCost(), evHeader, j, nil)
}
