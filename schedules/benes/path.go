package benes

import (
	"encoding/json"
	"fmt"
	"iter"
	"slices"
)

// Path is a route through a Beneš fabric, as compact as the structure allows: a physical path is
// fixed by its input port, its output port and one upper/lower choice per recursion level (see
// PathFrom), so it fits in one uint64 with no heap allocation, and a schedule of millions of
// circuits holds 16 bytes per path instead of 2·log2(n)−1 traversals of four ints.
//
// A hop list that is not a physical Beneš path (it comes only from a file being verified: the
// wrong length, a broken wire, out-of-range lanes) is kept exactly as given, so that the verifier
// reports it exactly. The zero Path is the absent path (JSON null), distinct from the empty one
// (JSON [], a crossbar circuit's). A Path is immutable: its methods return copies.
type Path struct {
	// v holds a compact path: k (5 bits) | src (20) | dst (20) | choices (19), with k ≥ 1.
	// With k = 0 it is 0 for the absent path and 1 for the empty one.
	v uint64
	// raw is a hop list that is not a physical path, as given; nil otherwise.
	raw *[]Traversal
}

// MaxStages is the number of stages, so of traversals on a path, of the largest fabric (MaxPorts).
const MaxStages = 2*20 - 1

const (
	pathKShift   = 59
	pathSrcShift = 39
	pathDstShift = 19
	pathPortMask = 1<<20 - 1
	pathChoMask  = 1<<19 - 1
	pathEmpty    = 1
)

// NewPath is the path PathFrom(src, dst, choices) builds, in compact form: bits of choices at
// and above level k−1 do not change the path and are dropped. A port outside [0, n) makes no
// physical path; NewPath then keeps the traversals PathFrom would give, as they are.
func (f *Fabric) NewPath(src, dst int, choices uint32) Path {
	if src < 0 || src >= f.n || dst < 0 || dst >= f.n {
		return PathOf(f.PathFrom(src, dst, choices))
	}
	return compactPath(f.k, src, dst, choices)
}

func compactPath(k, src, dst int, choices uint32) Path {
	choices &= 1<<(k-1) - 1
	return Path{v: uint64(k)<<pathKShift | uint64(src)<<pathSrcShift | uint64(dst)<<pathDstShift | uint64(choices)}
}

// EmptyPath is the path of no traversals, a crossbar circuit's (JSON []).
func EmptyPath() Path { return Path{v: pathEmpty} }

// PathOf is the Path of the hop list ts: compact when ts is a physical path of the Beneš fabric
// whose stage count is len(ts), otherwise a copy of ts kept as it is. PathOf(nil) is the absent
// path and PathOf of an empty non-nil slice the empty one, as in JSON.
func PathOf(ts []Traversal) Path {
	if p, ok := compactOf(ts); ok {
		return p
	}
	own := append([]Traversal(nil), ts...)
	return Path{raw: &own}
}

// FromOwned is PathOf for a hop list that the caller hands over and never uses again (a decoded
// file's): one kept as given is not copied.
func FromOwned(ts []Traversal) Path {
	if p, ok := compactOf(ts); ok {
		return p
	}
	// A new variable: taking the parameter's address would move it to the heap on every call.
	own := new([]Traversal)
	*own = ts
	return Path{raw: own}
}

// compactOf compresses ts when it is canonical: read src, dst and the choices off it, rebuild the
// path from them and compare hop by hop, so that a compact path always expands to exactly ts.
func compactOf(ts []Traversal) (Path, bool) {
	switch {
	case ts == nil:
		return Path{}, true
	case len(ts) == 0:
		return EmptyPath(), true
	case len(ts)%2 == 0 || len(ts) > MaxStages:
		return Path{}, false
	}
	k := (len(ts) + 1) / 2
	half := 1 << (k - 1)
	first, last := ts[0], ts[len(ts)-1]
	if first.Switch < 0 || first.Switch >= half || first.In&^1 != 0 || last.Switch < 0 || last.Switch >= half || last.Out&^1 != 0 {
		return Path{}, false
	}
	var choices uint32
	for s := 0; s < k-1; s++ {
		if ts[s].Out&^1 != 0 {
			return Path{}, false
		}
		choices |= uint32(ts[s].Out) << s
	}
	p := compactPath(k, 2*first.Switch+first.In, 2*last.Switch+last.Out, choices)
	var buf [MaxStages]Traversal
	if !slices.Equal(p.AppendTo(buf[:0]), ts) {
		return Path{}, false
	}
	return p, true
}

// IsNil reports whether p is the absent path (JSON null).
func (p Path) IsNil() bool { return p.raw == nil && p.v == 0 }

// levels is k of a compact path, 0 otherwise.
func (p Path) levels() int { return int(p.v >> pathKShift) }

// Compact returns the ports and choices of a physical path and the number of recursion levels
// k of its fabric (n = 2^k); ok is false for the absent, empty and kept-as-given paths.
func (p Path) Compact() (src, dst int, choices uint32, k int, ok bool) {
	k = p.levels()
	if p.raw != nil || k == 0 {
		return 0, 0, 0, 0, false
	}
	return int(p.v>>pathSrcShift) & pathPortMask, int(p.v>>pathDstShift) & pathPortMask, uint32(p.v) & pathChoMask, k, true
}

// Len is the number of traversals.
func (p Path) Len() int {
	if p.raw != nil {
		return len(*p.raw)
	}
	if k := p.levels(); k > 0 {
		return 2*k - 1
	}
	return 0
}

