package benes

import (
	"fmt"
	"math/bits"
)

// Conn is one connection to route: input port Src to output port Dst (global ports).
type Conn struct{ Src, Dst int }

// Component is one connected set of routing constraints at one block of one recursion level
// (Tetris §3.2). Under orientation 0, connection Conns[i] goes to child Child0[i] (0 upper,
// 1 lower); orientation 1 flips every one. Conns is ordered by local input port, so Conns[0] is
// the connection with the smallest local input port, and orientation 0 always sends it upper.
// Route never reuses the slices after the Chooser returns, so a Chooser may keep them.
type Component struct {
	Level, Block int
	Conns        []int // indices into the conns slice given to Route
	Child0       []uint8
}

// Chooser picks an orientation (false = orientation 0, true = flipped) for a component. choices
// holds, for every connection, the bits already fixed: all levels below c.Level, and level c.Level
// for the components decided before this one. It must not modify choices. Route calls it level by
// level from the root (level 0), blocks in order, and within a block by smallest local input port.
type Chooser func(c Component, choices []uint32) (flip bool)

// Route routes a partial permutation with the looping algorithm: at every block of every recursion
// level the connections are split between the upper and lower child so that no input or output
// switch sends two connections to the same child. Two connections whose local input ports share an
// input switch take opposite children, as do two whose local output ports share an output switch;
// these constraints form paths and even cycles, so each component has exactly two legal
// orientations, and choose picks one (nil: orientation 0 everywhere, plain looping). No two conns
// may share a Src or a Dst. The result holds the choices of every connection (see PathFrom).
func (f *Fabric) Route(conns []Conn, choose Chooser) ([]uint32, error) {
	return f.NewRouter().Route(conns, choose)
}

// Router is Fabric.Route for a caller that routes one matching after another on the same fabric
// (Tetris routes one per iteration): it keeps its working memory between calls, which at small n
// costs more to allocate than the routing does. The choices a Route call returns and the
// Component slices it hands to the Chooser are valid until the next call of the same Router. A
// Router is not safe for concurrent use.
type Router struct {
	r router
}

// NewRouter returns a Router for f.
func (f *Fabric) NewRouter() *Router { return &Router{r: router{f: f}} }

// Route is Fabric.Route, reusing the Router's memory.
func (rt *Router) Route(conns []Conn, choose Chooser) ([]uint32, error) {
	r := &rt.r
	f := r.f
	n := f.n
	for i, c := range conns {
		if c.Src < 0 || c.Src >= n || c.Dst < 0 || c.Dst >= n {
			return nil, fmt.Errorf("benes: connection %d (%d->%d): port out of range [0, %d)", i, c.Src, c.Dst, n)
		}
	}
	r.conns = conns
	r.choices = grow(r.choices, len(conns))
	clear(r.choices)
	if choose != nil && f.k > 1 {
		// The components of every level, in one backing array each; the levels' parts never
		// overlap.
		r.compConns = grow(r.compConns, len(conns)*(f.k-1))
		r.compChild = grow(r.compChild, len(conns)*(f.k-1))
		r.off = grow(r.off, 2*len(conns)+1)
	}
	if err := r.init(); err != nil {
		return nil, err
	}
	for s := 0; s < f.k-1; s++ {
		r.level(s, choose)
		r.descend(s)
	}
	return r.choices, nil
}

// grow returns b resized to n elements, reallocating only when its capacity is short; the
// contents are not preserved.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// RoutePaths routes conns with plain looping and returns every connection's traversals.
func (f *Fabric) RoutePaths(conns []Conn) ([][]Traversal, error) {
	choices, err := f.Route(conns, nil)
	if err != nil {
		return nil, err
	}
	paths := make([][]Traversal, len(conns))
	for i, c := range conns {
		paths[i] = f.PathFrom(c.Src, c.Dst, choices[i])
	}
	return paths, nil
}

