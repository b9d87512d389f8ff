package emulator

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// refOrder is the partial-mode dependency order derived the straightforward way, from Order's
// doc comment and nothing of its code: maps and slices of slices, every rule applied as it
// reads.
type refOrder struct {
	preds, waits, succs, trigs [][]int32 // per circuit
	txPred, rxPred             []int32
	epochs                     []Epoch
	reqCount                   []int32
	users                      [][]int32 // per epoch
	stride                     int
	trigEp                     [][]int32 // per circuit, stride slots
}

// refDerive derives the partial-mode order of a valid schedule s.
func refDerive(s *schedules.Schedule) *refOrder {
	nc := len(s.Circuits)
	r := &refOrder{preds: make([][]int32, nc), waits: make([][]int32, nc), succs: make([][]int32, nc),
		trigs: make([][]int32, nc), txPred: make([]int32, nc), rxPred: make([]int32, nc), trigEp: make([][]int32, nc)}
	// Resources: a transmitter, a receiver, a switch's input lane. A circuit's predecessors are
	// the previous users of each of its resources, each once, in the order the resources are
	// listed: transmitter, receiver, then the input lanes of its hops after the first.
	type resource struct{ kind, a, b, c int }
	last := map[resource]int32{}
	for i, c := range s.Circuits {
		rs := []resource{{0, c.Src, 0, 0}, {1, c.Dst, 0, 0}}
		for h, t := range c.Path.All() {
			if h > 0 {
				rs = append(rs, resource{2, t.Stage, t.Switch, t.In})
			}
		}
		r.txPred[i], r.rxPred[i] = -1, -1
		for k, x := range rs {
			p, ok := last[x]
			last[x] = int32(i)
			if !ok {
				continue
			}
			if k == 0 {
				r.txPred[i] = p
			}
			if k == 1 {
				r.rxPred[i] = p
			}
			if !slices.Contains(r.preds[i], p) {
				r.preds[i] = append(r.preds[i], p)
				r.succs[p] = append(r.succs[p], int32(i))
			}
		}
	}
	ne := func() int32 { return int32(len(r.epochs)) }
	if s.Fabric == schedules.Crossbar {
		// A re-pointing of a transmitter to a receiver other than its last one (none at t = 0)
		// is an epoch; it requires the transmitter's and the receiver's previous circuits, and
		// the circuit that needs it waits on it.
		r.stride = 2
		dst := map[int]int{}
		slots := make([][]int32, nc)
		for i := range slots {
			slots[i] = []int32{-1, -1} // the next re-pointings on its transmitter, on its receiver
		}
		for i, c := range s.Circuits {
			if d, ok := dst[c.Src]; ok && d == c.Dst {
				continue
			}
			dst[c.Src] = c.Dst
			e := ne()
			r.epochs = append(r.epochs, Epoch{Stage: -1, Switch: c.Src, Dst: c.Dst})
			var q []int32
			for k, p := range []int32{r.txPred[i], r.rxPred[i]} {
				if p >= 0 {
					q = append(q, p)
					r.trigs[p] = append(r.trigs[p], e)
					slots[p][k] = e
				}
			}
			r.reqCount = append(r.reqCount, int32(len(q)))
			r.waits[i] = append(r.waits[i], e)
			r.users = append(r.users, []int32{int32(i)})
		}
		// The walk's slots: those epochs, a sentinel for none, in increasing order.
		for i := range s.Circuits {
			for k := range slots[i] {
				if slots[i][k] < 0 {
					slots[i][k] = ne() + int32(k)
				}
			}
			slices.Sort(slots[i])
			r.trigEp[i] = slots[i]
		}
		for i := range s.Circuits {
			slices.Sort(r.trigs[i])
		}
		return r
	}
	// Beneš: each switch's users in schedule order fall into runs, maximal stretches that need
	// one state. A run in a state other than the switch's previous one (Bar before the first
	// run) is an epoch: it requires every user of the previous run, and its users wait on it.
	// A hop's trigger is the epoch that follows its run.
	f, err := s.BenesFabric()
	if err != nil {
		panic(err)
	}
	r.stride = f.Stages()
	type hop struct{ c, h int }
	type swState struct {
		state    benes.State
		run      []hop // the current run's users
		epoch    int32 // the epoch that started the current run, or −1
		prevUsed bool
	}
	sws := map[[2]int]*swState{}
	follow := map[hop]int32{}
	for i, c := range s.Circuits {
		for h, t := range c.Path.All() {
			k := [2]int{t.Stage, t.Switch}
			w := sws[k]
			if w == nil {
				w = &swState{state: benes.Bar, epoch: -1}
				sws[k] = w
			}
			if st := t.State(); st != w.state || !w.prevUsed {
				if st != w.state {
					e := ne()
					r.epochs = append(r.epochs, Epoch{Stage: t.Stage, Switch: t.Switch, From: w.state, To: st, Dst: -1})
					r.reqCount = append(r.reqCount, int32(len(w.run)))
					r.users = append(r.users, nil)
					for _, u := range w.run {
						follow[u] = e
					}
					w.epoch = e
				} else {
					w.epoch = -1 // a first run in Bar: no epoch
				}
				w.state, w.run, w.prevUsed = st, nil, true
			}
			w.run = append(w.run, hop{i, h})
			if w.epoch >= 0 {
				r.waits[i] = append(r.waits[i], w.epoch)
				r.users[w.epoch] = append(r.users[w.epoch], int32(i))
			}
		}
	}
	for i, c := range s.Circuits {
		r.trigEp[i] = make([]int32, r.stride)
		for h := range c.Path.All() {
			e, ok := follow[hop{i, h}]
			if !ok {
				r.trigEp[i][h] = ne() + int32(h)
				continue
			}
			r.trigEp[i][h] = e
			r.trigs[i] = append(r.trigs[i], e)
		}
	}
	return r
}

