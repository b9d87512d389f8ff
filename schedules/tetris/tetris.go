// Package tetris is the circuit scheduler of Tetris §3: bottleneck-driven matching
// selection with a degree-coverage progress guarantee, RNB-aware Beneš routing (Algorithm 3), and
// independent per-circuit start times under partial reconfiguration. The same planner on the ideal
// crossbar is the strictly non-blocking reference ("snb"), and the three ablations of Tetris
// Figure 6 are options of the same code. "tetris+" (plus.go) plans with several cost weightings
// and keeps the plan that completes first.
//
// Each iteration plans one matching:
//
//  1. d_e is each endpoint's residual degree (transmit and receive sides are distinct endpoints);
//     C is the set of endpoints with the maximum, δ. The matching must cover C, so δ drops by one
//     per iteration and there are exactly Δ matchings.
//  2. W_e = Σ residual transmission time at e + d_e·α_r, the communication still to do at e plus
//     one reconfiguration per remaining partner. The paper's notation table (its Table 2) is lost
//     from our copy of the text; this is our reading of "remaining work", chosen so that W_e is the
//     time e alone still needs, the same quantity the reconfiguration-aware lower bound charges.
//     a_e is the end of the latest circuit at e already planned.
//  3. Every residual (u,v) is costed c_uv = s_uv − α_r + max(W_u, W_v), where s_uv is the earliest
//     start of its best path against the plan so far (a read-only query; candidates do not reserve
//     anything against each other).
//  4. B = max_e (a_e + W_e) over all 2n endpoints; H is the smallest value ≥ B for which
//     A = {(u,v): c_uv ≤ H} contains a matching covering C. A only changes at candidate costs, so H
//     is B itself when A(B) covers C, and otherwise the smallest candidate cost above B that does.
//  5. A is walked by decreasing max(W_u, W_v), then decreasing R_uv; (u,v) is taken if both
//     endpoints are free and what remains of A can still cover C.
//  6. The matching is routed through the Beneš network level by level (Algorithm 3, see router).
//  7. Each circuit starts at Start(S, p) on its routed path and is committed to S.
//
// The ablations (schedules.Options) change one step each: NoDegreeCoverage drops C from steps 4
// and 5 (A holds every candidate, walked by increasing cost); NaiveRouting routes step 6 with plain
// looping (orientation 0 everywhere); NoPartial keeps the matchings and paths and executes each
// matching as a barrier round, so it isolates the cost of the barrier.
//
// Planned times follow the execution semantics exactly (DESIGN.md): in partial mode a circuit
// starts when every lane and switch state on its path is ready, a switch that changes state being
// ready α_r after its previous user ends; on the crossbar a transmitter that re-points waits α_r
// after both its endpoints are free; in barrier mode (the no-partial ablation) each matching is a
// round that starts when the previous one has ended and waits α_r if any switch (crossbar: any
// transmitter) changes.
//
// Speed. The planner does the steps above literally but not naively; each shortcut returns what
// the direct computation would, and testdata/corpus pins the schedule files of 260 plans (n = 8 to
// 512, every ablation, snb, α_r from 0 to 1 ms) byte for byte. Step 3 answers every pair's query
// with one dynamic programme per iteration (allPairs; on amd64 its inner loop is SSE2 assembly,
// two ports per instruction, exact on the non-negative times), and costs only the demands still left, in
// place in one list, a transmitter's row at a time (candRow; on amd64 its loop is assembly too,
// which keeps in registers what the compiler spills). Steps 4 and 5 test coverage with
// augmenting paths whose answer depends only on the graph, not on the matching held, which leaves
// freedom in how they search (an exposed neighbour first); a refused take changes nothing, so one
// forward and one backward alternating search classify all of a key endpoint's candidates at once
// (refusals), and the walk offers a group's best candidate from its endpoint's list, built while
// the candidates are; it visits endpoints in an order sorted by insertion from the previous
// walk's, which W changes little. Step 6 compares orientations by their largest differing cost
// before sorting anything and, at the last level it decides, keeps each connection's start over
// its whole path for both children; step 7 takes it from there rather than walking the path again
// (both read the readiness table step 3 refreshed, which committing a matching's earlier circuits
// does not change). Where a decision is a coin flip to the branch predictor (which endpoint is a
// pair's key, whether it is in A, whether a candidate beats the best so far, whether a switch
// changes state) it is computed as a value, not a branch.
package tetris

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