// LevelTraversals returns the input-stage and output-stage traversals at recursion level level of
// the path (src, dst, choices); only bits 0..level of choices matter, and 0 ≤ level ≤ k−1. At the
// middle level (k−1) both are the one middle-stage traversal. Tetris costs a component's
// orientations with it without building whole paths.
func (f *Fabric) LevelTraversals(src, dst int, choices uint32, level int) (in, out Traversal) {
	k := f.k
	// The block at this level is the sequence of earlier choices read with bit 0 most significant
	// (block b's children are 2b and 2b+1); local ports at level s are the global ports >> s.
	b := int(blockOf(choices, level))
	lin, lout := src>>level, dst>>level
	if level == k-1 {
		t := Traversal{Stage: level, Switch: b, In: lin & 1, Out: lout & 1}
		return t, t
	}
	c := int(choices>>level) & 1
	half := f.n >> (level + 1)
	in = Traversal{Stage: level, Switch: b*half + lin>>1, In: lin & 1, Out: c}
	out = Traversal{Stage: 2*k - 2 - level, Switch: b*half + lout>>1, In: c, Out: lout & 1}
	return in, out
}

// blockOf is the index of the block a path with these choices passes through at level s.
func blockOf(choices uint32, s int) uint32 {
	if s == 0 {
		return 0
	}
	return bits.Reverse32(choices) >> (32 - s)
}

// router is the working state of one Route call. At level s the ports of all blocks are laid out
// side by side: slot = block·m + local port, m = n>>s, so slots run over [0, n) at every level and
// scanning them in order visits blocks in order and, within a block, local ports in order.
type router struct {
	f       *Fabric
	conns   []Conn
	choices []uint32

	atIn, atOut     []int32 // slot -> connection index, or -1
	slotIn, slotOut []int32 // connection -> its slot at the current level
	child           []uint8 // connection -> child under orientation 0 at the current level
	comp            []int32 // connection -> component index at the current level, -1 before it is reached

	// Backing arrays of the components handed to the Chooser (one part per level, kept) and of
	// choose's offsets (reused per level).
	compConns []int
	compChild []uint8
	off       []int
	// slots backs atIn, atOut, slotIn, slotOut and comp.
	slots []int32
}

func (r *router) init() error {
	n, c := r.f.n, len(r.conns)
	r.slots = grow(r.slots, 2*n+2*c+c)
	slots := r.slots
	r.atIn, r.atOut = slots[:n:n], slots[n:2*n:2*n]
	r.slotIn, r.slotOut = slots[2*n:2*n+c:2*n+c], slots[2*n+c:2*n+2*c:2*n+2*c]
	r.comp = slots[2*n+2*c:]
	r.child = grow(r.child, c)
	for i := range n {
		r.atIn[i], r.atOut[i] = -1, -1
	}
	for i := range r.comp {
		r.comp[i] = -1
	}
	for i, cn := range r.conns {
		if j := r.atIn[cn.Src]; j >= 0 {
			return fmt.Errorf("benes: connections %d (%d->%d) and %d (%d->%d) share input port %d",
				j, r.conns[j].Src, r.conns[j].Dst, i, cn.Src, cn.Dst, cn.Src)
		}
		if j := r.atOut[cn.Dst]; j >= 0 {
			return fmt.Errorf("benes: connections %d (%d->%d) and %d (%d->%d) share output port %d",
				j, r.conns[j].Src, r.conns[j].Dst, i, cn.Src, cn.Dst, cn.Dst)
		}
		r.atIn[cn.Src], r.atOut[cn.Dst] = int32(i), int32(i)
		r.slotIn[i], r.slotOut[i] = int32(cn.Src), int32(cn.Dst)
	}
	return nil
}