// checkWalkLists compares the lists the walk reads with the reference (successor rows as sets:
// their order does not matter to the walk).
func checkWalkLists(o *Order, r *refOrder) error {
	nc := len(r.preds)
	if o.nc != nc || o.numEpochs() != len(r.epochs) || o.stride != r.stride {
		return fmt.Errorf("circuits %d, epochs %d, stride %d; want %d, %d, %d", o.nc, o.numEpochs(), o.stride, nc, len(r.epochs), r.stride)
	}
	if len(o.next) < (nc+1)*o.res {
		return fmt.Errorf("next has %d entries, want (%d+1)·%d", len(o.next), nc, o.res)
	}
	for c := range nc {
		row := o.next[c*o.res : (c+1)*o.res]
		k := len(r.succs[c])
		got := slices.Clone(row[:min(k, len(row))])
		slices.Sort(got)
		if !slices.Equal(got, r.succs[c]) {
			return fmt.Errorf("circuit %d: next row %v, want the successors %v first", c, row, r.succs[c])
		}
		for _, x := range row[k:] {
			if x != int32(nc) {
				return fmt.Errorf("circuit %d: next row %v, want none (%d) after the successors %v", c, row, nc, r.succs[c])
			}
		}
		if want := int32(len(r.preds[c]) + len(r.waits[c])); o.pend[c] != want {
			return fmt.Errorf("circuit %d: pend %d, want %d", c, o.pend[c], want)
		}
		if !slices.Equal(o.trigEp[c*o.stride:(c+1)*o.stride], r.trigEp[c]) {
			return fmt.Errorf("circuit %d: trigger slots %v, want %v", c, o.trigEp[c*o.stride:(c+1)*o.stride], r.trigEp[c])
		}
	}
	if !slices.Equal(o.txPred[:nc], r.txPred) || !slices.Equal(o.rxPred[:nc], r.rxPred) {
		return fmt.Errorf("txPred %v rxPred %v, want %v %v", o.txPred[:nc], o.rxPred[:nc], r.txPred, r.rxPred)
	}
	if len(o.use) != 2*len(r.epochs)+1 || o.use[0] != 0 {
		return fmt.Errorf("use has %d entries starting at %v, want %d from 0", len(o.use), o.use[:min(1, len(o.use))], 2*len(r.epochs)+1)
	}
	for e, want := range r.epochs {
		if got := o.Epoch(e); got != want {
			return fmt.Errorf("epoch %d: %+v, want %+v", e, got, want)
		}
		if o.reqCount[e] != r.reqCount[e] {
			return fmt.Errorf("epoch %d: requires %d, want %d", e, o.reqCount[e], r.reqCount[e])
		}
		if got := o.user[o.use[2*e]:o.use[2*e+2]]; !slices.Equal(got, r.users[e]) && (len(got) > 0 || len(r.users[e]) > 0) {
			return fmt.Errorf("epoch %d: users %v, want %v", e, got, r.users[e])
		}
		// The change Settled hands the timeline: the switch's dense id and new state on Beneš,
		// nothing on a crossbar.
		change := int32(0)
		if want.Stage >= 0 {
			change = int32(want.Stage*(o.n/2)+want.Switch)<<1 | int32(want.To)
		}
		if got := o.use[2*e+1]; got != change {
			return fmt.Errorf("epoch %d: change %#x in use, want %#x (%+v)", e, got, change, want)
		}
	}
	return nil
}