func init() {
	schedules.Register("tetris", "Tetris (§3 of the Tetris paper): degree-covering bottleneck-driven matchings, RNB-aware Beneš routing, partial reconfiguration",
		schedules.SchedulerFunc(func(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
			return Schedule(ctx, d, o)
		}))
	schedules.Register("snb", "ideal strictly non-blocking reference: the Tetris planner on a crossbar",
		schedules.SchedulerFunc(func(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
			o.Fabric = schedules.Crossbar
			s, err := Schedule(ctx, d, o)
			if s != nil {
				s.Algorithm = "snb"
			}
			return s, err
		}))
}

// Schedule plans demand d with Tetris. It plans on the Beneš fabric unless o.Fabric is Crossbar,
// and honours the ablations o.NoPartial, o.NaiveRouting and o.NoDegreeCoverage. Each demand becomes
// exactly one circuit; circuits are in planning order with Group the planning matching.
func Schedule(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	return plan(ctx, d, o, nil)
}

// step is what one iteration saw and decided; tests follow the algorithm through it.
type step struct {
	delta    int
	cTx, cRx []int
	w, a     []float64 // per endpoint: transmitters, then receivers
	cands    []stepCandidate
	b, h     float64
	matching []stepCandidate // in selection order
	orient   []orientation
	starts   []float64 // planned start of each matched circuit
}

// stepCandidate is a candidate as a step shows it, with the values the costing derived.
type stepCandidate struct {
	u, v  int
	start float64 // s_uv = Start(S, p_uv) for a best path p_uv
	cost  float64 // c_uv = s_uv − α_r + max(W_u, W_v)
}

// traced is c as a step shows it. The plan has not changed since c was costed (it changes when
// the matching is committed), so the query answers the start the costing read.
func (p *planner) traced(c *candidate) stepCandidate {
	u, v := int(c.u), int(c.v)
	return stepCandidate{u: u, v: v, start: p.fp.query(u, v), cost: c.cost}
}

// planner is the state of one Schedule call.
type planner struct {
	d      *schedules.Demand
	n      int
	b      float64 // bytes per second
	alpha  float64
	o      schedules.Options
	fp     fabricPlan
	router *router // nil: plain looping, or a crossbar

	txLoad, rxLoad []int64
	txDeg, rxDeg   []int
	a, w           []float64
	cTx, cRx       []int
	cands          []candidate
	rowEnd         []int32   // where transmitter u's demands end in cands
	times          []float64 // backing store of the circuits' planned times
	matching       []int
	conns          []benes.Conn
	sel            *selector
}

func plan(ctx context.Context, d *schedules.Demand, o schedules.Options, trace func(*step)) (*schedules.Schedule, error) {
	return planWith(ctx, d, o, trace, nil)
}

// planWith is plan with the rule changes of tetris+ (nil: the paper's rules).
func planWith(ctx context.Context, d *schedules.Demand, o schedules.Options, trace func(*step), rules *plusRules) (*schedules.Schedule, error) {
	return planReference(ctx, d, o, trace, rules, false)
}