// At is traversal i, 0 ≤ i < Len().
func (p Path) At(i int) Traversal {
	if p.raw != nil {
		return (*p.raw)[i]
	}
	if i < 0 || i >= p.Len() {
		panic(fmt.Sprintf("benes: traversal %d of a path of %d", i, p.Len()))
	}
	var buf [MaxStages]Traversal
	return p.AppendTo(buf[:0])[i]
}

// All yields the traversals with their indices, in path order.
func (p Path) All() iter.Seq2[int, Traversal] {
	return func(yield func(int, Traversal) bool) {
		if p.raw != nil {
			for i, t := range *p.raw {
				if !yield(i, t) {
					return
				}
			}
			return
		}
		p.walk(yield)
	}
}

// walk yields the traversals of a compact path in order, as AppendTo computes them. It is the
// one copy of AppendTo's loops kept: All over a stack buffer filled by AppendTo reads 1024 paths
// of 13 hops in 75 µs instead of 42 (zeroing and copying the buffer), and schedules.Verify,
// which reads every hop through All, took 15 % longer.
func (p Path) walk(yield func(int, Traversal) bool) {
	k := p.levels()
	if k == 0 {
		return
	}
	src, dst, choices := int(p.v>>pathSrcShift)&pathPortMask, int(p.v>>pathDstShift)&pathPortMask, int(p.v)&pathChoMask
	b := 0
	for s := 0; s < k-1; s++ {
		lin, c := src>>s, (choices>>s)&1
		if !yield(s, Traversal{Stage: s, Switch: b<<(k-1-s) + lin>>1, In: lin & 1, Out: c}) {
			return
		}
		b = 2*b + c
	}
	if !yield(k-1, Traversal{Stage: k - 1, Switch: b, In: (src >> (k - 1)) & 1, Out: (dst >> (k - 1)) & 1}) {
		return
	}
	for s := k - 2; s >= 0; s-- {
		c := b & 1
		b >>= 1
		lout := dst >> s
		if !yield(2*k-2-s, Traversal{Stage: 2*k - 2 - s, Switch: b<<(k-1-s) + lout>>1, In: c, Out: lout & 1}) {
			return
		}
	}
}

// AppendTo appends the traversals to buf and returns the extended slice. A hot loop over many
// paths reads them fastest through one reused buffer (no call per hop, unlike All):
//
//	var buf [benes.MaxStages]benes.Traversal
//	for _, c := range circuits {
//		for _, t := range c.Path.AppendTo(buf[:0]) { ... }
//	}
func (p Path) AppendTo(buf []Traversal) []Traversal {
	if p.raw != nil {
		return append(buf, *p.raw...)
	}
	k := p.levels()
	if k == 0 {
		return buf
	}
	n := len(buf)
	buf = slices.Grow(buf, 2*k-1)[:n+2*k-1]
	h := buf[n:]
	// The hops are computed in order, carrying the block from level to level rather than
	// recomputing it (the emulator reads every hop of every circuit): at recursion level s the
	// path is at local input port src>>s and local output port dst>>s, and the level's input
	// switch is stage s, its output switch stage 2k−2−s; going in, the child block is
	// 2·block + choice; coming out, the parent is block>>1 and the choice its low bit.
	src, dst, choices := int(p.v>>pathSrcShift)&pathPortMask, int(p.v>>pathDstShift)&pathPortMask, int(p.v)&pathChoMask
	last := 2*k - 2
	b := 0
	for s := 0; s < k-1; s++ {
		lin, c := src>>s, (choices>>s)&1
		h[s] = Traversal{Stage: s, Switch: b<<(k-1-s) + lin>>1, In: lin & 1, Out: c}
		b = 2*b + c
	}
	h[k-1] = Traversal{Stage: k - 1, Switch: b, In: (src >> (k - 1)) & 1, Out: (dst >> (k - 1)) & 1}
	for s := k - 2; s >= 0; s-- {
		c := b & 1
		b >>= 1
		lout := dst >> s
		h[last-s] = Traversal{Stage: last - s, Switch: b<<(k-1-s) + lout>>1, In: c, Out: lout & 1}
	}
	return buf
}

// Traversals is the hop list as a new slice: nil for the absent path, empty and non-nil for the
// empty one.
func (p Path) Traversals() []Traversal {
	if p.IsNil() {
		return nil
	}
	return p.AppendTo(make([]Traversal, 0, p.Len()))
}

// Equal reports whether p and q have the same traversals (as slices.Equal compares hop lists:
// the absent and the empty path are equal).
func (p Path) Equal(q Path) bool {
	if p.raw == nil && q.raw == nil && p.levels() > 0 && q.levels() > 0 {
		return p.v == q.v
	}
	var pb, qb [MaxStages]Traversal
	return slices.Equal(p.AppendTo(pb[:0]), q.AppendTo(qb[:0]))
}

// Format prints the path as its []Traversal would print, for every verb.
func (p Path) Format(s fmt.State, verb rune) {
	fmt.Fprintf(s, fmt.FormatString(s, verb), p.Traversals())
}

// MarshalJSON writes the hop list exactly as a []Traversal marshals: null, [] or
// [[stage,switch,in,out],...].
func (p Path) MarshalJSON() ([]byte, error) {
	if p.IsNil() {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 2+10*p.Len())
	b = append(b, '[')
	for i, t := range p.All() {
		if i > 0 {
			b = append(b, ',')
		}
		b = t.appendJSON(b)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads what a []Traversal reads (null, or an array of traversals), with its errors.
// Schedule files do not come this way: ReadSchedule decodes hop lists as []Traversal so that its
// errors keep their line and column in the file.
func (p *Path) UnmarshalJSON(b []byte) error {
	var ts []Traversal
	if err := json.Unmarshal(b, &ts); err != nil {
		return err
	}
	*p = FromOwned(ts)
	return nil
}
