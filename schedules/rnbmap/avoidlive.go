package rnbmap

import (
	"fmt"
	"math"

	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// AvoidLivePaths gives every circuit of plan a path through f with the AvoidLive strategy. In
// order of planned start (ties in plan order), a circuit takes, among its n/2 paths, one that uses
// no lane of any circuit live at its start (Start ≤ t < End, or an earlier-mapped circuit starting
// at t) and asks no switch such a circuit uses for the other state, given the paths those circuits
// already hold. Among the free paths it takes the one with the fewest switch state changes
// relative to the states the previously mapped circuits left (every switch starts in Bar), then
// the smallest choices. When no path is free it takes the path Paths gives it and is listed in
// Fallbacks. Like Paths it only reads the plan's intervals, never when a switch would be ready.
//
// It returns the errors Paths returns for a plan whose live sets are not partial permutations.
func AvoidLivePaths(f *benes.Fabric, plan []Circuit) (Mapping, error) {
	m := Mapping{Paths: make([]benes.Path, len(plan))}
	occ := newOccupancy(f)
	var looping []benes.Path // Paths(f, plan), computed at the first fallback
	release := func(c int) { occ.add(m.Paths[c], -1) }
	err := sweepLive(f, plan, release, func(_ float64, _, starting []int) error {
		// One at a time: each starting circuit sees the paths of those mapped before it.
		for _, c := range starting {
			if choices, ok := occ.freePath(plan[c].Src, plan[c].Dst); ok {
				m.Paths[c] = f.NewPath(plan[c].Src, plan[c].Dst, choices)
			} else {
				if looping == nil {
					var err error
					if looping, err = Paths(f, plan); err != nil {
						return err
					}
				}
				m.Paths[c] = looping[c]
				m.Fallbacks = append(m.Fallbacks, c)
			}
			occ.add(m.Paths[c], +1)
		}
		return nil
	})
	if err != nil {
		return Mapping{}, err
	}
	return m, nil
}

func checkPorts(f *benes.Fabric, plan []Circuit) error {
	n := f.Ports()
	for i, c := range plan {
		if c.Src < 0 || c.Src >= n || c.Dst < 0 || c.Dst >= n {
			return fmt.Errorf("rnbmap: circuit %d (%d->%d): port out of range [0, %d)", i, c.Src, c.Dst, n)
		}
	}
	return nil
}

// occupancy is what the live circuits hold, counted rather than flagged because a fallback path
// may share a lane or a switch in the other state with a live circuit, and releasing one of the
// two must not free what the other still holds.
type occupancy struct {
	f       *benes.Fabric
	in, out []int32       // by LaneID: live circuits entering, leaving, a switch on the lane
	users   [][2]int32    // by SwitchID: live circuits through the switch in Bar, in Cross
	last    []benes.State // by SwitchID: the state of the latest mapped circuit through it
}

func newOccupancy(f *benes.Fabric) *occupancy {
	return &occupancy{
		f:     f,
		in:    make([]int32, f.NumLanes()),
		out:   make([]int32, f.NumLanes()),
		users: make([][2]int32, f.NumSwitches()),
		last:  make([]benes.State, f.NumSwitches()),
	}
}

// add counts path as live (delta +1, which also makes its states the ones left behind) or
// releases it (delta −1).
func (o *occupancy) add(path benes.Path, delta int32) {
	for _, h := range path.All() {
		id := o.f.SwitchID(h.Stage, h.Switch)
		o.in[2*id+h.In] += delta
		o.out[2*id+h.Out] += delta
		o.users[id][h.State()] += delta
		if delta > 0 {
			o.last[id] = h.State()
		}
	}
}

// cost reports whether traversal h is free of every live circuit and whether it changes the
// switch's state.
func (o *occupancy) cost(h benes.Traversal) (free bool, changes int) {
	id := o.f.SwitchID(h.Stage, h.Switch)
	st := h.State()
	if o.in[2*id+h.In] != 0 || o.out[2*id+h.Out] != 0 || o.users[id][1-st] != 0 {
		return false, 0
	}
	if o.last[id] != st {
		return true, 1
	}
	return true, 0
}

// freePath finds the free path from src to dst with the fewest state changes, then the smallest
// choices, by a depth-first search over the levels that drops a prefix as soon as one of its
// traversals is not free or its changes exceed the best complete path's.
func (o *occupancy) freePath(src, dst int) (choices uint32, ok bool) {
	s := pathSearch{o: o, src: src, dst: dst, mid: o.f.Levels() - 1, best: math.MaxInt}
	s.visit(0, 0, 0)
	return s.choices, s.best != math.MaxInt
}

type pathSearch struct {
	o         *occupancy
	src, dst  int
	mid, best int
	choices   uint32
}

func (s *pathSearch) visit(level int, bits uint32, changes int) {
	f := s.o.f
	if level == s.mid {
		t, _ := f.LevelTraversals(s.src, s.dst, bits, level)
		free, c := s.o.cost(t)
		// Choices are compared as numbers (bit 0 is level 0), which the search order does not
		// follow, so ties are settled here rather than by the order of the visit.
		if c += changes; free && (c < s.best || c == s.best && bits < s.choices) {
			s.best, s.choices = c, bits
		}
		return
	}
	for child := range uint32(2) {
		b := bits | child<<level
		in, out := f.LevelTraversals(s.src, s.dst, b, level)
		freeIn, cIn := s.o.cost(in)
		freeOut, cOut := s.o.cost(out)
		if c := changes + cIn + cOut; freeIn && freeOut && c <= s.best {
			s.visit(level+1, b, c)
		}
	}
}
