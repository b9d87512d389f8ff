package tetris

import (
	"context"
	"math"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// The wear term (Tetris §5, "minimize how often internal 2×2 switches change state"): with
// Options.WearWeight w > 0, Tetris plans as before but its estimates (the path query and
// candidate costs of step 3, the orientation costs of step 6) see every traversal that changes
// its switch's state as ready a charge P later than it is, P = w·τ̄ with τ̄ the demand's mean
// circuit transmission time (its bytes over its pairs, at b). A change then costs α_r plus P in
// every comparison, so paths and pairs that reuse the switch states already set win unless
// waiting for them costs more than P. Planned starts keep the true readiness, so the schedule's
// times stay exact. With Options.WearBalance each switch's charge is P·(1 + c_s)/(1 + c̄), c_s
// its changes committed so far and c̄ the mean over the switches: the most-changed switches
// cost more to change again. w = 0 leaves every table as it was: the schedule is Tetris's, byte
// for byte. The crossbar (snb) has no switches and ignores the term.
func init() {
	schedules.Register("tetris-wear", "wear-aware Tetris (Tetris §5): each switch change costs --wear-weight mean transfers beyond α_r (1 when not given), fewer changes for some completion time",
		schedules.SchedulerFunc(ScheduleWear))
}

// DefaultWearWeight is the weight tetris-wear plans with when Options.WearWeight is zero.
const DefaultWearWeight = 1.0

// ScheduleWear is Schedule with the wear term always on: o.WearWeight, or DefaultWearWeight
// when zero.
func ScheduleWear(ctx context.Context, d *schedules.Demand, o schedules.Options) (*schedules.Schedule, error) {
	if o.WearWeight == 0 {
		o.WearWeight = DefaultWearWeight
	}
	s, err := Schedule(ctx, d, o)
	if s != nil {
		s.Algorithm = "tetris-wear"
	}
	return s, err
}

// wear is the term's state on a Beneš plan.
type wear struct {
	base    float64 // P = w·τ̄
	balance bool
	changes []int // per switch (SwitchID): state changes committed so far
}

// enableWear turns the term on for a plan of demand d at bandwidth b (bytes/s).
func (b *benesPlan) enableWear(d *schedules.Demand, o schedules.Options) {
	var total int64
	pairs := 0
	for u := range d.N() {
		for v := range d.N() {
			if x := d.At(u, v); x > 0 {
				total += x
				pairs++
			}
		}
	}
	if pairs == 0 {
		return
	}
	ns := b.f.NumSwitches()
	b.wear = &wear{base: o.WearWeight * float64(total) / float64(pairs) / o.Bandwidth, balance: o.WearBalance, changes: make([]int, ns)}
	b.all.charge = make([]float64, ns)
	for id := range b.all.charge {
		b.all.charge[id] = b.wear.base
	}
}

// recharge sets each switch's charge from the changes committed so far (WearBalance).
func (w *wear) recharge(charge []float64) {
	if !w.balance {
		return
	}
	sum := 0
	for _, c := range w.changes {
		sum += c
	}
	mean := float64(sum) / float64(len(w.changes))
	for id, c := range w.changes {
		charge[id] = w.base * (1 + float64(c)) / (1 + mean)
	}
}

// count adds the changes that committing (src, dst, choices) makes to w.changes; it runs before
// the commit, against the states the circuit finds (the walk of benes.Plan.Commit).
func (b *benesPlan) count(src, dst int, choices uint32) {
	f, chg := b.f, b.wear.changes
	k, nh := f.Levels(), f.Ports()/2
	visit := func(id, in, out int) {
		if st, _, _ := b.p.SwitchState(id/nh, id%nh); st != benes.StateOf(in, out) {
			chg[id]++
		}
	}
	bl := 0
	for s := 0; s < k-1; s++ {
		lin, lout := src>>s, dst>>s
		c := int(choices>>s) & 1
		half := f.Ports() >> (s + 1)
		visit(s*nh+bl*half+lin>>1, lin&1, c)
		visit((2*k-2-s)*nh+bl*half+lout>>1, c, lout&1)
		bl = 2*bl + c
	}
	visit((k-1)*nh+bl, (src>>(k-1))&1, (dst>>(k-1))&1)
}

// refreshWear is refresh with the wear term: the table holds, per pair, the least over its paths
// of a start in which every switch change is charged (the programme of allPairs with each
// level's charges added after its maximum):
//
//	best(s, b, i, j) = min over c of max(ready(in, i&1 → c), ready(out, c → j&1), best(s+1, 2b+c, i>>1, j>>1)) + charges of the changes of in and out
//
// A charge added below an outer maximum can be hidden by it, so the value is a cost, not a
// time: at least the path's start, and its start plus every charge when the inner levels are
// the last ready. Plain floats: the term is an option, off the hot path of Tetris as published.
func (a *allPairs) refreshWear() {
	n, k, nh := a.n, a.k, a.n/2
	cost := func(id, in, out int) (float64, float64) {
		r := a.ready[4*id+in<<1|out]
		if st, _, _ := a.p.SwitchState(id/nh, id%nh); st != benes.StateOf(in, out) {
			return r, a.charge[id]
		}
		return r, 0
	}
	mid := a.tab[k-1]
	for b := 0; b < n/2; b++ {
		for x := range 4 {
			r, c := cost((k-1)*nh+b, x>>1, x&1)
			mid[4*b+x] = math.Float64bits(r + c)
		}
	}
	for s := k - 2; s >= 0; s-- {
		m, half := n>>s, n>>(s+1)
		cur, next := a.tab[s], a.tab[s+1]
		for b := 0; b < 1<<s; b++ {
			for i := range m {
				for j := range m {
					best := math.Inf(1)
					for c := range 2 {
						rin, cin := cost(s*nh+b*half+i>>1, i&1, c)
						rout, cout := cost((2*k-2-s)*nh+b*half+j>>1, c, j&1)
						child := math.Float64frombits(next[(2*b+c)*half*half+(i>>1)*half+j>>1])
						best = min(best, max(rin, rout, child)+cin+cout)
					}
					cur[b*m*m+i*m+j] = math.Float64bits(best)
				}
			}
		}
	}
}
