package benes

import (
	"fmt"
)

// Tenant isolation by sub-networks (Tetris §5, "Partial reconfiguration for multi-tenant
// isolation"): the recursion of a Beneš network gives a tenant whose ports are an aligned block
// of m = 2^j ports (Lo a multiple of m) a copy of the m-port Beneš network inside the big one.
//
// Why aligned blocks. At recursion level s a path is at local port src>>s of its block (package
// doc), so the block's ports, which share every bit above j−1, meet only the switches indexed by
// their own high bits at levels s < j: switch b·(n>>(s+1)) + T·(m>>(s+1)) + x of stage s and of
// stage 2k−2−s, T = Lo/m. Those are the tenant's own, whatever the other tenants do. From level
// j on, every path of the tenant is at the same local port, T>>(s−j), of its block: it may pass
// straight (Bar, the choice at level s being bit s of its ports) or turn onto lanes another
// tenant's straight paths use.
//
// The strict allocation keeps the tenant's own switches of levels 0..j−2 and the output switches
// of level j−1 free (any state), holds the input switches of level j−1 in Bar (they are the
// tenant's alone: switch b·(n>>j) + T of stage j−1), and lets the tenant pass every switch of
// levels j.. only straight, in Bar, on its own lane. Those deeper switches are shared with the
// tenants whose blocks differ from T in the bit of that level, which use the other lane, also in
// Bar: no switch a tenant may change is ever used by another tenant, and no shared switch ever
// changes state, so one tenant's reconfigurations cannot touch another's circuits. What the
// tenant keeps is exactly an m-port Beneš network: its levels 0..j−2 are the big fabric's, and its
// middle stage (one 2×2 switch per block) is the output switch of level j−1 entered straight from
// the input switch of the same level (Embed maps the paths). So a tenant has the m/2 paths per
// pair of an m-port fabric (the shared fabric offers n/2) and can hold m concurrent circuits (every
// permutation of its ports), and every scheduler plans it as an m-port fabric.
//
// Other port sets have no strict allocation here: a block that is not aligned (or not a power of
// two) shares input or output switches with another tenant's ports at level 0 or above, whose
// states both would set.

// CheckBlock reports why ports [lo, lo+size) of f admit no strict allocation, or nil.
func (f *Fabric) CheckBlock(lo, size int) error {
	switch {
	case size < 2:
		return fmt.Errorf("ports %s: a strict allocation needs at least 2 ports (an aligned block of 2^j, j ≥ 1)", PortRange(lo, size))
	case size&(size-1) != 0:
		return fmt.Errorf("ports %s: %d ports is not a power of two; a strict allocation is an aligned block of 2^j ports (the sub-Beneš of the recursion)", PortRange(lo, size), size)
	case lo%size != 0:
		return fmt.Errorf("ports %s: a block of %d ports must start at a multiple of %d to be a sub-Beneš (e.g. %s)", PortRange(lo, size), size, size, PortRange(lo/size*size, size))
	case lo < 0 || lo+size > f.n:
		return fmt.Errorf("ports %s: not within the %d-port fabric", PortRange(lo, size), f.n)
	}
	return nil
}

// PortRange writes ports [lo, lo+size) as "lo-hi" ("5" for one port).
func PortRange(lo, size int) string {
	if size == 1 {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, lo+size-1)
}

// Embed maps a path of the size-port Beneš network (src', dst' in [0, size)) to the path of f
// that the strict allocation of block [lo, lo+size) gives it: the same choices at levels
// 0..j−2, straight (Bar) through the input switch of level j−1 and every switch below. The
// block must pass CheckBlock and p must be a physical path of the size-port fabric.
func (f *Fabric) Embed(lo, size int, src, dst int, p Path) Path {
	j := bitsLen(size) - 1
	var c uint32
	for s, t := range p.All() {
		if s < j-1 {
			c |= uint32(t.Out&1) << s
		}
	}
	gs := lo + src
	// Levels j−1 .. k−2 go straight: the choice is the port's own bit there.
	mask := uint32(1)<<(f.k-1) - 1
	straight := uint32(gs) >> (j - 1) << (j - 1)
	return f.NewPath(gs, lo+dst, (c|straight)&mask)
}

// StrictUse says how the strict allocation of block [lo, lo+size) lets a circuit of the tenant
// traverse t: free (any state), only in Bar (held), or not at all.
func (f *Fabric) StrictUse(lo, size int, t Traversal) (allowed, barOnly bool) {
	j := bitsLen(size) - 1
	if j >= f.k {
		return true, false // the whole fabric
	}
	s, input := t.Stage, true
	if s > f.k-1 {
		s, input = 2*f.k-2-s, false
	}
	half := f.n >> (s + 1)
	if s == f.k-1 {
		half = 1
	}
	local := t.Switch % half // the switch within its block of level s
	T := lo / size
	switch {
	case s < j-1:
		// Own switches: T·(m>>(s+1)) .. +(m>>(s+1)) within the block.
		w := size >> (s + 1)
		return local/w == T, false
	case s == j-1:
		if local != T {
			return false, false
		}
		if input {
			return true, true
		}
		return true, false
	}
	// Levels j..: the tenant's local port is T>>(s−j): its switch and lane.
	port := T >> (s - j)
	lane := t.In
	if !input || s == f.k-1 {
		lane = t.Out
	}
	if s == f.k-1 {
		// The middle stage: one switch per block, entered and left on the port's lane.
		return t.In == port&1 && t.Out == port&1, true
	}
	return local == port>>1 && lane == port&1 && t.In == t.Out, true
}

func bitsLen(x int) int {
	n := 0
	for ; x > 0; x >>= 1 {
		n++
	}
	return n
}
