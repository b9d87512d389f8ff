package emulator

import (
	"math/bits"

	"github.com/tetris-hil/tetris-hil/schedules"
	"github.com/tetris-hil/tetris-hil/schedules/benes"
)

// hops is the one place the emulator reads a circuit's path: its traversals, one per stage,
// expanded from the compact benes.Path into buf (room for benes.MaxStages; the caller reuses it
// from circuit to circuit, so reading a path allocates nothing).
func hops(c *schedules.Circuit, buf []benes.Traversal) []benes.Traversal {
	return c.Path.AppendTo(buf)
}

// wiring is the Beneš interconnection between stages as shifts and masks, so that checking a
// path costs a few instructions a hop: benes.Fabric.Next divides by block sizes that the
// compiler cannot know are powers of two, and the order's pass calls it once per hop.
type wiring struct {
	n, k, last int
}

func newWiring(f *benes.Fabric) wiring {
	return wiring{n: f.Ports(), k: bits.TrailingZeros(uint(f.Ports())), last: f.Stages() - 1}
}

// next is benes.Fabric.Next for a stage before the last: the switch and input lane of stage
// stage+1 that output lane out of switch sw of stage leads to.
func (w wiring) next(stage, sw, out int) (nsw, nin int) {
	if stage < w.k-1 {
		return nextIn(uint(w.k-1-stage), sw, out)
	}
	return nextOut(uint(stage-w.k+1), sw, out)
}

// nextIn is next on the input side, where blocks have 2^sh switches (Fabric.Next's half).
// Shift counts are masked to 63 (they are below 20) so that they compile to single shifts, and
// the function stays small enough to inline.
func nextIn(sh uint, sw, out int) (nsw, nin int) {
	sh &= 63
	b, j := sw>>sh, sw&(1<<sh-1)
	return (2*b+out)<<((sh-1)&63) + j>>1, j & 1
}

// nextOut is next in the middle and on the output side, at recursion level 2k−2−stage, where
// child blocks have 2^sh switches.
func nextOut(sh uint, sw, out int) (nsw, nin int) {
	sh &= 63
	c, j := sw>>sh, sw&(1<<sh-1)
	return (c>>1)<<((sh+1)&63) + 2*j + out, c & 1
}

// physical says whether p is a physical path from src to dst: exactly when
// benes.Fabric.CheckPath accepts it (which then says why not), at a fraction of its cost.
func (w wiring) physical(src, dst int, p []benes.Traversal) bool {
	if uint(src) >= uint(w.n) || uint(dst) >= uint(w.n) || len(p) != w.last+1 {
		return false
	}
	sw, in, ok := src>>1, src&1, false
	for i := range p {
		if sw, in, ok = w.step(i, &p[i], sw, in, dst); !ok {
			return false
		}
	}
	return ok
}

// step checks hop h of a path against where the wiring leads (switch sw, input lane in) and
// returns where its output lane leads next; at the last stage ok also needs that lane to be
// port dst. Every check of a hop list hop by hop goes through it.
func (w wiring) step(h int, t *benes.Traversal, sw, in, dst int) (nsw, nin int, ok bool) {
	if t.Stage != h || t.Switch != sw || t.In != in || uint(t.Out) > 1 {
		return 0, 0, false
	}
	if h == w.last {
		return 0, 0, 2*sw+t.Out == dst
	}
	nsw, nin = w.next(h, sw, t.Out)
	return nsw, nin, true
}
