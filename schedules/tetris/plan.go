package tetris

import (
	"math"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// fabricPlan is the schedule-so-far S on one fabric: what the planner asks of it is the same on a
// Beneš network and on a crossbar, only the resources differ.
type fabricPlan interface {
	// refresh prepares query for the plan as it is now.
	refresh()
	// query is the read-only path query of step 3: the earliest start of (u, v) against S over all
	// of its paths.
	query(u, v int) float64
	// allPairs, if not nil, answers query for every pair without a call through the interface.
	allPairs() *allPairs
	// route picks a path for every connection of a planning matching (step 6).
	route(conns []benes.Conn, r *router) ([]uint32, error)
	// start is Start(S, p) for the routed path (step 7) of connection i of the matching route
	// last routed.
	start(i, u, v int, choices uint32) float64
	// commit adds a circuit on that path transmitting over [start, end) to S.
	commit(u, v int, choices uint32, start, end float64)
	// path is the circuit's path as written in a schedule (no traversals on a crossbar).
	path(u, v int, choices uint32) benes.Path
}

// benesPlan is S on a Beneš fabric: per switch σ_s, F_s, Q_s and lane release times (benes.Plan).
type benesPlan struct {
	f    *benes.Fabric
	p    *benes.Plan
	all  *allPairs
	wear *wear // nil: no wear term (wear.go)
	// rt routes every matching of the plan with the same working memory.
	rt *benes.Router
	// starts, when not nil, holds per connection of the matching last routed the start of its
	// path through either child of its last routed level (router.starts); reference makes start
	// ignore it.
	starts    []uint64
	reference bool
}

func newBenesPlan(f *benes.Fabric, alphaR float64) *benesPlan {
	p := benes.NewPlan(f, alphaR)
	return &benesPlan{f: f, p: p, all: newAllPairs(p), rt: f.NewRouter()}
}

func (b *benesPlan) refresh() {
	if b.wear != nil {
		b.wear.recharge(b.all.charge)
	}
	b.all.refresh()
}
func (b *benesPlan) query(u, v int) float64 { return b.all.start(u, v) }
func (b *benesPlan) allPairs() *allPairs    { return b.all }

func (b *benesPlan) route(conns []benes.Conn, r *router) ([]uint32, error) {
	b.starts = nil
	if r == nil {
		return b.rt.Route(conns, nil)
	}
	r.bind(b, conns)
	if b.f.Levels() > 1 && !b.reference {
		// Route asks r to orient every connection's component at every level but the middle
		// one, so choose sees each connection at the last of them.
		b.starts = r.starts
	}
	r.charge = b.all.charge
	if r.chooseFn == nil {
		r.chooseFn = r.choose // once: a method value allocates
	}
	return b.rt.Route(conns, r.chooseFn)
}

// start reads the readiness table of this iteration's refresh instead of the plan: committing
// the matching's earlier circuits changes no readiness the later ones see. Circuits of one routed
// matching share no lane, and two that pass one switch need the same state, so a commit leaves
// the lanes of the others as they were, and for a switch it changes it leaves Q_s = F_s + α_r, the
// time the others saw for that change.
//
// When the router chose the paths, it has already computed each connection's start through the
// last level it decides for both children there (router.choose, in the same table), so start only
// picks the child the path took: the same maximum over the same readiness values as pathReady.
func (b *benesPlan) start(i, u, v int, choices uint32) float64 {
	if b.starts != nil {
		child := int(choices>>(b.f.Levels()-2)) & 1
		return math.Float64frombits(b.starts[2*i+child])
	}
	return b.all.pathReady(u, v, choices)
}

func (b *benesPlan) commit(u, v int, choices uint32, start, end float64) {
	if b.wear != nil {
		b.count(u, v, choices)
	}
	b.p.Commit(u, v, choices, start, end)
}

func (b *benesPlan) path(u, v int, choices uint32) benes.Path { return b.f.NewPath(u, v, choices) }

// crossbarPlan is S on the ideal strictly non-blocking crossbar: only endpoints conflict. A
// transmitter points at one receiver at a time (none at t = 0); pointing it at another takes α_r,
// which starts once both endpoints are free.
type crossbarPlan struct {
	alpha  float64
	txFree []float64
	rxFree []float64
	dest   []int
}

func newCrossbarPlan(n int, alphaR float64) *crossbarPlan {
	c := &crossbarPlan{alpha: alphaR, txFree: make([]float64, n), rxFree: make([]float64, n), dest: make([]int, n)}
	for i := range c.dest {
		c.dest[i] = -1
	}
	return c
}

func (c *crossbarPlan) refresh()               {}
func (c *crossbarPlan) query(u, v int) float64 { return c.start(0, u, v, 0) }
func (c *crossbarPlan) allPairs() *allPairs    { return nil }

// route has nothing to choose on a crossbar: every connection has the one direct path.
func (c *crossbarPlan) route(conns []benes.Conn, _ *router) ([]uint32, error) {
	return make([]uint32, len(conns)), nil
}

func (c *crossbarPlan) start(_, u, v int, _ uint32) float64 {
	t := max(c.txFree[u], c.rxFree[v])
	if c.dest[u] != v {
		t += c.alpha
	}
	return t
}

func (c *crossbarPlan) commit(u, v int, _ uint32, _, end float64) {
	c.txFree[u] = max(c.txFree[u], end)
	c.rxFree[v] = max(c.rxFree[v], end)
	c.dest[u] = v
}

func (c *crossbarPlan) path(int, int, uint32) benes.Path { return benes.EmptyPath() }
