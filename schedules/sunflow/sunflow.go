// Package sunflow is the Sunflow circuit scheduler (Huang, Sun, Ng, "Sunflow: Efficient Optical
// Circuit Scheduling for Coflows", CoNEXT 2016), one of the Tetris paper's partial-reconfiguration
// baselines (§2.3, §4.1). The whole demand matrix is one coflow.
//
// Sunflow plans on a strictly non-blocking model: only transmitters and receivers conflict. At
// time t it scans the demands in a fixed order and gives a circuit to every demand whose two
// ports are free, reserved for [t, t + α_r + bytes/b); then it frees the ports of the one circuit
// that ends first, moves t to that end, and scans again. Circuits that end at the same instant
// are freed one at a time, first created first, each followed by its own scan.
//
// This reproduces the planner of the authors' public simulator (github.com/sunnyxhuang/sunflow,
// commit 1427d2b, src/sunflowSolver.cc, SunflowSolver::ReserveCircuitsFirstCoflow, which is the
// path a single coflow takes), with these correspondences:
//
//   - Demand order: the simulator copies a std::map keyed by (src, dst), so demands are scanned
//     in (src, dst) order. With SUNFLOW_SORT_DEMAND it stable-sorts them by size, largest first
//     (util.cc CompByFlowValue), keeping (src, dst) order among equal sizes; that is
//     Options.SunflowBySize. Like ShuffleDemand there, no sort is applied when all demands share
//     one transmitter or one receiver (every order then serialises on that port).
//   - Freeing: its freeup queue (PortEventQueue::Push) inserts an event after every event with
//     the same time, so circuits ending together are popped in creation order; after each pop
//     the simulator scans again, which is the rule above.
//   - Durations: the simulator reserves CIRCUIT_RECONF_DELAY + bits/OPTC_BPS from the scan time;
//     with bytes and bytes/s the quotient is the same number (the factor 8 is exact).
//   - Not modelled: its random shuffle option (off by default), multiple links per rack
//     (NUM_LINK_PER_RACK = 1 by default), and the reservations for later coflows.
//
// Each planned circuit becomes one schedule circuit in partial mode; its Group is the number of
// the scan that created it, counting only scans that created circuits (scan 0 is the one at
// t = 0). On the Beneš fabric each circuit gets its path from package rnbmap.
package sunflow

import (
	"container/heap"
	"context"
	"fmt"
	"slices"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/rnbmap"
)

// Name is the name Sunflow is registered under.
const Name = "sunflow"

func init() {
	schedules.Register(Name,
		"Sunflow (CoNEXT 2016): greedy partial reconfiguration on free port pairs, SNB plan mapped onto the fabric",
		schedules.SchedulerFunc(Schedule))
}

// Schedule plans d with Sunflow and lays the plan out on the fabric o asks for (Beneš unless
// o.Fabric is crossbar).
func Schedule(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("sunflow: %w", err)
	}
	plan, err := Plan(ctx, d, o.Bandwidth, o.Reconfig, o.SunflowBySize)
	if err != nil {
		return nil, err
	}
	order := "src-dst"
	if o.SunflowBySize {
		order = "size"
	}
	s, err := rnbmap.Schedule(Name, d, o, plan, map[string]string{"order": order})
	if err != nil {
		return nil, fmt.Errorf("sunflow: %w", err)
	}
	return s, nil
}

// Plan returns Sunflow's reservations for d in the order they are created (which is also the
// order of their start times) at per-port bandwidth bandwidth (bytes/s) and reconfiguration delay
// alphaR (s). bySize scans demands largest first instead of in (src, dst) order.
func Plan(ctx context.Context, d *schedules.Demand, bandwidth, alphaR float64, bySize bool) ([]rnbmap.Circuit, error) {
	if !(bandwidth > 0) || !(alphaR >= 0) {
		return nil, fmt.Errorf("sunflow: bandwidth %g bytes/s must be positive and reconfiguration delay %g s non-negative",
			bandwidth, alphaR)
	}
	pairs := d.Pairs()
	if bySize && !singlePort(pairs) {
		slices.SortStableFunc(pairs, func(a, b schedules.Pair) int {
			switch {
			case a.Bytes > b.Bytes:
				return -1
			case a.Bytes < b.Bytes:
				return 1
			}
			return 0
		})
	}
	p := newPlanner(d.N(), pairs, bandwidth, alphaR)

	// The first scan looks at every demand. Each later scan follows the release of one circuit
	// (s, r): every demand still waiting was blocked by a busy port before the release, and only
	// s and r have become free since, so only demands in row s or column r can be placed. Scanning
	// those in the global order places exactly what a full scan would, in O(n) instead of O(n²).
	for k := range pairs {
		p.try(int32(k))
	}
	p.endScan()
	for steps := 0; p.waiting > 0; steps++ {
		if steps%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("sunflow: %w", err)
			}
		}
		if p.ends.Len() == 0 {
			// Cannot happen: with nothing running every port is free and the next scan places
			// the first waiting demand. Kept as an error so a bug cannot loop forever.
			return nil, fmt.Errorf("sunflow: %d demands wait but no circuit is running at t = %g s", p.waiting, p.t)
		}
		c := p.plan[heap.Pop(&p.ends).(int)]
		p.t = c.End
		p.txBusy[c.Src], p.rxBusy[c.Dst] = false, false
		p.scanReleased(c.Src, c.Dst)
		p.endScan()
	}
	return p.plan, nil
}