// planReference is planWith; with reference, step 7 computes every circuit's start from its whole
// routed path (allPairs.pathReady) rather than taking it from what routing computed
// (router.choose), the straightforward planner the reuse is tested against.
func planReference(ctx context.Context, d *schedules.Demand, o schedules.Options, trace func(*step), rules *plusRules, reference bool) (*schedules.Schedule, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("tetris: %w", err)
	}
	if d == nil || d.N() == 0 {
		return nil, fmt.Errorf("tetris: demand is empty (n = 0)")
	}
	n := d.N()
	if n > benes.MaxPorts {
		return nil, fmt.Errorf("tetris: demand has %d ports, the largest fabric is %d", n, benes.MaxPorts)
	}
	s := &schedules.Schedule{
		Version:   schedules.FormatVersion,
		Algorithm: "tetris",
		N:         n,
		Ports:     n,
		Fabric:    schedules.Benes,
		Mode:      schedules.Partial,
		Params: schedules.Params{
			BandwidthBytesPerSecond: o.Bandwidth,
			ReconfigSeconds:         o.Reconfig,
			Options: map[string]string{
				"no-partial":         strconv.FormatBool(o.NoPartial),
				"naive-routing":      strconv.FormatBool(o.NaiveRouting),
				"no-degree-coverage": strconv.FormatBool(o.NoDegreeCoverage),
			},
		},
		Circuits: []schedules.Circuit{},
	}
	p := &planner{d: d, n: n, b: o.Bandwidth, alpha: rules.costAlpha(o.Reconfig), o: o}
	if o.Fabric == schedules.Crossbar {
		s.Fabric = schedules.Crossbar
		p.fp = newCrossbarPlan(n, o.Reconfig)
	} else {
		s.N = benes.SizeFor(n)
		f, err := benes.New(s.N)
		if err != nil {
			return nil, fmt.Errorf("tetris: %w", err)
		}
		bp := newBenesPlan(f, o.Reconfig)
		bp.reference = reference
		if o.WearWeight > 0 {
			bp.enableWear(d, o)
			s.Params.Options["wear-weight"] = strconv.FormatFloat(o.WearWeight, 'g', -1, 64)
			s.Params.Options["wear-balance"] = strconv.FormatBool(o.WearBalance)
		}
		p.fp = bp
		if !o.NaiveRouting {
			p.router = &router{n: n, alpha: o.Reconfig}
		}
	}
	if o.NoPartial {
		s.Mode = schedules.Barrier
	}
	p.init()
	pairs := len(p.cands)
	p.times = make([]float64, 0, 2*pairs)
	s.Circuits = make([]schedules.Circuit, 0, pairs)
	for group := 0; ; group++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tetris: %w", err)
		}
		var st *step
		if trace != nil {
			st = &step{}
		}
		more, err := p.iterate(group, s, st)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		if st != nil {
			trace(st)
		}
	}
	if o.NoPartial {
		if err := retimeBarrier(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (p *planner) init() {
	n := p.n
	// One allocation per element type: at small n the allocations, not the work, dominate.
	i64 := make([]int64, 2*n)
	p.txLoad, p.rxLoad = i64[:n:n], i64[n:]
	ints := make([]int, 5*n)
	p.txDeg, p.rxDeg, p.cTx, p.cRx = ints[:n:n], ints[n:2*n:2*n], ints[2*n:2*n:3*n], ints[3*n:3*n:4*n]
	p.matching = ints[4*n : 4*n : 5*n]
	f64 := make([]float64, 4*n)
	p.a, p.w = f64[:2*n:2*n], f64[2*n:]
	p.conns = make([]benes.Conn, 0, n)
	// The live demands in (u, v) order: each iteration's candidates are built over this list in
	// place, so that the pairs already served are not scanned again. A candidate's bytes are its
	// residual: step 7 reads them there and zeroes them when it serves the pair. Counted first,
	// so that a sparse demand does not reserve room for every pair.
	pairs := 0
	for u := range n {
		pairs += p.d.RowDegree(u)
	}
	p.cands = make([]candidate, 0, pairs)
	p.rowEnd = make([]int32, n)
	for u := 0; u < n; u++ {
		for v := 0; v < n; v++ {
			x := p.d.At(u, v)
			if x <= 0 {
				continue
			}
			p.cands = append(p.cands, candidate{u: int32(u), v: int32(v), bytes: x})
			p.txLoad[u] += x
			p.rxLoad[v] += x
			p.txDeg[u]++
			p.rxDeg[v]++
		}
		p.rowEnd[u] = int32(len(p.cands))
	}
	p.sel = newSelector(n)
	if p.router != nil {
		p.router.w = p.w
	}
}

// iterate plans one matching as group group and appends its circuits to s. It reports false when
// no demand was left.
func (p *planner) iterate(group int, s *schedules.Schedule, st *step) (bool, error) {
	n := p.n
	// Step 1: residual degrees and the endpoints that must be covered.
	delta := 0
	for e := 0; e < n; e++ {
		delta = max(delta, p.txDeg[e], p.rxDeg[e])
	}
	if delta == 0 {
		return false, nil
	}
	p.cTx, p.cRx = p.cTx[:0], p.cRx[:0]
	for e := 0; e < n; e++ {
		if p.txDeg[e] == delta {
			p.cTx = append(p.cTx, e)
		}
		if p.rxDeg[e] == delta {
			p.cRx = append(p.cRx, e)
		}
	}
	// Step 2: remaining work. Loads are summed in bytes and divided once so W_e does not depend on
	// the order demands were removed in.
	for e := 0; e < n; e++ {
		p.w[e] = float64(p.txLoad[e])/p.b + float64(p.txDeg[e])*p.alpha
		p.w[n+e] = float64(p.rxLoad[e])/p.b + float64(p.rxDeg[e])*p.alpha
	}
	// Step 3: candidate costs.
	p.fp.refresh()
	// The walk of step 5 lists candidates under their key endpoint, the one with the larger W
	// (the transmitter on a tie); listing them here saves it two passes.
	index := !p.o.NoDegreeCoverage
	// B of step 4, where the threshold search starts: the walk's graph A(B) is built here too.
	b := 0.0
	for e := range p.a {
		b = max(b, p.a[e]+p.w[e])
	}
	if index {
		p.sel.indexReset(p.txDeg, p.rxDeg)
		p.sel.beginGraph(b)
	}
	p.candidates(b, index)
	// Steps 4 and 5: threshold and greedy selection.
	h := b
	p.matching = p.matching[:0]
	if p.o.NoDegreeCoverage {
		p.matching = p.sel.greedyByCost(p.cands, p.matching)
	} else {
		var err error
		h, err = p.sel.threshold(p.cands, b, p.cTx, p.cRx)
		if err != nil {
			return false, err
		}
		p.matching = p.sel.greedy(p.cands, h, p.w, p.cTx, p.cRx, p.matching)
	}
	// Step 6: routing.
	if len(p.matching) == 0 {
		return false, fmt.Errorf("tetris: matching %d is empty with %d demands left", group, len(p.cands))
	}
	p.conns = p.conns[:0]
	for _, i := range p.matching {
		p.conns = append(p.conns, benes.Conn{Src: int(p.cands[i].u), Dst: int(p.cands[i].v)})
	}
	if st != nil {
		*st = step{delta: delta, cTx: append([]int(nil), p.cTx...), cRx: append([]int(nil), p.cRx...),
			w: append([]float64(nil), p.w...), a: append([]float64(nil), p.a...),
			b: b, h: h}
		for i := range p.cands {
			st.cands = append(st.cands, p.traced(&p.cands[i]))
		}
		for _, i := range p.matching {
			st.matching = append(st.matching, p.traced(&p.cands[i]))
		}
		if p.router != nil {
			p.router.rec = func(o orientation) { st.orient = append(st.orient, o) }
			defer func() { p.router.rec = nil }()
		}
	}
	choices, err := p.fp.route(p.conns, p.router)
	if err != nil {
		return false, fmt.Errorf("tetris: routing matching %d: %w", group, err)
	}
	// Step 7: independent start times. The matched candidates leave the live list (bytes 0 marks
	// them for the next iteration's candidates).
	for k, cn := range p.conns {
		u, v := cn.Src, cn.Dst
		c := &p.cands[p.matching[k]]
		x := c.bytes
		c.bytes = 0
		start := p.fp.start(k, u, v, choices[k])
		p.times = append(p.times, start, start+float64(x)/p.b)
		times := p.times[len(p.times)-2:]
		end := times[1]
		p.fp.commit(u, v, choices[k], start, end)
		p.a[u] = max(p.a[u], end)
		p.a[n+v] = max(p.a[n+v], end)
		s.Circuits = append(s.Circuits, schedules.Circuit{
			Src: u, Dst: v, Bytes: x, Group: group,
			Path:         p.fp.path(u, v, choices[k]),
			PlannedStart: &times[0], PlannedEnd: &times[1],
		})
		if st != nil {
			st.starts = append(st.starts, start)
		}
		p.txLoad[u] -= x
		p.rxLoad[v] -= x
		p.txDeg[u]--
		p.rxDeg[v]--
	}
	return true, nil
}

// candidates is step 3: it costs every live demand of p.cands against the plan, in place and in
// (u, v) order, dropping the ones served (bytes 0). With index it also lists each candidate under
// its key endpoint, the one with the larger W (the transmitter on a tie), and adds those with
// cost ≤ b to the walk's graph A(b), saving the walk two passes over them.
//
// It is the loop over every residual pair of every iteration, so it goes row by row (p.rowEnd
// keeps where each transmitter's demands end in the list): what belongs to the transmitter stays
// in registers, its own list fills from a register, and each field is stored directly, since a
// whole candidate built and then copied stalls on the copy.
func (p *planner) candidates(b float64, index bool) {
	n, alpha, w := p.n, p.alpha, p.w[:2*p.n]
	all := p.fp.allPairs() // nil on the crossbar; query reads the same table on Beneš
	cands, rowEnd := p.cands, p.rowEnd[:n]
	if all != nil && index {
		// The table is over the fabric's ports, which may be more than the demand's (padding).
		tab, stride := all.tab[0], all.n
		sel := p.sel
		items, fill := sel.items, sel.fill[:2*n]
		rxFill := fill[n:]
		rxWords, words := sel.rx.words, len(sel.rx.free)
		wRx := w[n:]
		k, lo := 0, 0
		for u := range n {
			hi := int(rowEnd[u])
			row := tab[u*stride : u*stride+stride]
			txRow := sel.tx.adj[u]
			rxCol, uMask := rxWords[u>>6:], uint64(1)<<(uint(u)&63)
			txFill := fill[u]
			src := cands[lo:hi]
			var kk int
			kk, txFill = candRow(src, cands[k:k+len(src)], row[:len(wRx)], wRx, items, rxFill[:len(wRx)],
				txRow, rxCol, words, uMask, int32(u), int32(k), math.Float64bits(w[u]), txFill, alpha, b)
			k += kk
			fill[u] = txFill
			lo = hi
			rowEnd[u] = int32(k)
		}
		p.cands = cands[:k]
		return
	}
	k, lo := 0, 0
	for u := range n {
		hi := int(rowEnd[u])
		for i := lo; i < hi; i++ {
			c := cands[i]
			if c.bytes == 0 {
				continue
			}
			v := int(c.v)
			start := p.fp.query(u, v)
			key := max(w[u], w[n+v])
			cost := start - alpha + key
			if index {
				e := u
				if w[u] < w[n+v] {
					e = n + v
				}
				p.sel.indexAdd(e, k)
				if cost <= b {
					p.sel.addEdge(u, v)
				}
			}
			cands[k] = candidate{u: int32(u), v: int32(v), bytes: c.bytes, cost: cost}
			k++
		}
		lo = hi
		rowEnd[u] = int32(k)
	}
	p.cands = cands[:k]
}

// candRow is one transmitter's row of candidates (see candidates): it costs the live demands of
// src, writes them to dst from its start (dst may be src itself: a demand is written no later
// than it is read), lists each under its key endpoint in items, and adds those with cost ≤ b to
// the walk's graph, txRow (u's row of the transmitter side) and rxCol (u's column of the receiver
// side, one word every words); candidates are numbered from base. row is u's row of the path table and wRx the receivers' W, both
// indexed by v. It returns how many demands it wrote and u's new fill position.
//
// On amd64 it runs as candRowAsm (candrow_amd64.s), which keeps the loop's state in registers
// where the compiler spills most of it in every step; this is the definition that one is tested
// against, and the version elsewhere.
func candRowGo(src, dst []candidate, row []uint64, wRx []float64, items, rxFill []int32,
	txRow, rxCol []uint64, words int, uMask uint64, u, base int32, wub uint64, txFill int32, alpha, b float64) (int, int32) {
	// u's row of the graph fills one word at a time in a register (v only grows along the
	// row): a read-modify-write of one word in every step would chain them.
	word, acc := 0, uint64(0)
	k := 0
	dst = dst[:len(src)]
	for j := range src {
		c := &src[j]
		x := c.bytes
		if x == 0 {
			continue
		}
		v := int(c.v)
		start := math.Float64frombits(row[v])
		wv := wRx[v]
		// Which endpoint is the key and whether the pair is in A(b) are coin flips to the
		// branch predictor: both are computed without branches. Both lists get the candidate
		// at their fill position and only the key's advances. The other write lands in a slot
		// its list does not read yet: an endpoint's room is its residual degree, which counts
		// this candidate too, so while one of its candidates is listed under the other
		// endpoint its fill is below its end.
		rx := b2u(math.Float64frombits(wub) < wv)
		// max(wu, wv): W is a sum of non-negative terms, never NaN or −0.
		kb := wub ^ (wub^math.Float64bits(wv))&-rx
		cost := start - alpha + math.Float64frombits(kb)
		id := base + int32(k)
		items[txFill] = id
		txFill += int32(1 ^ rx)
		f := rxFill[v]
		items[f] = id
		rxFill[v] = f + int32(rx)
		in := b2u(cost <= b)
		if v>>6 != word {
			txRow[word] |= acc
			word, acc = v>>6, 0
		}
		acc |= in << (uint(v) & 63)
		rxCol[v*words] |= -in & uMask
		d := &dst[k]
		d.u, d.v, d.bytes, d.cost = u, int32(v), x, cost
		k++
	}
	txRow[word] |= acc
	return k, txFill
}

// b2u is 1 for true and 0 for false; the compiler makes it a flag read, not a branch.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