// checkExportedLists compares what NewOrder exports with the reference.
func checkExportedLists(o *Order, r *refOrder) error {
	for c := range r.preds {
		for _, l := range []struct {
			what      string
			got, want []int32
		}{
			{"predecessors", o.Predecessors(c), r.preds[c]},
			{"waits", o.Waits(c), r.waits[c]},
			{"successors", o.Successors(c), r.succs[c]},
			{"triggers", o.Triggers(c), r.trigs[c]},
		} {
			if !slices.Equal(l.got, l.want) && (len(l.got) > 0 || len(l.want) > 0) {
				return fmt.Errorf("circuit %d: %s %v, want %v", c, l.what, l.got, l.want)
			}
		}
	}
	if !slices.Equal(o.Epochs(), r.epochs) {
		return fmt.Errorf("epochs %v, want %v", o.Epochs(), r.epochs)
	}
	for e := range r.epochs {
		if got := o.Users(e); !slices.Equal(got, r.users[e]) && (len(got) > 0 || len(r.users[e]) > 0) {
			return fmt.Errorf("epoch %d: users %v, want %v", e, got, r.users[e])
		}
		if o.RequireCount(e) != int(r.reqCount[e]) {
			return fmt.Errorf("epoch %d: requires %d, want %d", e, o.RequireCount(e), r.reqCount[e])
		}
	}
	return nil
}

// TestPropertyOrderMatchesReference derives partial-mode orders of random schedules on both
// fabrics, in pooled memory (Run's) and on the heap (NewOrder's), with paths checked and taken
// as checked, and compares every list the walk reads, and every exported list, with the
// straightforward derivation.
func TestPropertyOrderMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := 1 << rapid.IntRange(1, 6).Draw(t, "log2n")
		rounds := rapid.IntRange(1, 8).Draw(t, "rounds")
		fabric := rapid.SampledFrom([]schedules.FabricKind{schedules.Benes, schedules.Crossbar}).Draw(t, "fabric")
		keep := rapid.SampledFrom([]float64{0.2, 0.7, 1}).Draw(t, "keep")
		seed := rapid.Uint64().Draw(t, "seed")
		s := randomSchedule(rand.New(rand.NewPCG(seed, 3)), n, rounds, fabric, schedules.Partial, keep)
		ref := refDerive(s)
		for _, pathsChecked := range []bool{false, true} {
			for _, pooled := range []bool{true, false} {
				sc := getScratch()
				o, err := newOrder(s, sc, pooled, pathsChecked)
				if err != nil {
					t.Fatal(err)
				}
				if err := checkWalkLists(o, ref); err != nil {
					t.Fatalf("pooled %v, paths checked %v: %v", pooled, pathsChecked, err)
				}
				if !pooled {
					if err := checkExportedLists(o, ref); err != nil {
						t.Fatalf("paths checked %v: %v", pathsChecked, err)
					}
				}
				sc.release()
			}
		}
	})
}