// singlePort reports whether all pairs share one transmitter or one receiver.
func singlePort(pairs []schedules.Pair) bool {
	if len(pairs) == 0 {
		return true
	}
	oneSrc, oneDst := true, true
	for _, q := range pairs[1:] {
		oneSrc = oneSrc && q.Src == pairs[0].Src
		oneDst = oneDst && q.Dst == pairs[0].Dst
	}
	return oneSrc || oneDst
}

type planner struct {
	pairs          []schedules.Pair
	bandwidth      float64
	alphaR         float64
	rows, cols     [][]int32 // waiting demand indices per transmitter / receiver, ascending
	placed         []bool
	txBusy, rxBusy []bool
	waiting        int
	t              float64
	group          int
	placedInScan   bool
	plan           []rnbmap.Circuit
	ends           endQueue
}

func newPlanner(n int, pairs []schedules.Pair, bandwidth, alphaR float64) *planner {
	p := &planner{
		pairs: pairs, bandwidth: bandwidth, alphaR: alphaR,
		rows: make([][]int32, n), cols: make([][]int32, n),
		placed: make([]bool, len(pairs)),
		txBusy: make([]bool, n), rxBusy: make([]bool, n),
		waiting: len(pairs),
		plan:    make([]rnbmap.Circuit, 0, len(pairs)),
	}
	p.ends.plan = &p.plan
	for k, q := range pairs {
		p.rows[q.Src] = append(p.rows[q.Src], int32(k))
		p.cols[q.Dst] = append(p.cols[q.Dst], int32(k))
	}
	return p
}

// try places demand k at p.t if both its ports are free.
func (p *planner) try(k int32) {
	q := p.pairs[k]
	if p.placed[k] || p.txBusy[q.Src] || p.rxBusy[q.Dst] {
		return
	}
	p.placed[k] = true
	p.waiting--
	p.txBusy[q.Src], p.rxBusy[q.Dst] = true, true
	p.plan = append(p.plan, rnbmap.Circuit{
		Src: q.Src, Dst: q.Dst, Bytes: q.Bytes, Group: p.group,
		// Same association as the simulator: t + (α_r + size/rate).
		Start: p.t, End: p.t + (p.alphaR + float64(q.Bytes)/p.bandwidth),
	})
	heap.Push(&p.ends, len(p.plan)-1)
	p.placedInScan = true
}

// scanReleased scans the waiting demands of transmitter s and receiver r in the global order.
func (p *planner) scanReleased(s, r int) {
	row, col := p.rows[s], p.cols[r]
	i, j := 0, 0
	for i < len(row) || j < len(col) {
		var k int32
		switch {
		case j == len(col) || (i < len(row) && row[i] < col[j]):
			k = row[i]
			i++
		case i == len(row) || col[j] < row[i]:
			k = col[j]
			j++
		default: // the same demand (s, r) heads both lists
			k = row[i]
			i++
			j++
		}
		p.try(k)
	}
	p.rows[s] = slices.DeleteFunc(row, func(k int32) bool { return p.placed[k] })
	p.cols[r] = slices.DeleteFunc(col, func(k int32) bool { return p.placed[k] })
}

func (p *planner) endScan() {
	if p.placedInScan {
		p.group++
		p.placedInScan = false
	}
}

// endQueue is a min-heap of plan indices by planned end, ties by index: the simulator's freeup
// queue keeps equal times in insertion order, and circuits are inserted as they are created.
type endQueue struct {
	plan *[]rnbmap.Circuit
	idx  []int
}

func (q endQueue) Len() int { return len(q.idx) }
func (q endQueue) Less(a, b int) bool {
	ea, eb := (*q.plan)[q.idx[a]].End, (*q.plan)[q.idx[b]].End
	if ea != eb {
		return ea < eb
	}
	return q.idx[a] < q.idx[b]
}
func (q endQueue) Swap(a, b int) { q.idx[a], q.idx[b] = q.idx[b], q.idx[a] }
func (q *endQueue) Push(x any)   { q.idx = append(q.idx, x.(int)) }
func (q *endQueue) Pop() any {
	x := q.idx[len(q.idx)-1]
	q.idx = q.idx[:len(q.idx)-1]
	return x
}