// level colours every component at level s (orientation 0) and fixes bit s of every connection,
// asking choose for each component's orientation when it is not nil.
func (r *router) level(s int, choose Chooser) {
	n := r.f.n
	ncomp := int32(0)
	for slot := range n {
		if i := r.atIn[slot]; i >= 0 && r.comp[i] < 0 {
			r.walk(i, ncomp)
			ncomp++
		}
	}
	if choose == nil {
		for i := range r.conns {
			r.choices[i] |= uint32(r.child[i]) << s
		}
		return
	}
	r.choose(s, int(ncomp), choose)
}

// walk colours the component containing start, which has the smallest slot of its component, with
// start on the upper child. Every connection has at most one partner on its input switch and one on
// its output switch, so the component is a path or a cycle whose edges alternate between the two
// kinds; it is walked from start first along the output edge, then, unless it closed into a cycle,
// along the input edge. Colours alternate at every step.
func (r *router) walk(start, id int32) {
	r.comp[start], r.child[start] = id, 0
	if !r.follow(start, id, true) {
		r.follow(start, id, false)
	}
}

// follow colours the connections reached from start, leaving first by its output edge (viaOut) or
// its input edge, and reports whether the walk came back to start (a cycle).
func (r *router) follow(start, id int32, viaOut bool) (cycle bool) {
	cur, col := start, uint8(0)
	for {
		var next int32
		if viaOut {
			next = r.atOut[r.slotOut[cur]^1]
		} else {
			next = r.atIn[r.slotIn[cur]^1]
		}
		if next < 0 {
			return false
		}
		if next == start {
			return true
		}
		col ^= 1
		r.comp[next], r.child[next] = id, col
		cur, viaOut = next, !viaOut
	}
}

// choose gathers the components of level s (in slot order of their connections) and applies the
// orientation the Chooser picks for each.
func (r *router) choose(s, ncomp int, choose Chooser) {
	n, c := r.f.n, len(r.conns)
	// One part of the backing arrays per level: components are disjoint, so their sub-slices
	// never overlap and a Chooser may keep them.
	conns := r.compConns[s*c : (s+1)*c : (s+1)*c]
	child0 := r.compChild[s*c : (s+1)*c : (s+1)*c]
	off := r.off[:ncomp+1]
	clear(off)
	for i := range c {
		off[r.comp[i]+1]++
	}
	for j := 1; j <= ncomp; j++ {
		off[j] += off[j-1]
	}
	fill := r.off[ncomp+1 : 2*ncomp+1]
	copy(fill, off[:ncomp])
	for slot := range n {
		i := r.atIn[slot]
		if i < 0 {
			continue
		}
		k := r.comp[i]
		conns[fill[k]], child0[fill[k]] = int(i), r.child[i]
		fill[k]++
	}
	shift := r.f.k - s
	for j := range ncomp {
		lo, hi := off[j], off[j+1]
		comp := Component{
			Level:  s,
			Block:  int(r.slotIn[conns[lo]]) >> shift,
			Conns:  conns[lo:hi:hi],
			Child0: child0[lo:hi:hi],
		}
		flip := uint8(0)
		if choose(comp, r.choices) {
			flip = 1
		}
		for t := lo; t < hi; t++ {
			r.choices[conns[t]] |= uint32(child0[t]^flip) << s
		}
	}
}

// descend moves every connection from level s to its child block at level s+1: the child's local
// input port is the parent's input switch index (local port >> 1), likewise for outputs.
func (r *router) descend(s int) {
	m := int32(r.f.n >> s)
	half := m / 2
	for i := range r.conns {
		r.atIn[r.slotIn[i]], r.atOut[r.slotOut[i]] = -1, -1
	}
	for i := range r.conns {
		c := int32(r.choices[i]>>s) & 1
		in, out := r.slotIn[i], r.slotOut[i]
		in = in&^(m-1) | c*half | (in&(m-1))>>1
		out = out&^(m-1) | c*half | (out&(m-1))>>1
		r.slotIn[i], r.slotOut[i] = in, out
		r.atIn[in], r.atOut[out] = int32(i), int32(i)
		r.comp[i] = -1
	}
}
